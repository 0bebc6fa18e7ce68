/**
 * A new conversation on a sandboxed local executor may work in any directory of this machine
 * the sandbox can bind, `/tmp` and the home directory included. The check used to ask the
 * sandbox's file server for paths outside every workspace, where `/tmp` and the home directory
 * are empty: `~/project` was refused as "does not exist".
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { RuntimeExecutors } from '../../src/runtime/runtime-executors.js';
import { requireExecutable } from '../helpers/required-commands.js';

let base: string;
let executors: RuntimeExecutors;

beforeAll(async () => {
  requireExecutable('bwrap', 'bubblewrap');
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'sandbox-work-location-')));
  await mkdir(path.join(base, 'project'));
  await writeFile(path.join(base, 'notes.txt'), 'a file');
  const sandboxed = new LocalExecutor({ name: 'sandboxed', sandbox: 'bwrap' });
  executors = new RuntimeExecutors(new Map([['local', new LocalExecutor({ name: 'local' })], ['sandboxed', sandboxed]]), () => [], undefined);
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('a work location on a sandboxed local executor', () => {
  it('may be a directory under /tmp that no workspace holds yet', async () => {
    await expect(executors.checkWorkLocation([{ executor: 'sandboxed', cwd: path.join(base, 'project') }])).resolves.toBeUndefined();
  });

  it('is still refused when missing or not a directory, naming the executor', async () => {
    await expect(executors.checkWorkLocation([{ executor: 'sandboxed', cwd: path.join(base, 'missing') }])).rejects.toThrow(`cwd ${path.join(base, 'missing')} does not exist on executor "sandboxed"`);
    await expect(executors.checkWorkLocation([{ executor: 'sandboxed', cwd: path.join(base, 'notes.txt') }])).rejects.toThrow('is not a directory on executor "sandboxed"');
  });
});
