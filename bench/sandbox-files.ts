/**
 * Benchmark: file operations of a sandboxed local executor (each one a round trip to the file
 * server inside bubblewrap) against the same operations with `node:fs` on the unsandboxed
 * executor. Prints the median and p95 per operation in ms (stat, 4 KiB read, 4 KiB atomic
 * write) and the time to start a file server (the first call on a workspace).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Executor } from '../src/executors/executor.js';
import { LocalExecutor } from '../src/executors/local/local-executor.js';
import { Workspace } from '../src/executors/workspace.js';
import { median, percentile, printTable } from './statistics.js';

const ROUNDS = 300;

async function timeEach(rounds: number, operation: (round: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    await operation(round);
    times.push(performance.now() - started);
  }
  return times;
}

function figure(times: number[]): string {
  return `median ${median(times).toFixed(3)} ms, p95 ${percentile(times, 95).toFixed(3)} ms`;
}

async function measure(executor: Executor, root: string): Promise<[string, string][]> {
  new Workspace(executor, root);
  const file = path.join(root, 'file.txt');
  const firstStarted = performance.now();
  await executor.fs.stat(file);
  const first = performance.now() - firstStarted;
  const content = 'x'.repeat(4096);
  const stats = await timeEach(ROUNDS, () => executor.fs.stat(file));
  const reads = await timeEach(ROUNDS, () => executor.fs.readFile(file));
  const writes = await timeEach(ROUNDS, (round) => executor.fs.writeFile(path.join(root, `written-${round % 10}.txt`), content));
  return [
    ['first call', `${first.toFixed(1)} ms`],
    ['stat', figure(stats)],
    ['read 4 KiB', figure(reads)],
    ['write 4 KiB', figure(writes)],
  ];
}

/** Runs the benchmark and prints its tables. */
export async function runSandboxFilesBenchmark(): Promise<void> {
  const base = mkdtempSync(path.join(os.tmpdir(), 'openvaala-bench-files-'));
  try {
    writeFileSync(path.join(base, 'file.txt'), 'y'.repeat(4096));
    const plain = new LocalExecutor({ name: 'local' });
    const sandboxed = new LocalExecutor({ name: 'sandboxed', sandbox: 'bwrap' });
    try {
      printTable(`local, node:fs (${ROUNDS} rounds)`, await measure(plain, base));
      printTable(`local + bwrap, file server in the sandbox (${ROUNDS} rounds)`, await measure(sandboxed, base));
    } finally {
      await plain.close();
      await sandboxed.close();
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runSandboxFilesBenchmark();
