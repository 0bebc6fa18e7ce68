/**
 * Naming MCP tools for model providers, and converting MCP tool results (MCP specification
 * 2025-06-18, Tools: content blocks, structuredContent, isError).
 */
import { describe, expect, it } from 'vitest';
import { assignToolName, MAX_TOOL_NAME_LENGTH } from '../../src/mcp/tool-names.js';
import { toToolResult } from '../../src/mcp/tool-result.js';

describe('assignToolName', () => {
  it('joins server and tool as mcp__<server>__<tool>', () => {
    expect(assignToolName('filesystem', 'read_text_file', new Set())).toBe('mcp__filesystem__read_text_file');
    expect(assignToolName('everything', 'get-tiny-image', new Set())).toBe('mcp__everything__get-tiny-image');
  });

  it('replaces characters providers refuse with "_"', () => {
    expect(assignToolName('github', 'repos.list/all files', new Set())).toBe('mcp__github__repos_list_all_files');
  });

  it('shortens a name over 64 characters and ends it with a stable hash', () => {
    const tool = 'a_tool_with_a_very_long_name_that_goes_on_and_on_and_on_and_on';
    const name = assignToolName('server', tool, new Set());
    expect(name).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(name).toMatch(/^mcp__server__a_tool_with_a_very_long_name_.*_[0-9a-f]{8}$/);
    expect(assignToolName('server', tool, new Set())).toBe(name);
    expect(assignToolName('server', `${tool}_2`, new Set())).not.toBe(name);
  });

  it('keeps names unique when two tools sanitise alike', () => {
    const taken = new Set<string>();
    const first = assignToolName('s', 'a.b', taken);
    const second = assignToolName('s', 'a_b', taken);
    expect(first).toBe('mcp__s__a_b');
    expect(second).toMatch(/^mcp__s__a_b_[0-9a-f]{8}$/);
    expect(taken).toEqual(new Set([first, second]));
  });
});

describe('toToolResult', () => {
  it('joins text blocks and keeps the error flag', () => {
    expect(toToolResult({ content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }], isError: true })).toEqual({ output: 'one\ntwo', isError: true });
    expect(toToolResult({ content: [] })).toEqual({ output: '', isError: false });
  });

  it('keeps images and audio as structured content with a placeholder for the model', () => {
    const result = toToolResult({
      content: [
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
      ],
    });
    expect(result).toEqual({
      output: '[image image/png, 8 bytes]\n[audio audio/wav, 4 bytes]',
      isError: false,
      structured: { images: [{ mediaType: 'image/png', data: 'iVBORw0KGgo=' }], audio: [{ mediaType: 'audio/wav', data: 'UklGRg==' }] },
    });
  });

  it('describes resource links and embedded resources', () => {
    const result = toToolResult({
      content: [
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
        { type: 'resource', resource: { uri: 'file:///b.txt', text: 'bee' } },
        { type: 'resource', resource: { uri: 'file:///c.bin', mimeType: 'application/gzip', blob: 'AAAA' } },
      ],
    });
    expect(result.output).toBe('[resource link: a.txt file:///a.txt]\n[resource file:///b.txt]\nbee\n[resource file:///c.bin application/gzip, 3 bytes]');
  });

  it('keeps structuredContent, and shows it as JSON when no block carried text', () => {
    expect(toToolResult({ content: [], structuredContent: { count: 3 } })).toEqual({ output: '{"count":3}', isError: false, structured: { structuredContent: { count: 3 } } });
    expect(toToolResult({ content: [{ type: 'text', text: 'three' }], structuredContent: { count: 3 } }).output).toBe('three');
  });

  it('accepts the old toolResult shape and names block types it does not know', () => {
    expect(toToolResult({ toolResult: { ok: true } })).toEqual({ output: '{"ok":true}', isError: false });
    expect(toToolResult({ content: [{ type: 'hologram' } as never] }).output).toBe('[hologram content]');
  });
});
