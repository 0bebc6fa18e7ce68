/**
 * `npm run bench:output`: the cost of the output rules — the bounded collector that every
 * executor feeds (throughput, and the memory it holds while a command writes far more than
 * its bound), and the cut-and-clean step applied to each tool result when a model request is
 * built.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { OutputCollector } from '../src/executors/output-collector.js';
import { toolOutputForModel } from '../src/tools/terminal-text.js';
import { DEFAULT_TOOL_OUTPUT_LIMIT_BYTES, TOOL_OUTPUT_RETAINED_BYTES } from '../src/tools/tool.js';
import { median, printTable } from './statistics.js';

/** Output written through the collector in the throughput run, in bytes. */
const COLLECTED_BYTES = 512 * 1024 * 1024;
/** Size of one chunk, as a pipe delivers them, in bytes. */
const CHUNK_BYTES = 64 * 1024;

/** A 64 KiB chunk of build-log lines. */
function logChunk(): string {
  let text = '';
  for (let line = 1; text.length < CHUNK_BYTES - 80; line += 1) text += `[${line}] compiling src/ui/feature-${line}.ts ok\n`;
  return text;
}

/** Runs the benchmark and prints its figures. */
export async function runToolOutputBenchmark(): Promise<void> {
  const chunk = logChunk();
  const chunkBytes = Buffer.byteLength(chunk);
  const collector = new OutputCollector(TOOL_OUTPUT_RETAINED_BYTES - 1024);
  const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  let heapPeak = heapBefore;
  const started = performance.now();
  for (let written = 0; written < COLLECTED_BYTES; written += chunkBytes) {
    collector.add(chunk);
    if (written % (64 * 1024 * 1024) < chunkBytes) {
      const usage = process.memoryUsage();
      heapPeak = Math.max(heapPeak, usage.heapUsed + usage.arrayBuffers);
    }
  }
  const result = collector.result();
  const collectMs = performance.now() - started;

  // A 256 KiB coloured result, cut to the model's cap and cleaned, as on every model request.
  const coloured = `${'\u001b[32mPASS\u001b[0m src/test.ts (12 ms)\r\n'.repeat(4000)}\u001b[31mFAIL\u001b[0m at the end\n`.slice(-TOOL_OUTPUT_RETAINED_BYTES);
  const cleanTimes: number[] = [];
  for (let round = 0; round < 50; round += 1) {
    const at = performance.now();
    toolOutputForModel(coloured, DEFAULT_TOOL_OUTPUT_LIMIT_BYTES);
    cleanTimes.push(performance.now() - at);
  }

  printTable('bounded output collector', [
    ['output written', `${COLLECTED_BYTES / 1024 / 1024} MiB in ${CHUNK_BYTES / 1024} KiB chunks`],
    ['throughput', `${((COLLECTED_BYTES / 1024 / 1024) / (collectMs / 1000)).toFixed(0)} MiB/s`],
    ['kept', `${Buffer.byteLength(result.output)} bytes (omitted ${result.omittedBytes})`],
    ['heap + buffers growth (peak)', `${((heapPeak - heapBefore) / 1024 / 1024).toFixed(1)} MiB`],
  ]);
  printTable('model text of one 256 KiB coloured result (cut to 64 KiB, cleaned)', [['median', `${median(cleanTimes).toFixed(2)} ms`]]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runToolOutputBenchmark();
}
