/**
 * Benchmark: start-up of the command line, next to a bare Node.js start measured in the same
 * run. `openvaala --help` loads only the command table (each command's module is imported when
 * it runs), so its cost over `node -e 0` is what the CLI itself adds before doing anything.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, printTable } from './statistics.js';

const SAMPLES = 15;
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/openvaala');

/** Wall time of one run of `node ...args`, in ms. @throws Error when it exits non-zero. */
function timeRun(args: string[]): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return elapsed;
}

/** Runs the benchmark and prints the medians of `--help` and of `node -e 0`, alternating runs so both see the same load. */
export function runStartupBenchmark(): void {
  const bare: number[] = [];
  const help: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    bare.push(timeRun(['-e', '0']));
    help.push(timeRun([CLI, '--help']));
  }
  const baseline = median(bare);
  const cli = median(help);
  printTable('start-up (median of 15, alternating)', [
    ['node -e 0 (baseline)', `${baseline.toFixed(1)} ms`],
    ['openvaala --help', `${cli.toFixed(1)} ms (${(cli / baseline).toFixed(2)}x the baseline)`],
  ]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) runStartupBenchmark();
