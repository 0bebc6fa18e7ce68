/**
 * Threat model: every process a sandboxed command starts ends with that command. A daemon
 * that double-forks and calls `setsid` (leaving the command's process group and session)
 * must not outlive the command, whether the command ends by itself, times out, or is a
 * background command that is killed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { requireExecutable } from '../helpers/required-commands.js';

let workspaceRoot: string;
let sandboxed: LocalExecutor;

beforeAll(async () => {
  requireExecutable('bwrap', 'bubblewrap');
  workspaceRoot = await realpath(await mkdtemp(path.join(os.tmpdir(), 'sandbox-daemon-')));
  sandboxed = new LocalExecutor({ name: 'sandboxed', sandbox: 'bwrap' });
});

afterAll(async () => {
  await sandboxed?.close();
  // A failing run must not leave its daemons behind.
  for (const pid of processesWith(`openvaala-daemon-${process.pid}-`)) process.kill(pid, 'SIGKILL');
  await rm(workspaceRoot, { recursive: true, force: true });
});

/** Host processes whose command line carries `marker` (a daemon inside the sandbox is visible from the host). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const commandLine = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (commandLine.includes(marker) && !commandLine.includes('bwrap')) found.push(Number(name));
    } catch {
      // Ended while listing.
    }
  }
  return found;
}

async function waitUntilGone(marker: string, limitMs = 5000): Promise<number[]> {
  const deadline = Date.now() + limitMs;
  let left = processesWith(marker);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = processesWith(marker);
  }
  return left;
}

/** A shell line that starts `sleep` as a daemon: double fork, new session, output detached. */
function daemonLine(marker: string): string {
  // `exec -a` names the sleep so it can be found from the host; setsid leaves the group and session.
  return `( setsid bash -c 'exec -a ${marker} sleep 300' </dev/null >/dev/null 2>&1 & ) ; sleep 0.3`;
}

describe('a double-forked daemon inside the bwrap sandbox', () => {
  it('is dead once the command that started it has ended', async () => {
    const marker = `openvaala-daemon-${process.pid}-ended`;
    const result = await sandboxed.run({ command: `${daemonLine(marker)}; echo started`, cwd: workspaceRoot, workspaceRoot, timeoutMs: 10_000, maxOutputBytes: 4096 });
    expect(result.output).toContain('started');
    expect(await waitUntilGone(marker)).toEqual([]);
  });

  it('is dead once the command that started it timed out', async () => {
    const marker = `openvaala-daemon-${process.pid}-timeout`;
    const result = await sandboxed.run({ command: `${daemonLine(marker)}; sleep 60`, cwd: workspaceRoot, workspaceRoot, timeoutMs: 1500, maxOutputBytes: 4096 });
    expect(result.timedOut).toBe(true);
    expect(await waitUntilGone(marker)).toEqual([]);
  });

  it('is dead once a background command that started it is killed', async () => {
    const marker = `openvaala-daemon-${process.pid}-spawned`;
    const started = sandboxed.spawn({ command: `${daemonLine(marker)}; echo started; sleep 60`, cwd: workspaceRoot, workspaceRoot });
    let output = '';
    started.onOutput((chunk) => (output += chunk));
    const deadline = Date.now() + 5000;
    while (!output.includes('started') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processesWith(marker).length).toBe(1);
    started.kill();
    await started.exited;
    expect(await waitUntilGone(marker)).toEqual([]);
  });
});
