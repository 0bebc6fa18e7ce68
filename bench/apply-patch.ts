/**
 * Benchmark: `apply_patch` changing one line in the middle of large files on the local
 * executor, next to a raw `readFile` + `writeFile` of the same file measured in the same run.
 *
 * Files of 12.5, 25 and 50 MB (decimal numbers, one per line, like `seq`) show whether the
 * cost grows linearly with the size: the time per MB should stay about the same. The patch
 * also writes atomically (temporary file, fsync, rename), which the raw baseline does not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalExecutor } from '../src/executors/local/local-executor.js';
import { Workspace } from '../src/executors/workspace.js';
import { applyPatchTool } from '../src/tools/apply-patch/index.js';
import { median, printTable } from './statistics.js';

const SIZES_MB = [12.5, 25, 50];
const SAMPLES = 5;

/** `seq 1 N` text of at least `megabytes` MB (10^6 bytes); returns it and its line count. */
function numberLines(megabytes: number): { text: string; lineCount: number } {
  const target = megabytes * 1_000_000;
  const lines: string[] = [];
  let length = 0;
  while (length < target) {
    const line = String(lines.length + 1);
    lines.push(line);
    length += line.length + 1;
  }
  return { text: `${lines.join('\n')}\n`, lineCount: lines.length };
}

async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Runs the benchmark and prints one table per file size, then the time per MB. */
export async function runApplyPatchBenchmark(): Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-bench-apply-patch-'));
  const executor = new LocalExecutor({ name: 'local' });
  const workspace = new Workspace(executor, root);
  const perMegabyte: [string, string][] = [];
  try {
    for (const megabytes of SIZES_MB) {
      const { text, lineCount } = numberLines(megabytes);
      const file = path.join(root, 'big.txt');
      await writeFile(file, text);
      const middle = Math.floor(lineCount / 2);
      const raw: number[] = [];
      const patched: number[] = [];
      for (let sample = 0; sample < SAMPLES; sample++) {
        raw.push(
          await timed(async () => {
            await writeFile(file, await readFile(file));
          }),
        );
        // Alternate between two spellings of the middle line so every sample changes it.
        const [from, to] = sample % 2 === 0 ? [String(middle), `changed ${middle}`] : [`changed ${middle}`, String(middle)];
        const patch = ['*** Begin Patch', '*** Update File: big.txt', '@@', ` ${middle - 1}`, `-${from}`, `+${to}`, ` ${middle + 1}`, '*** End Patch'].join('\n');
        let output = '';
        patched.push(
          await timed(async () => {
            const result = await applyPatchTool.invoke({ patch }, { workspace, signal: new AbortController().signal });
            if (result.isError) throw new Error(`apply_patch failed on the ${megabytes} MB file: ${result.output}`);
            output = result.output;
          }),
        );
        if (!output.startsWith('Success.')) throw new Error(`unexpected apply_patch output: ${output}`);
      }
      const patchMs = median(patched);
      const rawMs = median(raw);
      printTable(`apply_patch: one line in the middle of a ${megabytes} MB file (${lineCount} lines), ${SAMPLES} samples`, [
        ['apply_patch, median', `${patchMs.toFixed(0)} ms`],
        ['baseline: raw readFile + writeFile of the same file, median', `${rawMs.toFixed(0)} ms`],
        ['ratio apply_patch / raw', `${(patchMs / rawMs).toFixed(1)}×`],
      ]);
      perMegabyte.push([`${megabytes} MB`, `${(patchMs / megabytes).toFixed(1)} ms/MB (raw ${(rawMs / megabytes).toFixed(1)} ms/MB)`]);
    }
    printTable('apply_patch time per MB (flat = linear)', perMegabyte);
  } finally {
    await executor.close();
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runApplyPatchBenchmark().catch((error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  });
}
