import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandRequest, CommandResult } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { createExecCommandTool, EXEC_COMMAND_DEFAULT_MAX_OUTPUT_BYTES, execCommandTool } from '../../src/tools/exec-command.js';
import type { ToolContext } from '../../src/tools/tool.js';

/** A local executor that remembers the requests it was given. */
class RecordingExecutor extends LocalExecutor {
  readonly requests: CommandRequest[] = [];
  override run(request: CommandRequest): Promise<CommandResult> {
    this.requests.push(request);
    return super.run(request);
  }
}

let root: string;
let executor: RecordingExecutor;
let context: ToolContext;

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'exec-command-')));
  executor = new RecordingExecutor({ name: 'local' });
  context = { workspace: new Workspace(executor, root), signal: new AbortController().signal };
  await mkdir(path.join(root, 'sub'));
  await writeFile(path.join(root, 'sub', 'note.txt'), 'inside sub\n');
});

afterAll(async () => {
  await executor.close();
  await rm(root, { recursive: true, force: true });
});

describe('exec_command', () => {
  it('returns the output followed by the exit code', async () => {
    const result = await execCommandTool.invoke({ command: 'echo hello; echo oops >&2' }, context);
    expect(result).toMatchObject({ output: 'hello\noops\n[exit code 0]', isError: false, exitCode: 0 });
  });

  it('treats a non-zero exit as a normal result', async () => {
    const result = await execCommandTool.invoke({ command: 'echo failing; exit 3' }, context);
    expect(result).toMatchObject({ output: 'failing\n[exit code 3]', isError: false, exitCode: 3 });
  });

  it('puts the status on its own line after output without a final newline', async () => {
    const result = await execCommandTool.invoke({ command: 'printf abc' }, context);
    expect(result.output).toBe('abc\n[exit code 0]');
    expect((await execCommandTool.invoke({ command: 'true' }, context)).output).toBe('[exit code 0]');
  });

  it('runs in the workspace root by default and in cwd relative to it', async () => {
    expect((await execCommandTool.invoke({ command: 'pwd' }, context)).output).toBe(`${root}\n[exit code 0]`);
    const inSub = await execCommandTool.invoke({ command: 'pwd; cat note.txt', cwd: 'sub' }, context);
    expect(inSub.output).toBe(`${path.join(root, 'sub')}\ninside sub\n[exit code 0]`);
  });

  it('passes the defaults, the signal and onOutput to the executor', async () => {
    const chunks: string[] = [];
    const streaming: ToolContext = { ...context, onOutput: (chunk) => chunks.push(chunk) };
    await execCommandTool.invoke({ command: 'echo streamed' }, streaming);
    const sent = executor.requests.at(-1) as CommandRequest;
    expect(sent).toMatchObject({ command: 'exec 2>&1; echo streamed', cwd: root, timeoutMs: 120_000, maxOutputBytes: EXEC_COMMAND_DEFAULT_MAX_OUTPUT_BYTES });
    expect(sent.signal).toBe(context.signal);
    expect(chunks.join('')).toBe('streamed\n');
  });

  it('reports a command killed by a signal without calling it an error', async () => {
    const result = await execCommandTool.invoke({ command: 'echo dying; kill -TERM $$' }, context);
    expect(result).toMatchObject({ output: 'dying\n[killed by SIGTERM]', isError: false, exitCode: null });
  });

  it('kills a command that runs past timeout_ms and marks it an error', async () => {
    const started = Date.now();
    // The limit leaves a loaded machine time to start bash and print before the kill.
    const result = await execCommandTool.invoke({ command: 'echo waiting; sleep 20', timeout_ms: 1500 }, context);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ output: 'waiting\n[timed out after 1500 ms]', isError: true, exitCode: null });
  });

  it('stops the command when the turn is interrupted', async () => {
    const controller = new AbortController();
    const marker = path.join(root, 'after-abort');
    const started = Date.now();
    // Interrupted once its first line is out, while it sleeps.
    const result = await execCommandTool.invoke(
      { command: `echo started; sleep 3; touch ${marker}` },
      {
        ...context,
        signal: controller.signal,
        onOutput: (chunk) => {
          if (chunk.includes('started')) setImmediate(() => controller.abort());
        },
      },
    );
    expect(Date.now() - started).toBeLessThan(2500);
    expect(result.isError).toBe(false);
    expect(result.output).toBe('started\n[aborted; killed by SIGTERM]');
    await new Promise((resolve) => setTimeout(resolve, 3200));
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/);
  });

  it('keeps a 168 KB log whole, within the default bound, with the error at its end', async () => {
    const command = 'for i in $(seq 1 4000); do echo "compiling module $i of 4000 ............"; done; echo "error TS2304: cannot find name x" >&2; exit 1';
    const result = await execCommandTool.invoke({ command }, context);
    expect(Buffer.byteLength(result.output)).toBeGreaterThan(160_000);
    expect(result.output).not.toContain('omitted');
    expect(result.output).toMatch(/compiling module 4000 of 4000 \.+\nerror TS2304: cannot find name x\n\[exit code 1\]$/);
  });

  it('honours a configured bound, keeping head and tail around the marker', async () => {
    const small = createExecCommandTool({ maxOutputBytes: 20 });
    const result = await small.invoke({ command: 'seq 1 100; exit 2' }, context);
    expect(result).toMatchObject({ exitCode: 2 });
    expect(result.output).toBe('1\n2\n3\n4\n5\n[… 272 bytes omitted (bytes 11–282 of 292, lines 6–97 of 100) …]\n98\n99\n100\n[exit code 2]');
    expect(result.structured?.omitted).toEqual({ fromByte: 11, toByte: 282, totalBytes: 292, fromLine: 6, toLine: 97, totalLines: 100 });
  });

  it.each([
    [{}, 'command'],
    [{ command: '' }, 'command'],
    [{ command: ['ls'] }, 'command'],
    [{ command: 'true', cwd: 4 }, 'cwd'],
    [{ command: 'true', timeout_ms: 0 }, 'timeout_ms'],
    [{ command: 'true', timeout_ms: 600_001 }, 'timeout_ms'],
    [{ command: 'true', timeout_ms: '1000' }, 'timeout_ms'],
    [{ command: 'true', timeout_ms: 2.5 }, 'timeout_ms'],
  ])('rejects bad arguments %j naming "%s"', async (args, argument) => {
    const before = executor.requests.length;
    const result = await execCommandTool.invoke(args, context);
    expect(result.isError).toBe(true);
    expect(result.output).toContain(`exec_command: argument "${argument}"`);
    expect(executor.requests.length).toBe(before);
  });

  it.each(['..', '../elsewhere', '/tmp'])('refuses the cwd %s outside the workspace', async (escape) => {
    const before = executor.requests.length;
    const result = await execCommandTool.invoke({ command: 'pwd', cwd: escape }, context);
    expect(result.isError).toBe(true);
    expect(result.output).toContain(`"${escape}" is outside the workspace`);
    expect(executor.requests.length).toBe(before);
  });

  it('reports a missing cwd and a file cwd as errors naming them', async () => {
    const missing = await execCommandTool.invoke({ command: 'pwd', cwd: 'nowhere' }, context);
    expect(missing.isError).toBe(true);
    expect(missing.output).toContain('cwd "nowhere" does not exist');
    const file = await execCommandTool.invoke({ command: 'pwd', cwd: 'sub/note.txt' }, context);
    expect(file.isError).toBe(true);
    expect(file.output).toContain('cwd "sub/note.txt" is not a directory');
  });
});
