import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileWritten, until } from '../helpers/processes.js';
import type { CommandRequest } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { runCommand } from '../../src/executors/local/run-command.js';

let directory: string;
/** Processes the commands under test started and may have left behind; killed at the end. */
const startedPids = new Set<number>();

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'run-command-'));
});

afterAll(async () => {
  for (const pid of startedPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await rm(directory, { recursive: true, force: true });
});

function request(command: string, overrides: Partial<CommandRequest> = {}): CommandRequest {
  return { command, cwd: directory, timeoutMs: 10_000, maxOutputBytes: 64 * 1024, ...overrides };
}

/** Alive per `process.kill(pid, 0)`, counting an unreaped zombie as dead (it runs nothing). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

async function waitUntilDead(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isAlive(pid);
}

async function readPid(file: string): Promise<number> {
  const pid = Number((await readFile(file, 'utf8')).trim());
  expect(Number.isInteger(pid) && pid > 1).toBe(true);
  startedPids.add(pid);
  return pid;
}

/**
 * A command whose grandchild writes its pid to `file` and sleeps: top bash → subshell →
 * bash that becomes `sleep`. `; true` keeps bash from exec-ing, so the levels stay separate.
 */
function grandchildCommand(file: string, prefix = ''): string {
  return `( ${prefix}bash -c 'echo $$ > ${file}; exec sleep 300'; true ) & wait`;
}

describe('runCommand', () => {
  it('reports exit codes and success', async () => {
    expect((await runCommand(request('exit 0'))).exitCode).toBe(0);
    const failed = await runCommand(request('echo before; exit 3'));
    expect(failed).toMatchObject({ exitCode: 3, signal: null, output: 'before\n', timedOut: false, aborted: false });
    expect(failed.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('reports the signal that killed the command', async () => {
    const result = await runCommand(request('kill -KILL $$'));
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe('SIGKILL');
  });

  it('interleaves stdout and stderr in arrival order', async () => {
    const result = await runCommand(request('echo out1; sleep 0.1; echo err1 >&2; sleep 0.1; echo out2; sleep 0.1; echo err2 >&2'));
    expect(result.output).toBe('out1\nerr1\nout2\nerr2\n');
  });

  it('refuses a command holding a NUL byte, naming it, instead of running the part before it', async () => {
    const executor = new LocalExecutor({ name: 'local' });
    const marker = path.join(directory, 'cut-short');
    await expect(executor.run(request(`touch ${marker}\0; echo rest`))).rejects.toThrow(/argument 2 must be a string without null bytes/);
    await expect(executor.run(request('echo ok', { env: { BAD: 'a\0b' } }))).rejects.toThrow(/the environment variable "BAD" must be a string without null bytes/);
    expect(() => readFileSync(marker)).toThrow(/ENOENT/);
    await executor.close();
  });

  it('reports a command too long for the system (E2BIG) as an error that says so', async () => {
    // Linux refuses any single argument over 128 KiB (MAX_ARG_STRLEN), whatever the total limit.
    const executor = new LocalExecutor({ name: 'local' });
    await expect(executor.run(request(`echo ${'x'.repeat(200 * 1024)}`))).rejects.toThrow(/E2BIG/);
    await executor.close();
  });

  it('runs in the working directory with extra environment variables and closed stdin', async () => {
    const result = await runCommand(request('pwd; echo "$GREETING"; cat; echo done', { env: { GREETING: 'hello there' } }));
    expect(result.output).toBe(`${directory}\nhello there\ndone\n`);
  });

  it('keeps the head and the tail within maxOutputBytes, naming the omitted range', async () => {
    const result = await runCommand(request("head -c 100000 /dev/zero | tr '\\0' a; sleep 0.1; echo tail >&2", { maxOutputBytes: 1000 }));
    const omitted = 100000 + 'tail\n'.length - 1000;
    expect(result.output).toBe(`${'a'.repeat(500)}\n[… ${omitted} bytes omitted (bytes 501–${500 + omitted} of 100005, lines 1–1 of 1) …]\n${'a'.repeat(495)}tail\n`);
    expect(result.truncated).toBe(true);
    expect(result.omittedBytes).toBe(omitted);
    expect(result.exitCode).toBe(0);

    const small = await runCommand(request('printf abc', { maxOutputBytes: 3 }));
    expect(small).toMatchObject({ output: 'abc', truncated: false, omittedBytes: 0 });
  });

  it('does not split a multi-byte character at the cap', async () => {
    const result = await runCommand(request("printf 'ééééééé'", { maxOutputBytes: 5 }));
    expect(result.output).toBe('é\n[… 10 bytes omitted (bytes 3–12 of 14, lines 1–1 of 1) …]\né');
    expect(result.truncated).toBe(true);
  });

  it('streams chunks through onOutput in order, while the command runs', async () => {
    const chunks: string[] = [];
    // The command goes on only once onOutput has had its first line: it cannot end otherwise.
    const go = path.join(directory, 'first-streamed');
    const result = await runCommand(
      request(`echo first; while [ ! -e ${go} ]; do sleep 0.02; done; echo second; sleep 0.1; echo third`, {
        onOutput: (text) => {
          chunks.push(text);
          if (text.includes('first')) writeFileSync(go, '');
        },
      }),
    );
    expect(chunks.join('')).toBe(result.output);
    expect(result.output).toBe('first\nsecond\nthird\n');
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks[0]).toBe('first\n');
  });

  it('kills the whole process group, grandchild included, on timeout', async () => {
    const file = path.join(directory, 'timeout-grandchild.pid');
    const started = Date.now();
    // The limit leaves a loaded machine time to start the grandchild, which writes its pid.
    const result = await runCommand(request(grandchildCommand(file), { timeoutMs: 1500 }));
    expect(Date.now() - started).toBeLessThan(4500);
    expect(result.timedOut).toBe(true);
    expect(result.aborted).toBe(false);
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe('SIGTERM');
    const grandchild = await readPid(file);
    expect(await waitUntilDead(grandchild, 2000)).toBe(true);
  });

  it('kills descendants that left the process group with setsid', async () => {
    const file = path.join(directory, 'timeout-setsid.pid');
    const result = await runCommand(request(`${grandchildCommand(file, 'setsid ')}`, { timeoutMs: 1500 }));
    expect(result.timedOut).toBe(true);
    const escaped = await readPid(file);
    expect(await waitUntilDead(escaped, 2000)).toBe(true);
  });

  it('escalates to SIGKILL when the command ignores SIGTERM', async () => {
    const file = path.join(directory, 'stubborn.pid');
    const started = Date.now();
    const result = await runCommand(request(`trap '' TERM; ${grandchildCommand(file)}`, { timeoutMs: 1500 }));
    const elapsed = Date.now() - started;
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGKILL');
    // The limit, then the grace period after TERM (KILL_GRACE_MS, 2 s).
    expect(elapsed).toBeGreaterThan(1500 + 1500);
    expect(elapsed).toBeLessThan(8000);
    const grandchild = await readPid(file);
    expect(await waitUntilDead(grandchild, 2000)).toBe(true);
  });

  it('kills the whole process group when the signal aborts', async () => {
    const file = path.join(directory, 'abort-grandchild.pid');
    const controller = new AbortController();
    const running = runCommand(request(grandchildCommand(file), { signal: controller.signal }));
    // Aborted once the grandchild runs (it wrote its pid).
    await until(() => fileWritten(file), 10_000, 'the grandchild to write its pid');
    const started = Date.now();
    controller.abort();
    const result = await running;
    expect(Date.now() - started).toBeLessThan(2500);
    expect(result).toMatchObject({ aborted: true, timedOut: false, exitCode: null, signal: 'SIGTERM' });
    const grandchild = await readPid(file);
    expect(await waitUntilDead(grandchild, 2000)).toBe(true);
  });

  it('does not start a command whose signal is already aborted', async () => {
    const marker = path.join(directory, 'should-not-exist');
    const result = await runCommand(request(`touch ${marker}`, { signal: AbortSignal.abort() }));
    expect(result.aborted).toBe(true);
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/);
  });

  it.each([
    ['a background child', 'sleep 30 & echo $!; echo foreground done'],
    ['a setsid background child', 'setsid sleep 600 & echo $!; echo foreground done'],
  ])('returns within a second of the foreground exit despite %s holding stdout', async (_label, command) => {
    const started = Date.now();
    const result = await runCommand(request(command));
    const elapsed = Date.now() - started;
    const leftover = Number(result.output.split('\n')[0]);
    expect(Number.isInteger(leftover) && leftover > 1).toBe(true);
    startedPids.add(leftover);
    // Well under the background child's 30 s, with room for a loaded machine's start of bash.
    expect(elapsed).toBeLessThan(2500);
    expect(result.durationMs).toBeLessThan(2500);
    expect(result.exitCode).toBe(0);
    expect(result.output.endsWith('foreground done\n')).toBe(true);
    // Background jobs are the command's business, as in any shell: they keep running.
    expect(isAlive(leftover)).toBe(true);
    process.kill(leftover, 'SIGKILL');
  });

  it('rejects with an error naming the directory when the command cannot start', async () => {
    const missing = path.join(directory, 'no-such-directory');
    await expect(runCommand(request('true', { cwd: missing }))).rejects.toThrow(missing);
  });
});

describe('LocalExecutor', () => {
  it('runs commands and describes itself', async () => {
    const executor = new LocalExecutor({ name: 'local' });
    expect(executor.kind).toBe('local');
    expect(executor.name).toBe('local');
    const result = await executor.run(request('echo hi; exit 4'));
    expect(result).toMatchObject({ exitCode: 4, output: 'hi\n' });
    await executor.close();
  });

  it('close() kills commands still running and refuses new ones', async () => {
    const executor = new LocalExecutor({ name: 'local' });
    const file = path.join(directory, 'close-grandchild.pid');
    const running = executor.run(request(`${grandchildCommand(file)}`));
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline) {
      const written = await readFile(file, 'utf8').catch(() => '');
      if (written.trim() !== '') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const started = Date.now();
    await executor.close();
    expect(Date.now() - started).toBeLessThan(2500);
    const result = await running;
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe('SIGTERM');
    const grandchild = await readPid(file);
    expect(await waitUntilDead(grandchild, 2000)).toBe(true);
    await expect(executor.run(request('true'))).rejects.toThrow(/closed/);
  });
});
