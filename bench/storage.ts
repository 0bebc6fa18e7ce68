/**
 * Storage benchmark. Each figure is printed next to a baseline measured in the same run on
 * the same disk:
 *   - FileLogStorage append latency (1-entry and 100-entry batches) vs a raw
 *     `fs.writeSync` + `fs.fsyncSync` loop in the same directory;
 *   - reading the last 100 entries of a 1,000,000-entry stream vs reading the file's last
 *     64 KiB raw;
 *   - SqliteRecordStorage first list page over 100,000 records vs a raw better-sqlite3 SELECT;
 *   - `conversation/list` through the dao and `reindex` (see `storage-index.ts`);
 *   - the same measurements on PostgreSQL, on a throwaway cluster (see `storage-postgres.ts`),
 *     and a table of both backends side by side.
 *
 * Usage: `node dist/bench/storage.js [directory]` (default: a new directory under the
 * system temp directory, removed afterwards). Targets: append median within 1.3x of the raw
 * loop; last 100 of 1M within 5 ms; list first page at 100k within 5 ms; reindex at least
 * 300,000 items/s.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { FileLogStorage, SqliteRecordStorage } from '../src/storage/index.js';
import { benchmarkConversationList, benchmarkReindex } from './storage-index.js';
import { benchmarkPostgres, type PostgresFigures } from './storage-postgres.js';

const APPEND_ROUNDS = 1000;
const READ_ROUNDS = 200;
const LIST_ROUNDS = 300;
const STREAM_ENTRIES = 1_000_000;
const RECORDS = 100_000;
const TAIL_BYTES = 64 * 1024;

interface Summary {
  median: number;
  p99: number;
}

function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((left, right) => left - right);
  const at = (fraction: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] as number;
  return { median: at(0.5), p99: at(0.99) };
}

function milliseconds(value: number): string {
  return `${value.toFixed(3)} ms`;
}

function report(label: string, measured: Summary, baselineLabel: string, baseline: Summary): void {
  console.log(
    `${label.padEnd(44)} median ${milliseconds(measured.median).padStart(10)}  p99 ${milliseconds(measured.p99).padStart(10)}` +
      `   | ${baselineLabel}: median ${milliseconds(baseline.median)}  p99 ${milliseconds(baseline.p99)}` +
      `   | ratio median ${(measured.median / baseline.median).toFixed(2)}x  p99 ${(measured.p99 / baseline.p99).toFixed(2)}x`,
  );
}

function entry(index: number): { n: number; kind: string; text: string } {
  return { n: index, kind: 'assistant_message', text: `entry ${index} of the benchmark stream` };
}

/** A batch as FileLogStorage writes it, for the raw baseline to write the same bytes. */
function rawLines(count: number, firstSeq: number): Buffer {
  let text = '';
  for (let index = 0; index < count; index += 1) text += `${JSON.stringify({ seq: firstSeq + index, value: entry(index) })}\n`;
  return Buffer.from(text);
}

function fsyncOnThreadPool(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
}

/**
 * Interleaves one storage append, one raw synchronous append and one raw append with the
 * fsync on the thread pool, round after round, so drift in the disk's behaviour hits all
 * alike. The third series shows the floor for any append that does not block the event
 * loop: the thread-pool round trip of an asynchronous fsync.
 */
async function benchmarkAppends(directory: string, batchSize: number): Promise<{ storage: Summary; raw: Summary; rawAsync: Summary }> {
  const logs = new FileLogStorage(path.join(directory, `append-${batchSize}`));
  const fd = fs.openSync(path.join(directory, `append-${batchSize}-raw.jsonl`), 'a');
  const asyncFd = fs.openSync(path.join(directory, `append-${batchSize}-raw-async.jsonl`), 'a');
  const batch = Array.from({ length: batchSize }, (_, index) => entry(index));
  const samples = { storage: [] as number[], raw: [] as number[], rawAsync: [] as number[] };
  for (let round = -20; round < APPEND_ROUNDS; round += 1) {
    let started = performance.now();
    await logs.append('bench', 'main', batch);
    const storageTime = performance.now() - started;
    started = performance.now();
    fs.writeSync(fd, rawLines(batchSize, round));
    fs.fsyncSync(fd);
    const rawTime = performance.now() - started;
    started = performance.now();
    fs.writeSync(asyncFd, rawLines(batchSize, round));
    await fsyncOnThreadPool(asyncFd);
    const rawAsyncTime = performance.now() - started;
    // The first rounds create the files and settle caches; they are not counted.
    if (round < 0) continue;
    samples.storage.push(storageTime);
    samples.raw.push(rawTime);
    samples.rawAsync.push(rawAsyncTime);
  }
  fs.closeSync(fd);
  fs.closeSync(asyncFd);
  await logs.close();
  return { storage: summarize(samples.storage), raw: summarize(samples.raw), rawAsync: summarize(samples.rawAsync) };
}

async function benchmarkTail(directory: string): Promise<Summary> {
  const root = path.join(directory, 'tail');
  const writer = new FileLogStorage(root);
  const started = performance.now();
  const batchSize = 10_000;
  for (let first = 1; first <= STREAM_ENTRIES; first += batchSize) {
    await writer.append('bench', 'main', Array.from({ length: batchSize }, (_, index) => entry(first + index)));
  }
  await writer.close();
  const file = path.join(root, 'bench', 'main.jsonl');
  const size = fs.statSync(file).size;
  console.log(`(wrote ${STREAM_ENTRIES.toLocaleString('en')} entries, ${(size / 1024 / 1024).toFixed(1)} MiB, in ${((performance.now() - started) / 1000).toFixed(1)} s)`);

  const cold: number[] = [];
  const rawCold: number[] = [];
  for (let round = 0; round < READ_ROUNDS; round += 1) {
    let began = performance.now();
    const logs = new FileLogStorage(root);
    const entries = await logs.read('bench', 'main', { direction: 'backward', limit: 100 });
    cold.push(performance.now() - began);
    await logs.close();
    if (entries.length !== 100 || entries[0]?.seq !== STREAM_ENTRIES) throw new Error('tail read returned the wrong entries');
    began = performance.now();
    const fd = fs.openSync(file, 'r');
    const buffer = Buffer.allocUnsafe(TAIL_BYTES);
    fs.readSync(fd, buffer, 0, TAIL_BYTES, size - TAIL_BYTES);
    fs.closeSync(fd);
    rawCold.push(performance.now() - began);
  }
  report('last 100 of 1M, new storage each time', summarize(cold), 'raw open+read 64 KiB+close', summarize(rawCold));

  const warm: number[] = [];
  const rawWarm: number[] = [];
  const logs = new FileLogStorage(root);
  await logs.read('bench', 'main', { direction: 'backward', limit: 1 });
  const fd = fs.openSync(file, 'r');
  for (let round = 0; round < READ_ROUNDS; round += 1) {
    let began = performance.now();
    await logs.read('bench', 'main', { direction: 'backward', limit: 100 });
    warm.push(performance.now() - began);
    began = performance.now();
    const buffer = Buffer.allocUnsafe(TAIL_BYTES);
    fs.readSync(fd, buffer, 0, TAIL_BYTES, size - TAIL_BYTES);
    rawWarm.push(performance.now() - began);
  }
  const cursor: number[] = [];
  for (let round = 0; round < READ_ROUNDS; round += 1) {
    const after = STREAM_ENTRIES - 100 - ((round * 7919) % 100_000);
    const began = performance.now();
    await logs.read('bench', 'main', { after, limit: 100 });
    cursor.push(performance.now() - began);
  }
  fs.closeSync(fd);
  await logs.close();
  report('last 100 of 1M, open storage', summarize(warm), 'raw read 64 KiB, open fd', summarize(rawWarm));
  report('100 after a cursor in the last 100k of 1M', summarize(cursor), 'raw read 64 KiB, open fd', summarize(rawWarm));
  const target = summarize(cold).median <= 5 && summarize(warm).median <= 5;
  console.log(`target "last 100 of 1M <= 5 ms" (median, new and open storage): ${target ? 'met' : 'NOT met'}`);
  return summarize(warm);
}

async function benchmarkRecords(directory: string): Promise<{ list: Summary; listFiltered: Summary }> {
  const database = new Database(path.join(directory, 'metadata.db'));
  const records = new SqliteRecordStorage(database);
  records.defineNamespace({ name: 'conversations', filterFields: ['cwd'] });
  for (let first = 0; first < RECORDS; first += 10_000) {
    await records.mset(
      'conversations',
      Array.from({ length: 10_000 }, (_, index) => {
        const number = first + index;
        return { key: `conv_${String(number).padStart(8, '0')}`, value: { title: `Conversation ${number}`, cwd: `/home/dev/project-${number % 20}` }, updatedAt: 1_700_000_000_000 + ((number * 7919) % RECORDS) * 1000 };
      }),
    );
  }
  database.exec('ANALYZE');
  const rawStatement = database.prepare('SELECT key, value, updated_at FROM records_conversations ORDER BY updated_at DESC, key DESC LIMIT 100');
  const rawFiltered = database.prepare(
    "SELECT key, value, updated_at FROM records_conversations WHERE json_extract(value, '$.cwd') = ? ORDER BY updated_at DESC, key DESC LIMIT 100",
  );
  const decode = (rows: unknown[]): unknown[] =>
    (rows as { key: string; value: string; updated_at: number }[]).map((row) => ({ key: row.key, value: JSON.parse(row.value) as unknown, updatedAt: row.updated_at }));
  const measure = async (action: () => unknown): Promise<Summary> => {
    for (let round = 0; round < 20; round += 1) await action();
    const samples: number[] = [];
    for (let round = 0; round < LIST_ROUNDS; round += 1) {
      const began = performance.now();
      await action();
      samples.push(performance.now() - began);
    }
    return summarize(samples);
  };
  const list = await measure(() => records.list('conversations', { orderBy: 'updatedAt', order: 'desc', limit: 100 }));
  report('record list page 1 (100 of 100k, by update time)', list, 'raw SELECT (+JSON.parse)', await measure(() => decode(rawStatement.all())));
  const listFiltered = await measure(() => records.list('conversations', { orderBy: 'updatedAt', order: 'desc', limit: 100, where: { cwd: '/home/dev/project-7' } }));
  report('record list page 1, filtered on cwd', listFiltered, 'raw SELECT (+JSON.parse)', await measure(() => decode(rawFiltered.all('/home/dev/project-7'))));
  await records.close();
  database.close();
  return { list, listFiltered };
}

/** One line per measurement: the embedded backend's median and p99 beside PostgreSQL's. */
function printComparison(embedded: Omit<PostgresFigures, 'search'>, postgres: PostgresFigures): void {
  const cell = (summary: Summary | undefined): string => (summary ? `${milliseconds(summary.median)} / ${milliseconds(summary.p99)}` : '—').padStart(26);
  console.log(`\n${'backends side by side (median / p99)'.padEnd(44)}${'file + SQLite'.padStart(26)}${'PostgreSQL'.padStart(26)}`);
  const rows: [string, keyof PostgresFigures][] = [
    ['append 1 entry', 'append1'],
    ['append 100 entries', 'append100'],
    ['last 100 of 1M (open storage)', 'tail'],
    ['record list page 1 (100 of 100k)', 'list'],
    ['record list page 1, filtered on cwd', 'listFiltered'],
    ['search page 1 (index only, 100k)', 'search'],
  ];
  for (const [label, key] of rows) console.log(`${label.padEnd(44)}${cell(key === 'search' ? undefined : embedded[key])}${cell(postgres[key])}`);
}

/**
 * Runs every storage benchmark and prints its figures.
 * @param given directory to work in (a new directory is made inside it and removed
 *   afterwards); default the system temp directory
 */
export async function runStorageBenchmark(given?: string): Promise<void> {
  const directory = given ? fs.mkdtempSync(path.join(given, 'openvaala-bench-')) : fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-bench-'));
  const started = performance.now();
  console.log(`storage benchmark in ${directory} (node ${process.version}, ${os.cpus().length} CPUs)`);
  try {
    let appendsMet = true;
    const appends: Summary[] = [];
    for (const batchSize of [1, 100]) {
      const { storage, raw, rawAsync } = await benchmarkAppends(directory, batchSize);
      appends.push(storage);
      const label = `append ${batchSize} ${batchSize === 1 ? 'entry' : 'entries'} (FileLogStorage)`;
      report(label, storage, 'raw writeSync+fsyncSync', raw);
      report(label, storage, 'raw writeSync+fs.fsync (thread pool)', rawAsync);
      appendsMet &&= storage.median <= raw.median * 1.3;
    }
    console.log(`target "append median within 1.3x of the raw fsync loop": ${appendsMet ? 'met' : 'NOT met'}`);
    const tail = await benchmarkTail(directory);
    const records = await benchmarkRecords(directory);
    await benchmarkConversationList(directory);
    await benchmarkReindex(directory);
    const postgres = await benchmarkPostgres(report);
    printComparison({ append1: appends[0] as Summary, append100: appends[1] as Summary, tail, ...records }, postgres);
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
  console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runStorageBenchmark(process.argv[2]).catch((error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  });
}
