/**
 * Naming MCP tools for model providers, and converting MCP tool results (MCP specification
 * 2025-06-18, Tools: content blocks, structuredContent, isError).
 */
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { MAX_TOOL_NAME_LENGTH, mcpToolName, nameServerTools } from '../../src/mcp/tool-names.js';
import { toToolResult } from '../../src/mcp/tool-result.js';

describe('MCP tool names', () => {
  const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 8);

  it('joins server and tool as mcp__<server>__<tool> when the tool name is allowed as it is', () => {
    expect(mcpToolName('filesystem', 'read_text_file')).toBe('mcp__filesystem__read_text_file');
    expect(mcpToolName('everything', 'get-tiny-image')).toBe('mcp__everything__get-tiny-image');
  });

  it('replaces characters providers refuse with "_" and adds the hash of the original name', () => {
    expect(mcpToolName('github', 'repos.list/all files')).toBe(`mcp__github__repos_list_all_files_${sha('repos.list/all files')}`);
  });

  it('shortens a name over 64 characters and ends it with a stable hash', () => {
    const tool = 'a_tool_with_a_very_long_name_that_goes_on_and_on_and_on_and_on';
    const name = mcpToolName('server', tool);
    expect(name).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(name).toBe(`mcp__server__a_tool_with_a_very_long_name_that_goes_on__${sha(tool)}`);
    expect(mcpToolName('server', `${tool}_2`)).not.toBe(name);
  });

  it('gives each tool the same name whatever order the server lists them in', () => {
    const forward = nameServerTools('s', ['a.b', 'a_b', 'a/b']);
    const backward = nameServerTools('s', ['a/b', 'a_b', 'a.b']);
    expect(new Map([...backward.names].sort())).toEqual(new Map([...forward.names].sort()));
    expect(forward.names.get('mcp__s__a_b')).toBe('a_b');
    expect(forward.names.get(`mcp__s__a_b_${sha('a.b')}`)).toBe('a.b');
    expect(forward.names.get(`mcp__s__a_b_${sha('a/b')}`)).toBe('a/b');
    expect(forward.clashing).toEqual([]);
  });

  it("leaves out both tools when one's own name is another's hashed form", () => {
    const lookalike = `a_b_${sha('a.b')}`;
    const { names, clashing } = nameServerTools('s', [lookalike, 'a.b', 'c']);
    expect([...names.values()]).toEqual(['c']);
    expect(clashing.sort()).toEqual([lookalike, 'a.b'].sort());
  });

  it('never gives a name over 64 characters or with a refused character', () => {
    for (const tool of ['x'.repeat(200), 'é'.repeat(70), 'ns:tool', '']) {
      expect(mcpToolName('a-server_name', tool)).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    }
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
