/**
 * An executor that cannot be reached is not a missing directory. Checking a new work location
 * and resolving a tool's path used to turn any failure without an errno code (an SSH host that
 * refuses, a changed host key, a wrong user) into "does not exist" or "goes through a symlink
 * that cannot be resolved", which sent the user, and the model, looking for the wrong fault.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { RuntimeExecutors } from '../../src/runtime/runtime-executors.js';

const UNREACHABLE = 'ssh executor "box" cannot connect to root@127.0.0.1:1: connection refused';

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'work-location-failures-')));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/**
 * A local executor named `box` whose file operations fail as an unreachable SSH host's do (an
 * Error without `code`) once `down` is set.
 */
function unreachable(state = { down: true }): Executor {
  const local = new LocalExecutor({ name: 'box' });
  const fs = new Proxy(local.fs, {
    get: (target, property, receiver) => {
      const real = Reflect.get(target, property, receiver) as unknown;
      if ((property !== 'stat' && property !== 'realPath') || typeof real !== 'function') return real;
      return (...args: unknown[]) => (state.down ? Promise.reject(new Error(UNREACHABLE)) : (real as (...given: unknown[]) => unknown).apply(target, args));
    },
  });
  return new Proxy(local, { get: (target, property, receiver) => (property === 'fs' ? fs : (Reflect.get(target, property, receiver) as unknown)) });
}

describe('an executor that cannot be reached', () => {
  it('is told as such when a work location is checked, not as a missing directory', async () => {
    const executors = new RuntimeExecutors(new Map([['local', new LocalExecutor({ name: 'local' })], ['box', unreachable()]]), () => [], undefined);
    const failure = executors.checkWorkLocation([{ executor: 'box', cwd: '/root' }]);
    await expect(failure).rejects.toThrow(`cwd /root cannot be checked on executor "box": ${UNREACHABLE}`);
    // A directory that is really missing is still said to be missing.
    await expect(executors.checkWorkLocation([{ executor: 'local', cwd: path.join(root, 'nowhere') }])).rejects.toThrow(`cwd ${path.join(root, 'nowhere')} does not exist on executor "local"`);
  });

  it('fails a tool path with its own error, not as a symlink that cannot be resolved', async () => {
    const state = { down: false };
    const workspace = new Workspace(unreachable(state), root);
    // The root was resolved while the host answered; then it went away.
    expect(await workspace.resolveSafe('.')).toBe(root);
    state.down = true;
    const failure = workspace.resolveSafe('.');
    await expect(failure).rejects.toThrow(UNREACHABLE);
    await expect(workspace.resolveSafe('.')).rejects.not.toThrow(/symlink/);
  });
});
