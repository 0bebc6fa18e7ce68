/**
 * The same tool tests, unchanged, on every executor: local, local inside bubblewrap, SSH
 * (a real OpenSSH server on 127.0.0.1) and virtual (in memory). Files are seeded and read
 * back through the executor's own file system.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workspace } from '../../src/executors/workspace.js';
import { createExecCommandTool, execCommandTool } from '../../src/tools/exec-command.js';
import { createGrepTool, grepTool } from '../../src/tools/grep.js';
import { globTool } from '../../src/tools/glob.js';
import { listDirTool } from '../../src/tools/list-dir.js';
import { readFileTool } from '../../src/tools/read-file.js';
import type { Tool, ToolResult } from '../../src/tools/tool.js';
import { readTree } from '../helpers/executor-tree.js';
import { createExecutorFixture, EXECUTOR_VARIANTS, type ExecutorFixture } from '../helpers/executor-variants.js';

function call<Args>(tool: Tool<Args>, args: unknown, workspace: Workspace, signal = new AbortController().signal): Promise<ToolResult> {
  return tool.invoke(args, { workspace, signal });
}

const PROJECT = {
  'README.md': '# Demo\nTODO: write docs\n',
  'src/app.ts': 'export const answer = 42;\n// TODO: remove\nconsole.log("Hello World");\n',
  'src/app.test.ts': 'import { answer } from "./app";\n// todo lower case\n',
  'src/util/strings.ts': 'export const greeting = "(hello)";\n',
  'src/util/strings.test.ts': 'test("greets", () => {});\n',
  '.hidden/notes.ts': '// TODO: hidden but searched\n',
  'node_modules/lib/index.ts': '// TODO: never searched\n',
  '.git/HEAD.ts': '// TODO: never searched\n',
  'data.bin': new Uint8Array([0x54, 0x4f, 0x44, 0x4f, 0x00, 0x01]),
};

describe.each(EXECUTOR_VARIANTS)('environment tools on the %s executor', (variant) => {
  let fixture: ExecutorFixture;
  let workspace: Workspace;

  beforeAll(async () => {
    fixture = await createExecutorFixture(variant);
    workspace = await fixture.newWorkspace(PROJECT);
    await fixture.makeSymlink('src/app.ts', path.posix.join(workspace.root, 'alias.ts'));
  }, 60_000);
  afterAll(async () => {
    await fixture?.dispose();
  });

  describe('read_file and list_dir', () => {
    it('reads a file with numbered lines and a line range', async () => {
      expect((await call(readFileTool, { path: 'README.md' }, workspace)).output).toBe('     1\t# Demo\n     2\tTODO: write docs');
      expect((await call(readFileTool, { path: 'src/app.ts', start_line: 2, end_line: 2 }, workspace)).output).toBe('     2\t// TODO: remove');
    });

    it('reports a missing file, a directory and a binary file by name', async () => {
      expect((await call(readFileTool, { path: 'nope.txt' }, workspace)).output).toContain('"nope.txt" does not exist');
      expect((await call(readFileTool, { path: 'src' }, workspace)).output).toContain('"src" is a directory');
      expect((await call(readFileTool, { path: 'data.bin' }, workspace)).output).toContain('"data.bin" is a binary file of 6 bytes');
    });

    it('reads through a symlink that stays inside the workspace', async () => {
      expect((await call(readFileTool, { path: 'alias.ts', end_line: 1 }, workspace)).output).toBe('     1\texport const answer = 42;');
    });

    it('lists directories two levels deep with markers', async () => {
      const result = await call(listDirTool, { path: 'src', depth: 2 }, workspace);
      expect(result.output).toBe(['src/', '  app.test.ts', '  app.ts', '  util/', '    strings.test.ts', '    strings.ts'].join('\n'));
    });
  });

  describe('exec_command', () => {
    it('returns the output and the exit code, in the root or a cwd below it', async () => {
      const result = await call(execCommandTool, { command: 'echo hello; echo oops >&2; exit 3' }, workspace);
      expect(result.exitCode).toBe(3);
      expect(result.output.split('\n').sort()).toEqual(['[exit code 3]', 'hello', 'oops']);
      expect((await call(execCommandTool, { command: 'pwd' }, workspace)).output).toBe(`${workspace.root}\n[exit code 0]`);
      expect((await call(execCommandTool, { command: 'pwd; cat strings.ts', cwd: 'src/util' }, workspace)).output).toBe(
        `${workspace.root}/src/util\nexport const greeting = "(hello)";\n[exit code 0]`,
      );
    });

    it('writes files that the file tools then see', async () => {
      const own = await fixture.newWorkspace();
      const result = await call(execCommandTool, { command: 'mkdir -p made && printf "one\\ntwo\\n" > made/by-shell.txt' }, own);
      expect(result.output).toBe('[exit code 0]');
      expect((await call(readFileTool, { path: 'made/by-shell.txt' }, own)).output).toBe('     1\tone\n     2\ttwo');
      expect([...(await readTree(own.executor.fs, own.root)).keys()]).toEqual(['made/by-shell.txt']);
    });

    it('kills a command that runs past timeout_ms', async () => {
      const started = Date.now();
      const result = await call(execCommandTool, { command: 'sleep 5; echo not reached', timeout_ms: 300 }, workspace);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(result.isError).toBe(true);
      expect(result.output).toMatch(/\[timed out after 300 ms\]$/);
      expect(result.output).not.toContain('not reached');
    });

    it('stops the command when the turn is interrupted', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const started = Date.now();
      const result = await call(execCommandTool, { command: 'sleep 5; echo not reached' }, workspace, controller.signal);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(result.output).toMatch(/\[aborted; (killed by SIG[A-Z]+|exit code \d+)\]$/);
      expect(result.output).not.toContain('not reached');
    });

    it('keeps the head and the tail of output past its bound, naming the omitted range', async () => {
      const capped = createExecCommandTool({ maxOutputBytes: 100 });
      const result = await call(capped, { command: 'for i in $(seq 1 500); do echo line-$i; done' }, workspace);
      const full = Array.from({ length: 500 }, (_, index) => `line-${index + 1}\n`).join('');
      const head = full.slice(0, full.indexOf('line-8\n'));
      const tail = full.slice(full.indexOf('line-496\n'));
      const omitted = full.length - head.length - tail.length;
      expect(result.output).toBe(`${head}[… ${omitted} bytes omitted (bytes ${head.length + 1}–${full.length - tail.length} of ${full.length}, lines 8–495 of 500) …]\n${tail}[exit code 0]`);
    });

    it('reports a missing cwd and a file cwd by name', async () => {
      expect((await call(execCommandTool, { command: 'pwd', cwd: 'nowhere' }, workspace)).output).toContain('cwd "nowhere" does not exist');
      expect((await call(execCommandTool, { command: 'pwd', cwd: 'README.md' }, workspace)).output).toContain('cwd "README.md" is not a directory');
    });
  });

  describe('glob', () => {
    it('matches file names at any depth, in path order, skipping .git and node_modules', async () => {
      const result = await call(globTool, { pattern: '*.ts' }, workspace);
      expect(result.output.split('\n')).toEqual(['.hidden/notes.ts', 'alias.ts', 'src/app.test.ts', 'src/app.ts', 'src/util/strings.test.ts', 'src/util/strings.ts']);
    });

    it('anchors patterns with a slash at the searched directory and honours path', async () => {
      expect((await call(globTool, { pattern: 'src/**/*.test.ts' }, workspace)).output).toBe('src/app.test.ts\nsrc/util/strings.test.ts');
      expect((await call(globTool, { pattern: 'util/*.{ts,js}', path: 'src' }, workspace)).output).toBe('src/util/strings.test.ts\nsrc/util/strings.ts');
      expect((await call(globTool, { pattern: '*.py' }, workspace)).output).toBe('No files match "*.py" in .');
    });

    it('caps the list and says how many matched', async () => {
      const result = await call(globTool, { pattern: '**/*.ts', max_results: 2 }, workspace);
      expect(result.output).toBe('.hidden/notes.ts\nalias.ts\n[2 of 6 matching paths listed; narrow the pattern or path, or raise max_results]');
    });
  });

  describe.each(['auto', 'portable'] as const)('grep (%s engine)', (engine) => {
    const grep = engine === 'auto' ? grepTool : createGrepTool({ engine: 'portable' });

    it('uses ripgrep exactly where the executor has it', async () => {
      const result = await call(grep, { pattern: 'answer' }, workspace);
      const expected = engine === 'portable' || !fixture.expectsRipgrep ? 'portable' : 'ripgrep';
      expect(result.structured?.engine).toBe(expected);
    });

    it('lists path:line:text in path order, searching hidden files but not .git, node_modules, binaries or symlinks', async () => {
      const result = await call(grep, { pattern: 'TODO' }, workspace);
      expect(result.isError, result.output).toBe(false);
      expect(result.output).toBe(['.hidden/notes.ts:1:// TODO: hidden but searched', 'README.md:2:TODO: write docs', 'src/app.ts:2:// TODO: remove'].join('\n'));
    });

    it('honours ignore_case, literal, glob and path', async () => {
      expect((await call(grep, { pattern: 'todo', ignore_case: true, path: 'src' }, workspace)).output).toBe('src/app.test.ts:2:// todo lower case\nsrc/app.ts:2:// TODO: remove');
      expect((await call(grep, { pattern: '(hello)', literal: true }, workspace)).output).toBe('src/util/strings.ts:1:export const greeting = "(hello)";');
      expect((await call(grep, { pattern: 'an.wer', glob: '*.test.ts' }, workspace)).output).toBe('src/app.test.ts:1:import { answer } from "./app";');
      expect((await call(grep, { pattern: 'TODO', glob: '*.ts' }, workspace)).output).toBe('.hidden/notes.ts:1:// TODO: hidden but searched\nsrc/app.ts:2:// TODO: remove');
      expect((await call(grep, { pattern: 'TODO', glob: 'src/*.ts' }, workspace)).output).toBe('src/app.ts:2:// TODO: remove');
      expect((await call(grep, { pattern: 'Hello W\\w+', path: 'src/app.ts' }, workspace)).output).toBe('src/app.ts:3:console.log("Hello World");');
    });

    it('says when nothing matches, and caps the matches with a note', async () => {
      expect((await call(grep, { pattern: 'no such text anywhere' }, workspace)).output).toBe('No matches for "no such text anywhere" in .');
      const capped = await call(grep, { pattern: 'e', max_results: 2 }, workspace);
      const lines = capped.output.split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[2]).toBe('[only the first 2 matches are listed; narrow the pattern, path or glob, or raise max_results]');
    });

    it('reports an invalid pattern and a missing path as errors', async () => {
      const invalid = await call(grep, { pattern: 'unclosed(' }, workspace);
      expect(invalid.isError).toBe(true);
      expect(invalid.output).toMatch(/grep: .*(regex parse error|invalid regular expression)/s);
      const missing = await call(grep, { pattern: 'x', path: 'missing-dir' }, workspace);
      expect(missing.output).toContain('path "missing-dir" does not exist');
    });
  });
});
