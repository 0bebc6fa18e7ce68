import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { createReadFileTool, readFileTool } from '../../src/tools/read-file.js';
import type { ToolContext } from '../../src/tools/tool.js';

let root: string;
let context: ToolContext;

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'read-file-')));
  context = { workspace: new Workspace(new LocalExecutor({ name: 'local' }), root), signal: new AbortController().signal };
  await writeFile(path.join(root, 'three.txt'), 'alpha\nbeta\ngamma\n');
  await writeFile(path.join(root, 'twelve.txt'), Array.from({ length: 12 }, (_, index) => `row ${index + 1}`).join('\n'));
  await mkdir(path.join(root, 'sub'));
  await writeFile(path.join(root, 'sub', 'crlf.txt'), 'one\r\ntwo\r\n');
});

afterAll(async () => {
  await context.workspace.executor.close();
  await rm(root, { recursive: true, force: true });
});

/** Lines `from`..`to` of `twelve.txt` as read_file is specified to number them. */
function numbered(from: number, to: number): string {
  const lines: string[] = [];
  for (let line = from; line <= to; line += 1) lines.push(`${' '.repeat(6 - String(line).length)}${line}\trow ${line}`);
  return lines.join('\n');
}

describe('read_file', () => {
  it('returns every line prefixed with its right-aligned number and a tab', async () => {
    const result = await readFileTool.invoke({ path: 'three.txt' }, context);
    expect(result.isError).toBe(false);
    expect(result.output).toBe('     1\talpha\n     2\tbeta\n     3\tgamma');
  });

  it('says arguments that are not JSON are not JSON, and reads arguments encoded twice', async () => {
    const broken = await readFileTool.invoke('{not json' as never, context);
    expect(broken.isError).toBe(true);
    expect(broken.output).toMatch(/^read_file: arguments: not valid JSON \(.+\); they were: \{not json$/);
    const twice = await readFileTool.invoke(JSON.stringify({ path: 'three.txt' }) as never, context);
    expect(twice.isError).toBe(false);
    expect(twice.output).toBe('     1\talpha\n     2\tbeta\n     3\tgamma');
    // JSON that is no object is still told its type.
    expect((await readFileTool.invoke('"three.txt"' as never, context)).output).toBe('read_file: arguments: Invalid input: expected object, received string');
  });

  it('aligns two-digit line numbers and keeps a last line without newline', async () => {
    const result = await readFileTool.invoke({ path: 'twelve.txt' }, context);
    expect(result.output).toBe(numbered(1, 12));
    expect(result.output.split('\n')[9]).toBe('    10\trow 10');
  });

  it('returns an inclusive 1-based range', async () => {
    expect((await readFileTool.invoke({ path: 'twelve.txt', start_line: 4, end_line: 6 }, context)).output).toBe(numbered(4, 6));
    expect((await readFileTool.invoke({ path: 'twelve.txt', start_line: 11 }, context)).output).toBe(numbered(11, 12));
    expect((await readFileTool.invoke({ path: 'twelve.txt', end_line: 2 }, context)).output).toBe(numbered(1, 2));
    expect((await readFileTool.invoke({ path: 'twelve.txt', start_line: 5, end_line: 5 }, context)).output).toBe(numbered(5, 5));
  });

  it('clamps an end_line past the end and says how long the file is', async () => {
    const result = await readFileTool.invoke({ path: 'twelve.txt', start_line: 11, end_line: 40 }, context);
    expect(result.isError).toBe(false);
    expect(result.output).toBe(`${numbered(11, 12)}\n[end of file: "twelve.txt" has 12 lines]`);
  });

  it('refuses a start_line past the end', async () => {
    const result = await readFileTool.invoke({ path: 'twelve.txt', start_line: 13 }, context);
    expect(result.isError).toBe(true);
    expect(result.output).toContain('start_line 13');
    expect(result.output).toContain('12 lines');
  });

  it.each([
    [{}, 'path'],
    [{ path: '' }, 'path'],
    [{ path: 7 }, 'path'],
    [{ path: 'three.txt', start_line: '2' }, 'start_line'],
    [{ path: 'three.txt', start_line: 0 }, 'start_line'],
    [{ path: 'three.txt', start_line: 1.5 }, 'start_line'],
    [{ path: 'three.txt', end_line: 'last' }, 'end_line'],
    [{ path: 'three.txt', start_line: 3, end_line: 2 }, 'end_line'],
  ])('rejects bad arguments %j naming "%s"', async (args, argument) => {
    const result = await readFileTool.invoke(args, context);
    expect(result.isError).toBe(true);
    expect(result.output).toContain(`read_file: argument "${argument}"`);
  });

  it('explains an end_line smaller than start_line', async () => {
    const result = await readFileTool.invoke({ path: 'three.txt', start_line: 3, end_line: 2 }, context);
    expect(result.output).toContain('end_line must be greater than or equal to start_line');
  });

  it.each(['../outside.txt', '/etc/passwd', 'sub/../../x'])('refuses %s outside the workspace', async (escape) => {
    const result = await readFileTool.invoke({ path: escape }, context);
    expect(result.isError).toBe(true);
    expect(result.output).toContain(`"${escape}" is outside the workspace`);
    expect(result.output).not.toContain('root:');
  });

  it('reports a missing file and a directory by name', async () => {
    const missing = await readFileTool.invoke({ path: 'sub/nope.txt' }, context);
    expect(missing).toMatchObject({ isError: true });
    expect(missing.output).toContain('"sub/nope.txt" does not exist');
    const directory = await readFileTool.invoke({ path: 'sub' }, context);
    expect(directory.isError).toBe(true);
    expect(directory.output).toContain('"sub" is a directory');
  });

  it('refuses a file with a NUL byte, giving its size', async () => {
    await writeFile(path.join(root, 'image.bin'), Buffer.from('abc\0def', 'utf8'));
    const result = await readFileTool.invoke({ path: 'image.bin' }, context);
    expect(result.isError).toBe(true);
    expect(result.output).toContain('"image.bin" is a binary file of 7 bytes');
  });

  it('refuses invalid UTF-8 even without NUL bytes', async () => {
    await writeFile(path.join(root, 'latin1.txt'), Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'));
    const result = await readFileTool.invoke({ path: 'latin1.txt' }, context);
    expect(result.isError).toBe(true);
    expect(result.output).toContain('binary file of 11 bytes');
  });

  it('shortens lines longer than 2,000 characters with a marker', async () => {
    await writeFile(path.join(root, 'minified.js'), `${'x'.repeat(5000)}\nshort\n`);
    const result = await readFileTool.invoke({ path: 'minified.js' }, context);
    const [first, second] = result.output.split('\n');
    expect(first).toBe(`     1\t${'x'.repeat(2000)} [… line shortened: 3000 more characters]`);
    expect(second).toBe('     2\tshort');
  });

  it('keeps multi-byte text and drops carriage returns of CRLF lines', async () => {
    await writeFile(path.join(root, 'unicode.txt'), 'naïve 日本語 🙂\n');
    expect((await readFileTool.invoke({ path: 'unicode.txt' }, context)).output).toBe('     1\tnaïve 日本語 🙂');
    expect((await readFileTool.invoke({ path: 'sub/crlf.txt' }, context)).output).toBe('     1\tone\n     2\ttwo');
  });

  it('reads through a symlink and says when a file is empty', async () => {
    await symlink('three.txt', path.join(root, 'alias.txt'));
    expect((await readFileTool.invoke({ path: 'alias.txt' }, context)).output).toBe('     1\talpha\n     2\tbeta\n     3\tgamma');
    await writeFile(path.join(root, 'empty.txt'), '');
    const empty = await readFileTool.invoke({ path: 'empty.txt' }, context);
    expect(empty.isError).toBe(false);
    expect(empty.output).toContain('empty');
  });

  it('accepts an absolute path inside the workspace', async () => {
    const result = await readFileTool.invoke({ path: path.join(root, 'three.txt'), end_line: 1 }, context);
    expect(result.output).toBe('     1\talpha');
  });

  it('stops a large file at the 256 KiB cap and tells which start_line continues', async () => {
    const line = 'y'.repeat(93);
    const lineCount = 5000;
    await writeFile(path.join(root, 'large.txt'), `${Array.from({ length: lineCount }, () => line).join('\n')}\n`);
    const result = await readFileTool.invoke({ path: 'large.txt' }, context);
    expect(result.isError).toBe(false);
    const lines = result.output.split('\n');
    const note = lines.pop() as string;
    // 6 digits + tab + 93 characters + newline per line.
    const expectedShown = Math.floor((256 * 1024) / (6 + 1 + 93 + 1));
    expect(lines).toHaveLength(expectedShown);
    expect(lines.at(-1)).toBe(`${String(expectedShown).padStart(6)}\t${line}`);
    expect(Buffer.byteLength(lines.join('\n'))).toBeLessThanOrEqual(256 * 1024);
    expect(note).toContain(`start_line=${expectedShown + 1}`);
    expect(note).toContain(`of ${lineCount}`);

    const rest = await readFileTool.invoke({ path: 'large.txt', start_line: expectedShown + 1 }, context);
    expect(rest.output.split('\n')[0]).toBe(`${String(expectedShown + 1).padStart(6)}\t${line}`);
  });

  it('applies a configured cap to ranges too', async () => {
    const small = createReadFileTool({ maxBytes: 50 });
    const result = await small.invoke({ path: 'twelve.txt', start_line: 3, end_line: 10 }, context);
    const lines = result.output.split('\n');
    // Each numbered line of twelve.txt is 6 + 1 + 5 (or 6) characters plus a newline.
    expect(lines.slice(0, -1)).toEqual(numbered(3, 5).split('\n'));
    expect(lines.at(-1)).toContain('start_line=6');
  });
});
