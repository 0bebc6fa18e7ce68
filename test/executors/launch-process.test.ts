/**
 * Starting local programs (`src/executors/local/launch-process.ts`): the same behaviour from the
 * `posix_spawn` addon and from `child_process`, and what the addon is there for, that starting a
 * program does not write-protect the server's memory.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findProgram, launchProcess, processLauncher, type LaunchedProcess, type LaunchOptions } from '../../src/executors/local/launch-process.js';

const native = processLauncher() === 'posix_spawn';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'openvaala-launch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Outcome {
  stdout: string;
  stderr: string;
  events: string[];
  exit?: [number | null, string | null];
  error?: NodeJS.ErrnoException;
}

/** Runs a program to its `close` (or `error`), with everything it printed and the order of its events. */
function run(file: string, args: string[], options: LaunchOptions, input?: string): Promise<Outcome & { child: LaunchedProcess }> {
  const child = launchProcess(file, args, options);
  const outcome: Outcome = { stdout: '', stderr: '', events: [] };
  child.stdout?.on('data', (chunk: Buffer) => (outcome.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (outcome.stderr += chunk.toString()));
  if (input !== undefined) child.stdin?.end(input);
  return new Promise((resolve) => {
    child.once('error', (error) => {
      outcome.events.push('error');
      outcome.error = error;
      // Only a `close` may follow an error (child_process sends one); give a stray event the time to show up.
      setTimeout(() => resolve({ ...outcome, child }), 50);
    });
    child.once('exit', (code, signal) => {
      outcome.events.push('exit');
      outcome.exit = [code, signal];
    });
    child.once('close', (code, signal) => {
      outcome.events.push('close');
      if (outcome.error) return;
      expect([code, signal]).toEqual(outcome.exit);
      resolve({ ...outcome, child });
    });
  });
}

const launchers = (native ? ['posix_spawn', 'child_process'] : ['child_process']) as Array<'posix_spawn' | 'child_process'>;

describe.each(launchers)('launchProcess with %s', (launcher) => {
  const options = (extra: Partial<LaunchOptions> = {}): LaunchOptions => ({ cwd: scratch, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdin: 'ignore', launcher, ...extra });

  it('gives stdout and stderr apart, then exit and close with the exit code', async () => {
    const outcome = await run('bash', ['-c', 'echo out; echo err >&2; exit 3'], options());
    expect(outcome).toMatchObject({ stdout: 'out\n', stderr: 'err\n', events: ['exit', 'close'], exit: [3, null] });
    expect(outcome.child.pid).toBeGreaterThan(0);
  });

  it('reports the signal that ended the program by name', async () => {
    const outcome = await run('bash', ['-c', 'kill -TERM $$'], options());
    expect(outcome.exit).toEqual([null, 'SIGTERM']);
  });

  it('makes the program the leader of a new session and process group', async () => {
    const outcome = await run('bash', ['-c', 'echo $$; cat /proc/$$/stat'], options());
    const [pid, stat] = outcome.stdout.split('\n');
    const fields = (stat ?? '').slice((stat ?? '').lastIndexOf(')') + 2).split(' ');
    expect(Number(pid)).toBe(outcome.child.pid);
    // Fields 5 and 6 of /proc/PID/stat: process group and session (proc(5)).
    expect([Number(fields[2]), Number(fields[3])]).toEqual([outcome.child.pid, outcome.child.pid]);
  });

  it('starts the program with no signal blocked or ignored, so a pipeline ends on SIGPIPE', async () => {
    // Node.js ignores SIGPIPE; inherited, `yes` would fail with EPIPE instead of being killed.
    const outcome = await run('bash', ['-c', 'grep -E "^Sig(Blk|Ign)" /proc/self/status; yes | head -n 1; echo "yes ended with ${PIPESTATUS[0]}"'], options());
    const mask = (name: string): bigint => BigInt(`0x${new RegExp(`^${name}:\\s*([0-9a-f]+)$`, 'm').exec(outcome.stdout)?.[1] ?? 'ffff'}`);
    expect(mask('SigBlk')).toBe(0n);
    // Signals 1 to 31 (bits 0 to 30); glibc's posix_spawn ignores its own internal 32 and 33, which glibc sets up again in the new program.
    expect(mask('SigIgn') & 0x7fffffffn).toBe(0n);
    expect(outcome.stdout).toContain('yes ended with 141');
    expect(outcome.stderr).toBe('');
  });

  it('passes exactly the environment given', async () => {
    process.env.OPENVAALA_LAUNCH_TEST_SECRET = 'server-only';
    try {
      const outcome = await run('bash', ['-c', 'echo "given=$GIVEN secret=${OPENVAALA_LAUNCH_TEST_SECRET-unset}"'], options({ env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIVEN: 'a b=c' } }));
      expect(outcome.stdout).toBe('given=a b=c secret=unset\n');
    } finally {
      delete process.env.OPENVAALA_LAUNCH_TEST_SECRET;
    }
  });

  it('throws, naming the value, for a NUL byte in an argument, the working directory or the environment', () => {
    expect(() => launchProcess('bash', ['-c', 'echo a\0b'], options())).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message: expect.stringContaining('argument 2 must be a string without null bytes') }));
    expect(() => launchProcess('bash', ['-c', 'true'], options({ cwd: `${scratch}\0x` }))).toThrow(/the working directory must be a string without null bytes/);
    expect(() => launchProcess('bash', ['-c', 'true'], options({ env: { PATH: '/usr/bin:/bin', KEY: 'x\0y' } }))).toThrow(/the environment variable "KEY" must be/);
    expect(() => launchProcess('bash', ['-c', 'true'], options({ env: { PATH: '/usr/bin:/bin', 'KEY=x': 'y' } }))).toThrow(/the environment variable name "KEY=x" must not hold "="/);
    expect(() => launchProcess('ba\0sh', [], options())).toThrow(/the program must be/);
  });

  it('names SIGABRT and SIGIO by their usual names, not their aliases', async () => {
    expect((await run('bash', ['-c', 'kill -ABRT $$'], options())).exit).toEqual([null, 'SIGABRT']);
    expect((await run('bash', ['-c', 'kill -IO $$'], options())).exit).toEqual([null, 'SIGIO']);
  });

  it('sees a program installed on the PATH at once, and says EACCES for a file of that name that is not executable', async () => {
    const [first, second] = [mkdtempSync(path.join(scratch, 'first-')), mkdtempSync(path.join(scratch, 'second-'))];
    const install = (directory: string, text: string, mode = 0o755): void => {
      writeFileSync(path.join(directory, 'openvaala-path-probe'), `#!/bin/sh\necho ${text}\n`);
      chmodSync(path.join(directory, 'openvaala-path-probe'), mode);
    };
    const searched = options({ env: { PATH: `${first}:${second}:/usr/bin:/bin` } });
    install(second, 'second');
    expect((await run('openvaala-path-probe', [], searched)).stdout).toBe('second\n');
    install(first, 'first');
    expect((await run('openvaala-path-probe', [], searched)).stdout).toBe('first\n');
    rmSync(path.join(first, 'openvaala-path-probe'));
    rmSync(path.join(second, 'openvaala-path-probe'));
    install(second, 'plain', 0o644);
    const refused = await run('openvaala-path-probe', [], searched);
    expect(refused.events[0]).toBe('error');
    expect(refused.error).toMatchObject({ code: 'EACCES', message: 'spawn openvaala-path-probe EACCES' });
  });

  it('runs a script without a #! line with sh, as execvp does', async () => {
    const script = path.join(mkdtempSync(path.join(scratch, 'plain-script-')), 'no-shebang');
    writeFileSync(script, 'echo "ran by sh with $1"\n');
    chmodSync(script, 0o755);
    expect(await run(script, ['an argument'], options())).toMatchObject({ stdout: 'ran by sh with an argument\n', exit: [0, null] });
  });

  it('runs in the working directory given', async () => {
    const outcome = await run('pwd', [], options());
    expect(outcome.stdout.trim()).toBe(scratch);
  });

  it('feeds a stdin pipe, and reads /dev/null without one', async () => {
    expect((await run('cat', [], options({ stdin: 'pipe' }), 'typed\n')).stdout).toBe('typed\n');
    const ignored = await run('cat', [], options());
    expect(ignored).toMatchObject({ stdout: '', exit: [0, null] });
    expect(ignored.child.stdin ?? null).toBeNull();
  });

  it('looks a bare program name up on the PATH of the environment given, not the server’s', async () => {
    const bin = mkdtempSync(path.join(scratch, 'bin-'));
    writeFileSync(path.join(bin, 'openvaala-launch-probe'), '#!/bin/sh\necho "probe $1"\n');
    chmodSync(path.join(bin, 'openvaala-launch-probe'), 0o755);
    const found = await run('openvaala-launch-probe', ['ran'], options({ env: { PATH: `${bin}:/usr/bin:/bin` } }));
    expect(found).toMatchObject({ stdout: 'probe ran\n', exit: [0, null] });
    const missing = await run('openvaala-launch-probe', [], options({ env: { PATH: '/usr/bin:/bin' } }));
    expect(missing.events[0]).toBe('error');
    expect(missing.error).toMatchObject({ code: 'ENOENT', message: 'spawn openvaala-launch-probe ENOENT' });
  });

  it('emits an ENOENT error, and no exit, for a working directory that does not exist', async () => {
    const outcome = await run('bash', ['-c', 'echo never'], options({ cwd: path.join(scratch, 'gone') }));
    expect(outcome.events.filter((event) => event !== 'close')).toEqual(['error']);
    expect(outcome.error).toMatchObject({ code: 'ENOENT', message: 'spawn bash ENOENT' });
    expect(outcome.child.pid).toBeUndefined();
  });

  it('waits for close until the stdout a background child still holds is closed', async () => {
    const outcome = await run('bash', ['-c', 'echo first; (sleep 0.3; echo late) &'], options());
    expect(outcome.stdout).toBe('first\nlate\n');
    expect(outcome.exit).toEqual([0, null]);
  });
});

describe.runIf(native)('launchProcess with posix_spawn, beyond child_process', () => {
  it('refuses at the addon itself a string holding a NUL byte, rather than cut it there', () => {
    const addon = createRequire(import.meta.url)('@openvaala/spawn-process') as { spawn(...args: unknown[]): unknown };
    const marker = path.join(scratch, 'addon-cut-short');
    expect(() => addon.spawn('/bin/sh', ['sh', '-c', `touch ${marker}\0; true`], [], scratch, false, () => undefined)).toThrow(/none holding a NUL byte/);
    expect(() => addon.spawn('/bin/sh', ['sh', '-c', 'true'], [], `${scratch}\0/elsewhere`, false, () => undefined)).toThrow(TypeError);
    expect(existsSync(marker)).toBe(false);
  });

  it('gives the program no descriptor beyond stdin, stdout and stderr, even one inherited without close-on-exec', async () => {
    // A test worker holds its IPC channel without close-on-exec, as a server started by another program may.
    const outcome = await run('bash', ['-c', 'ls -1 /proc/$$/fd; exit 0'], { cwd: scratch, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdin: 'ignore', launcher: 'posix_spawn' });
    const descriptors = outcome.stdout.trim().split('\n').map(Number);
    // bash may keep 255 for itself.
    expect(descriptors.filter((fd) => fd !== 255)).toEqual([0, 1, 2]);
  });
});

describe.runIf(native)('launchProcess with posix_spawn, in a process of its own', () => {
  const launcherUrl = pathToFileURL(path.resolve('dist/src/executors/local/launch-process.js')).href;

  /** Runs an ES module script in a new `node` (through `bash -c` when `shellPrefix` is given) and returns its status and output. */
  function runScript(script: string, shellPrefix = ''): { status: number | null; stdout: string; stderr: string } {
    const result = spawnSync('bash', ['-c', `${shellPrefix} exec "$NODE" --input-type=module -e "$SCRIPT"`], { env: { ...process.env, NODE: process.execPath, SCRIPT: script }, encoding: 'utf8', timeout: 60_000 });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it('lets a worker thread end while its command still runs, without bringing the process down', () => {
    const { status, stdout, stderr } = runScript(`
      import { Worker } from 'node:worker_threads';
      const worker = new Worker(\`
        Promise.all([import(\${JSON.stringify(${JSON.stringify(launcherUrl)})}), import('node:worker_threads')]).then(([{ launchProcess }, { parentPort }]) => {
          const child = launchProcess('sleep', ['30'], { cwd: '/', env: process.env, stdin: 'ignore', launcher: 'posix_spawn' });
          parentPort.postMessage(child.pid);
        });
      \`, { eval: true });
      const pid = await new Promise((resolve) => worker.once('message', resolve));
      await worker.terminate();
      process.kill(pid, 'SIGKILL');
      console.log('still here');
    `);
    expect(stderr).toBe('');
    expect({ status, stdout }).toEqual({ status: 0, stdout: 'still here\n' });
  });

  it('out of descriptors, either runs the program and reports its exit, or reports EMFILE and has not run it', () => {
    const markers = mkdtempSync(path.join(scratch, 'descriptors-'));
    const { status, stdout, stderr } = runScript(`
      import { closeSync, existsSync, openSync } from 'node:fs';
      const { launchProcess } = await import(${JSON.stringify(launcherUrl)});
      const outcomes = [];
      for (let free = 0; free <= 10; free++) {
        const held = [];
        try { for (;;) held.push(openSync('/dev/null', 'r')); } catch {}
        for (let index = 0; index < free; index++) closeSync(held.pop());
        const marker = ${JSON.stringify(markers)} + '/ran-' + free;
        const outcome = await new Promise((resolve) => {
          const child = launchProcess('bash', ['-c', 'echo > ' + marker], { cwd: '/', env: process.env, stdin: 'pipe', launcher: 'posix_spawn' });
          child.once('error', (error) => resolve('error ' + error.code));
          child.once('close', (code) => resolve('exit ' + code));
        });
        for (const fd of held) closeSync(fd);
        outcomes.push({ free, outcome, ran: existsSync(marker) });
      }
      console.log(JSON.stringify(outcomes));
    `, 'ulimit -n 64;');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const outcomes = JSON.parse(stdout) as { free: number; outcome: string; ran: boolean }[];
    for (const { outcome, ran } of outcomes) expect({ outcome, ran }).toEqual(outcome === 'exit 0' ? { outcome, ran: true } : { outcome: 'error EMFILE', ran: false });
    // Both kinds happened: the test did reach the limit, and got past it.
    expect(outcomes[0]?.outcome).toBe('error EMFILE');
    expect(outcomes.at(-1)?.outcome).toBe('exit 0');
  });
});

describe('findProgram', () => {
  it('takes a path with a slash as given, finds a bare name on the search path, and says EACCES when only a non-executable file has the name', () => {
    const bin = mkdtempSync(path.join(scratch, 'find-'));
    writeFileSync(path.join(bin, 'plain'), 'not executable');
    expect(findProgram('./tool', '/usr/bin', '/work')).toEqual({ path: './tool' });
    expect(findProgram('plain', `${bin}:/usr/bin`, '/')).toEqual({ code: 'EACCES' });
    expect(findProgram('openvaala-no-such-program', `${bin}:/usr/bin`, '/')).toEqual({ code: 'ENOENT' });
    expect(findProgram('sh', `${bin}:/usr/bin:/bin`, '/')).toEqual({ path: expect.stringMatching(/^\/(usr\/)?bin\/sh$/) as unknown as string });
  });
});

describe.runIf(native)('the cost of starting a program to the server', () => {
  /**
   * Writes every page of a 32 MiB buffer after each of 10 starts and counts the page faults.
   * A fork write-protects the parent's private memory, so each start costs a fault per page
   * written afterwards (8,192 here); posix_spawn shares the memory until exec and costs none.
   */
  async function faultsWhileWriting(launcher: 'posix_spawn' | 'child_process'): Promise<number> {
    const pages = 8192;
    const buffer = Buffer.alloc(pages * 4096, 1);
    let faults = 0;
    for (let round = 0; round < 10; round++) {
      await run('true', [], { cwd: scratch, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdin: 'ignore', launcher });
      const before = process.resourceUsage().minorPageFault;
      for (let page = 0; page < pages; page++) buffer[page * 4096] = round;
      faults += process.resourceUsage().minorPageFault - before;
    }
    return faults;
  }

  it('does not make the server fault on the memory it writes after a start (a fork does)', async () => {
    const spawned = await faultsWhileWriting('posix_spawn');
    const forked = await faultsWhileWriting('child_process');
    expect(spawned).toBeLessThan(8192);
    expect(forked).toBeGreaterThan(8 * 8192);
  });
});
