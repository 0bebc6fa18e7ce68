/**
 * Rules of the Codex `apply_patch` format that the shared fixture scenarios do not cover:
 * line endings, fuzzy matching, moves, padded markers, workspace escapes and error messages.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runApplyPatchCommand } from '../../src/cli/dev-apply-patch.js';
import { LocalFileSystem } from '../../src/executors/local/local-file-system.js';
import { Workspace } from '../../src/executors/workspace.js';
import type { ToolResult } from '../../src/tools/tool.js';
import { applyPatch, ApplyPatchError, applyPatchTool, parsePatch, seekSequence } from '../../src/tools/apply-patch/index.js';
import { createFileSystemExecutor } from '../helpers/file-system-executor.js';

const temporaryDirectories: string[] = [];
afterEach(async () => {
  await Promise.all(temporaryDirectories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'openvaala-apply-patch-rules-'));
  temporaryDirectories.push(directory);
  return directory;
}

/** A workspace in a fresh directory holding `files` (relative path → content). */
async function workspaceWith(files: Record<string, string | Uint8Array> = {}): Promise<{ root: string; workspace: Workspace }> {
  const root = path.join(await temporaryDirectory(), 'workspace');
  await mkdir(root);
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
  return { root, workspace: new Workspace(createFileSystemExecutor(new LocalFileSystem()), root) };
}

function runTool(workspace: Workspace, patch: string): Promise<ToolResult> {
  return applyPatchTool.invoke({ patch }, { workspace, signal: new AbortController().signal });
}

function patchOf(...lines: string[]): string {
  return ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');
}

async function rejection(promise: Promise<unknown>): Promise<ApplyPatchError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ApplyPatchError);
  return error as ApplyPatchError;
}

describe('line endings', () => {
  it('keeps a CRLF file CRLF, including the lines it adds', async () => {
    const { root, workspace } = await workspaceWith({ 'win.txt': 'alpha\r\nbeta\r\ngamma\r\n' });
    const result = await runTool(workspace, patchOf('*** Update File: win.txt', '@@', ' alpha', '-beta', '+BETA', '+beta two', ' gamma'));
    expect(result.isError, result.output).toBe(false);
    expect(await readFile(path.join(root, 'win.txt'), 'latin1')).toBe('alpha\r\nBETA\r\nbeta two\r\ngamma\r\n');
  });

  it('accepts a patch sent with CRLF line breaks and ends an unterminated CRLF file with CRLF, as Codex does', async () => {
    const { root, workspace } = await workspaceWith({ 'win.txt': 'first\r\nsecond' });
    const patch = patchOf('*** Update File: win.txt', '@@', '-second', '+last').replaceAll('\n', '\r\n');
    expect((await runTool(workspace, patch)).isError).toBe(false);
    expect(await readFile(path.join(root, 'win.txt'), 'latin1')).toBe('first\r\nlast\r\n');
  });

  it("gives added lines the ending of the file's first line, as Codex does, and leaves untouched lines as they were", async () => {
    const { root, workspace } = await workspaceWith({ 'mixed.txt': 'one\ntwo\r\nthree\r\n' });
    expect((await runTool(workspace, patchOf('*** Update File: mixed.txt', '@@', ' one', '-two', '+TWO', '+TWO AND A HALF'))).isError).toBe(false);
    expect(await readFile(path.join(root, 'mixed.txt'), 'latin1')).toBe('one\nTWO\nTWO AND A HALF\nthree\r\n');
  });

  it('keeps the ending of every untouched line of a mixed file, context lines included', async () => {
    const { root, workspace } = await workspaceWith({ 'mixed.txt': 'one\r\ntwo\nthree\r\nfour\nfive\r\n' });
    const result = await runTool(workspace, patchOf('*** Update File: mixed.txt', '@@', ' two', '-three', '+THREE', ' four'));
    expect(result.isError, result.output).toBe(false);
    // "two" and "four" are context: they keep LF although the file's first line break is CRLF;
    // the replacement of "three" keeps the CRLF of the line it replaces.
    expect(await readFile(path.join(root, 'mixed.txt'), 'latin1')).toBe('one\r\ntwo\nTHREE\r\nfour\nfive\r\n');
  });

  it('ends an updated file with a line break, as Codex does, also when its last line was not touched', async () => {
    const { root, workspace } = await workspaceWith({ 'open.txt': 'a\nb' });
    expect((await runTool(workspace, patchOf('*** Update File: open.txt', '@@', '-a', '+A'))).isError).toBe(false);
    expect(await readFile(path.join(root, 'open.txt'), 'utf8')).toBe('A\nb\n');
  });

  it('keeps a UTF-8 byte-order mark', async () => {
    const { root, workspace } = await workspaceWith({ 'bom.txt': '\uFEFFfirst\nsecond\n' });
    expect((await runTool(workspace, patchOf('*** Update File: bom.txt', '@@', '-first', '+FIRST'))).isError).toBe(false);
    expect(await readFile(path.join(root, 'bom.txt'), 'utf8')).toBe('\uFEFFFIRST\nsecond\n');
  });
});

describe('large files', () => {
  it('changes one line of a 50 MB file and nothing else', async () => {
    // 25 MB of identical lines on each side of the one to change: 2.8 million lines.
    const half = 'the same line of text\r\n'.repeat(1_100_000);
    const { root, workspace } = await workspaceWith({ 'big.txt': `${half}target\r\n${half}` });
    const result = await runTool(workspace, patchOf('*** Update File: big.txt', '@@', '-target', '+changed'));
    expect(result.isError, result.output).toBe(false);
    const after = await readFile(path.join(root, 'big.txt'), 'latin1');
    expect(after === `${half}changed\r\n${half}`).toBe(true);
  }, 60_000);
});

describe('fuzzy matching', () => {
  it('matches ASCII patch lines against Unicode dashes and curly quotes in the file', async () => {
    const { root, workspace } = await workspaceWith({ 'quotes.py': 'title = “Hello – world”\nnote = ‘it’s — fine’\nend = 1\n' });
    const result = await runTool(
      workspace,
      patchOf('*** Update File: quotes.py', '@@', '-title = "Hello - world"', "+title = 'Hi'", " note = 'it's - fine'", ' end = 1'),
    );
    expect(result.isError, result.output).toBe(false);
    // The context line matched only after normalisation; it keeps the file's own characters.
    expect(await readFile(path.join(root, 'quotes.py'), 'utf8')).toBe("title = 'Hi'\nnote = ‘it’s — fine’\nend = 1\n");
  });

  it('matches a plain space in the patch against a non-breaking space in the file', async () => {
    const { root, workspace } = await workspaceWith({ 'nbsp.txt': 'price:\u00A010\u202Fkg\ntotal = 1\n' });
    const result = await runTool(workspace, patchOf('*** Update File: nbsp.txt', '@@', ' price: 10 kg', '-total = 1', '+total = 2'));
    expect(result.isError, result.output).toBe(false);
    expect(await readFile(path.join(root, 'nbsp.txt'), 'utf8')).toBe('price:\u00A010\u202Fkg\ntotal = 2\n');
  });

  it('does not treat other characters as equal (accents stay significant)', async () => {
    const { workspace } = await workspaceWith({ 'cafe.txt': 'café\n' });
    const result = await runTool(workspace, patchOf('*** Update File: cafe.txt', '@@', '-cafe', '+tea'));
    expect(result.isError).toBe(true);
    expect(result.output).toContain('cafe.txt');
  });

  it('tries exact, then trailing-trimmed, then trimmed, then normalised matching, strictest first', () => {
    expect(seekSequence(['  foo', 'foo'], ['foo'], 0, false)).toBe(1);
    expect(seekSequence(['  foo', 'foo  '], ['foo'], 0, false)).toBe(1);
    expect(seekSequence(['  foo  ', 'x'], ['foo'], 0, false)).toBe(0);
    expect(seekSequence(['a – b', 'a - b '], ['a - b'], 0, false)).toBe(1);
    expect(seekSequence(['a – b'], ['a - b'], 0, false)).toBe(0);
    expect(seekSequence(['foo', 'bar'], ['foo'], 1, false)).toBeUndefined();
    expect(seekSequence(['x', 'y'], ['x', 'y', 'z'], 0, false)).toBeUndefined();
  });

  it('anchors a chunk ending with "*** End of File" at the end of the file', async () => {
    const { root, workspace } = await workspaceWith({ 'repeat.txt': 'value\nmiddle\nvalue\n' });
    const result = await runTool(workspace, patchOf('*** Update File: repeat.txt', '@@', '-value', '+last', '*** End of File'));
    expect(result.isError, result.output).toBe(false);
    expect(await readFile(path.join(root, 'repeat.txt'), 'utf8')).toBe('value\nmiddle\nlast\n');
  });

  it('uses several "@@" lines to narrow down the position', async () => {
    const source = 'class A:\n    def run(self):\n        return 1\nclass B:\n    def run(self):\n        return 1\n';
    const { root, workspace } = await workspaceWith({ 'classes.py': source });
    const result = await runTool(
      workspace,
      patchOf('*** Update File: classes.py', '@@ class B:', '@@     def run(self):', '-        return 1', '+        return 2'),
    );
    expect(result.isError, result.output).toBe(false);
    expect(await readFile(path.join(root, 'classes.py'), 'utf8')).toBe(source.replace(/return 1\n$/, 'return 2\n'));
  });

  it('inserts a chunk without old lines right after its "@@" context line', async () => {
    const { root, workspace } = await workspaceWith({ 'list.txt': 'a\nb\nc\n' });
    expect((await runTool(workspace, patchOf('*** Update File: list.txt', '@@ a', '+inserted'))).isError).toBe(false);
    expect(await readFile(path.join(root, 'list.txt'), 'utf8')).toBe('a\ninserted\nb\nc\n');
  });

  it('ignores a trailing blank line the model left at the end of a chunk', async () => {
    const { root, workspace } = await workspaceWith({ 'end.txt': 'a\nb' });
    expect((await runTool(workspace, patchOf('*** Update File: end.txt', '@@', ' a', '-b', '+c', ''))).isError).toBe(false);
    expect(await readFile(path.join(root, 'end.txt'), 'utf8')).toBe('a\nc\n');
  });
});

describe('file operations', () => {
  it('"*** Move to:" overwrites an existing destination and removes the source', async () => {
    const { root, workspace } = await workspaceWith({ 'from.txt': 'old\n', 'to/dest.txt': 'already here\n' });
    const result = await runTool(workspace, patchOf('*** Update File: from.txt', '*** Move to: to/dest.txt', '@@', '-old', '+new'));
    expect(result.isError, result.output).toBe(false);
    expect(await readFile(path.join(root, 'to/dest.txt'), 'utf8')).toBe('new\n');
    expect(existsSync(path.join(root, 'from.txt'))).toBe(false);
    expect(result.structured).toMatchObject({ modified: ['to/dest.txt'], moved: [{ from: 'from.txt', to: 'to/dest.txt' }] });
    expect(result.output).toBe('Success. Updated the following files:\nM to/dest.txt');
  });

  it('tolerates whitespace around every marker', async () => {
    const { root, workspace } = await workspaceWith({ 'a.txt': 'x\ny\n', 'gone.txt': 'bye\n' });
    const patch = [
      '   *** Begin Patch  ',
      '  *** Update File: a.txt  ',
      ' *** Move to: b.txt ',
      '@@',
      ' x',
      '-y',
      '+z',
      '\t*** End of File  ',
      '\t*** Add File: c.txt ',
      '+made',
      '  *** Delete File: gone.txt',
      ' *** End Patch \t',
    ].join('\n');
    const result = await runTool(workspace, patch);
    expect(result.isError, result.output).toBe(false);
    expect(await readFile(path.join(root, 'b.txt'), 'utf8')).toBe('x\nz\n');
    expect(await readFile(path.join(root, 'c.txt'), 'utf8')).toBe('made\n');
    expect(existsSync(path.join(root, 'a.txt'))).toBe(false);
    expect(existsSync(path.join(root, 'gone.txt'))).toBe(false);
  });

  it('accepts the patch wrapped in a heredoc', async () => {
    const { root, workspace } = await workspaceWith();
    for (const [opening, file] of [["<<'EOF'", 'one.txt'], ['apply_patch <<"EOF"', 'two.txt']] as const) {
      const patch = [opening, '*** Begin Patch', `*** Add File: ${file}`, '+hi', '*** End Patch', 'EOF', ''].join('\n');
      expect((await runTool(workspace, patch)).isError).toBe(false);
      expect(await readFile(path.join(root, file), 'utf8')).toBe('hi\n');
    }
  });

  it('reads " *** End Patch" inside a chunk as a context line, so files about the format can be edited', async () => {
    const { root, workspace } = await workspaceWith({ 'format.md': 'a\n*** End Patch\n*** End of File\nb\n' });
    const result = await runTool(workspace, patchOf('*** Update File: format.md', '@@', ' a', ' *** End Patch', ' *** End of File', '-b', '+c'));
    expect(result.isError, result.output).toBe(false);
    expect(await readFile(path.join(root, 'format.md'), 'utf8')).toBe('a\n*** End Patch\n*** End of File\nc\n');
  });

  it('reads an indented marker of the file as a context line, never as a section of the patch', async () => {
    // A test file holding a patch: its indented "*** Update File:" line, as context, once ended
    // the section and sent the rest of the chunk to other.txt.
    const file = ['def test_doc():', '    patch = """', '    *** Update File: other.txt', '    *** End of File', '    *** End Patch', '    """', '    return patch', ''].join('\n');
    const { root, workspace } = await workspaceWith({ 'test_doc.py': file, 'other.txt': 'untouched\n' });
    const patch = patchOf('*** Update File: test_doc.py', '@@ def test_doc():', '     patch = """', '     *** Update File: other.txt', '     *** End of File', '     *** End Patch', '     """', '-    return patch', '+    return patch.strip()');
    const result = await runTool(workspace, patch);
    expect(result.isError, result.output).toBe(false);
    expect(await readFile(path.join(root, 'test_doc.py'), 'utf8')).toBe(file.replace('return patch\n', 'return patch.strip()\n'));
    expect(await readFile(path.join(root, 'other.txt'), 'utf8')).toBe('untouched\n');
    expect(result.output).toBe('Success. Updated the following files:\nM test_doc.py');
  });

  it('takes the text after a unified-diff range header as the "@@" context', () => {
    const [withContext] = parsePatch(patchOf('*** Update File: a.py', '@@ -10,3 +10,4 @@ def run():', '-x', '+y'));
    const [withoutContext] = parsePatch(patchOf('*** Update File: a.py', '@@ -1 +1 @@', '-x', '+y'));
    expect(withContext).toMatchObject({ kind: 'update', chunks: [{ contexts: ['def run():'] }] });
    expect(withoutContext).toMatchObject({ kind: 'update', chunks: [{ contexts: [] }] });
  });

  it('refuses to update a file that is not UTF-8 text, naming it', async () => {
    const { root, workspace } = await workspaceWith({ 'image.bin': new Uint8Array([0xff, 0xfe, 0x00, 0x80, 0x0a]) });
    const result = await runTool(workspace, patchOf('*** Update File: image.bin', '@@', '-x', '+y'));
    expect(result.isError).toBe(true);
    expect(result.output).toContain('cannot update image.bin (patch line 2): the file is not valid UTF-8 text');
    expect([...(await readFile(path.join(root, 'image.bin')))]).toEqual([0xff, 0xfe, 0x00, 0x80, 0x0a]);
  });
});

describe('workspace escapes', () => {
  it('refuses "../outside.txt" with a clear message and writes nothing, not even earlier sections', async () => {
    const { root, workspace } = await workspaceWith();
    const result = await runTool(workspace, patchOf('*** Add File: inside.txt', '+fine', '*** Add File: ../outside.txt', '+evil'));
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/line 4: refusing "\*\*\* Add File: \.\.\/outside\.txt": path "\.\.\/outside\.txt" is outside the workspace/);
    expect(existsSync(path.join(root, '..', 'outside.txt'))).toBe(false);
    expect(existsSync(path.join(root, 'inside.txt'))).toBe(false);
  });

  it('refuses an absolute path outside the workspace, for every kind of section', async () => {
    const outsideDirectory = await temporaryDirectory();
    const outsideFile = path.join(outsideDirectory, 'victim.txt');
    await writeFile(outsideFile, 'keep me\n');
    const { root, workspace } = await workspaceWith({ 'mine.txt': 'mine\n' });
    const patches = [
      patchOf(`*** Add File: ${path.join(outsideDirectory, 'new.txt')}`, '+evil'),
      patchOf(`*** Delete File: ${outsideFile}`),
      patchOf(`*** Update File: ${outsideFile}`, '@@', '-keep me', '+changed'),
      patchOf('*** Update File: mine.txt', `*** Move to: ${outsideFile}`, '@@', '-mine', '+moved'),
    ];
    for (const patch of patches) {
      const result = await runTool(workspace, patch);
      expect(result.isError).toBe(true);
      expect(result.output).toContain('is outside the workspace');
    }
    expect(await readFile(outsideFile, 'utf8')).toBe('keep me\n');
    expect(existsSync(path.join(outsideDirectory, 'new.txt'))).toBe(false);
    expect(await readFile(path.join(root, 'mine.txt'), 'utf8')).toBe('mine\n');
  });

  it('refuses a path that leads outside through a symlink inside the workspace', async () => {
    const outsideDirectory = await temporaryDirectory();
    const { workspace, root } = await workspaceWith();
    await symlink(outsideDirectory, path.join(root, 'link'));
    const result = await runTool(workspace, patchOf('*** Add File: link/evil.txt', '+evil'));
    expect(result.isError).toBe(true);
    expect(result.output).toContain('path "link/evil.txt" leads outside the workspace');
    expect(existsSync(path.join(outsideDirectory, 'evil.txt'))).toBe(false);
  });
});

describe('error messages', () => {
  it('does not blame another edit for a file an earlier section of the same patch changed', async () => {
    const { root, workspace } = await workspaceWith({ 'gone.txt': 'x\n' });
    for (const sections of [
      ['*** Add File: a.txt', '+one', '*** Update File: a.txt', '@@', '-two', '+three'],
      ['*** Delete File: gone.txt', '*** Update File: gone.txt', '@@', '-x', '+y'],
    ]) {
      const result = await runTool(workspace, patchOf(...sections));
      expect(result.isError).toBe(true);
      expect(result.output).not.toContain('another edit');
    }
    // The earlier sections stay applied, as in Codex.
    expect(await readFile(path.join(root, 'a.txt'), 'utf8')).toBe('one\n');
    expect(existsSync(path.join(root, 'gone.txt'))).toBe(false);
  });

  it.each([
    ['a missing begin marker', 'hello\n*** End Patch\n', /^line 1: expected "\*\*\* Begin Patch", got "hello"$/],
    ['an empty text', '  \n', /^line 1: expected "\*\*\* Begin Patch", got an empty patch$/],
    ['a missing end marker', '*** Begin Patch\n*** Add File: a.txt\n+x\n', /^line 3: expected "\*\*\* End Patch" as the last line, got "\+x"$/],
    [
      'an unknown section header',
      '*** Begin Patch\n*** Delete File: a.txt\n*** Rename File: b.txt\n*** End Patch',
      /^line 3: expected "\*\*\* Add File:", "\*\*\* Delete File:" or "\*\*\* Update File:", got "\*\*\* Rename File: b\.txt"$/,
    ],
    [
      'a line without a change marker',
      '*** Begin Patch\n*** Update File: a.txt\n@@\n-x\nstray text\n*** End Patch',
      /^line 5: expected a line starting with " " \(context\), "-" \(removed\) or "\+" \(added\), "@@" or "\*\*\*", got "stray text"$/,
    ],
    ['an empty chunk', '*** Begin Patch\n*** Update File: a.txt\n@@\n*** End Patch', /^line 4: expected a line starting with .* after "@@", got "\*\*\* End Patch"$/],
    ['a header without a path', '*** Begin Patch\n*** Add File:\n+x\n*** End Patch', /^line 2: expected a path after "\*\*\* Add File:"$/],
    ['leading blank lines before the error', '\n\n*** Begin Patch\n*** Bogus\n*** End Patch', /^line 4: expected "\*\*\* Add File:"/],
  ])('names the line for %s', (_name, patch, message) => {
    let caught: unknown;
    try {
      parsePatch(patch);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApplyPatchError);
    expect((caught as ApplyPatchError).message).toMatch(message);
  });

  it('names the file and the chunk when context matches nowhere, and leaves the file unchanged', async () => {
    const original = 'function a() {}\nfunction b() {}\n';
    const { root, workspace } = await workspaceWith({ 'src/app.ts': original });
    const error = await rejection(
      applyPatch(
        patchOf('*** Update File: src/app.ts', '@@', '-function a() {}', '+function A() {}', '@@', '-function zzz() {}', '+x'),
        workspace,
      ),
    );
    expect(error.message).toBe('cannot update src/app.ts: chunk 2 (patch line 6): these lines were not found after line 1:\nfunction zzz() {}');
    expect(error.path).toBe('src/app.ts');
    expect(error.lineNumber).toBe(6);
    expect(await readFile(path.join(root, 'src/app.ts'), 'utf8')).toBe(original);
  });

  it('names the file when an "@@" context line is not found', async () => {
    const { workspace } = await workspaceWith({ 'lib/util.py': 'def helper():\n    pass\n' });
    const result = await runTool(workspace, patchOf('*** Update File: lib/util.py', '@@ def missing():', '-    pass', '+    return 1'));
    expect(result.isError).toBe(true);
    expect(result.output).toBe('apply_patch: cannot update lib/util.py: chunk 1 (patch line 3): the context line "def missing():" was not found');
  });

  it('reports the changes kept from sections applied before a failure', async () => {
    const { workspace } = await workspaceWith({ 'keep.txt': 'k\n' });
    const error = await rejection(applyPatch(patchOf('*** Delete File: keep.txt', '*** Delete File: nope.txt'), workspace));
    expect(error.message).toBe('cannot delete nope.txt (patch line 3): the file does not exist');
    expect(error.applied).toEqual({ added: [], modified: [], deleted: ['keep.txt'], moved: [] });
  });

  it('rejects arguments other than { patch } naming the field', async () => {
    const { workspace } = await workspaceWith();
    const result = await applyPatchTool.invoke({ input: patchOf('*** Add File: a.txt', '+a') }, { workspace, signal: new AbortController().signal });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('apply_patch: argument "patch"');
  });
});

describe('dev apply-patch command', () => {
  function collector(): { stream: Writable; text: () => string } {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    });
    return { stream, text: () => text };
  }

  it('prints the summary and exits 0, or prints the error and exits 1', async () => {
    const { root } = await workspaceWith({ 'a.txt': 'a\n' });
    const stdout = collector();
    const stderr = collector();
    const ok = await runApplyPatchCommand({
      cwd: root,
      patchText: patchOf('*** Update File: a.txt', '@@', '-a', '+b'),
      stdout: stdout.stream,
      stderr: stderr.stream,
    });
    expect([ok, stdout.text(), stderr.text()]).toEqual([0, 'Success. Updated the following files:\nM a.txt\n', '']);
    expect(await readFile(path.join(root, 'a.txt'), 'utf8')).toBe('b\n');

    const failed = await runApplyPatchCommand({ cwd: root, patchText: 'nonsense', stdout: stdout.stream, stderr: stderr.stream });
    expect(failed).toBe(1);
    expect(stderr.text()).toBe('line 1: expected "*** Begin Patch", got "nonsense"\n');
  });
});

describe('LocalFileSystem', () => {
  const fileSystem = new LocalFileSystem();

  it('reports kinds with lstat semantics and undefined for missing paths', async () => {
    const { root } = await workspaceWith({ 'file.txt': 'x' });
    await symlink(path.join(root, 'file.txt'), path.join(root, 'link'));
    expect((await fileSystem.stat(path.join(root, 'file.txt')))?.kind).toBe('file');
    expect((await fileSystem.stat(path.join(root, 'link')))?.kind).toBe('symlink');
    expect((await fileSystem.stat(root))?.kind).toBe('directory');
    expect(await fileSystem.stat(path.join(root, 'missing'))).toBeUndefined();
    expect(await fileSystem.stat(path.join(root, 'file.txt', 'below'))).toBeUndefined();
  });

  it('lists directories sorted by name', async () => {
    const { root } = await workspaceWith({ 'b.txt': '', 'a.txt': '', 'C.txt': '', 'dir/x': '' });
    expect(await fileSystem.readDirectory(root)).toEqual([
      { name: 'C.txt', kind: 'file' },
      { name: 'a.txt', kind: 'file' },
      { name: 'b.txt', kind: 'file' },
      { name: 'dir', kind: 'directory' },
    ]);
  });

  it('names the path in its errors and refuses to remove directories or use relative paths', async () => {
    const { root } = await workspaceWith({ 'dir/x': '' });
    await expect(fileSystem.readFile(path.join(root, 'missing.txt'))).rejects.toThrow(`${path.join(root, 'missing.txt')}: no such file`);
    await expect(fileSystem.readFile(path.join(root, 'dir'))).rejects.toThrow(`cannot read ${path.join(root, 'dir')}: is a directory`);
    await expect(fileSystem.removeFile(path.join(root, 'dir'))).rejects.toThrow(`cannot remove ${path.join(root, 'dir')}: is a directory`);
    await expect(fileSystem.writeFile('relative.txt', 'x')).rejects.toThrow('path must be absolute, got "relative.txt"');
    expect(existsSync(path.join(root, 'dir', 'x'))).toBe(true);
  });
});
