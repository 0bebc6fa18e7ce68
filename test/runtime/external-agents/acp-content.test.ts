/**
 * What an external ACP agent sends as content keeps its substance in the stored text: an
 * embedded file's contents under a line naming it, images, audio and binary resources as
 * placeholders with their type and size.
 */
import { expect, it } from 'vitest';
import { textOfBlocks } from '../../../src/runtime/external-agents/acp-updates.js';

it('keeps an embedded text resource and names the rest by type and size', () => {
  const text = textOfBlocks([
    { type: 'text', text: 'Here is the file:\n' },
    { type: 'resource', resource: { uri: 'file:///home/user/project/notes.md', text: '# Notes\nship it\n' } },
    { type: 'image', mimeType: 'image/png', data: 'AAAAAA==' },
    { type: 'resource', resource: { uri: 'file:///home/user/project/logo.bin', blob: 'AAAA', mimeType: 'application/octet-stream' } },
    { type: 'resource_link', name: 'spec', uri: 'https://example.org/spec' },
  ]);
  expect(text).toBe('Here is the file:\n[contents of file:///home/user/project/notes.md]\n# Notes\nship it\n[image image/png, 4 bytes][resource file:///home/user/project/logo.bin, application/octet-stream, 3 bytes]https://example.org/spec');
});
