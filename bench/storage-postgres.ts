/**
 * The PostgreSQL part of the storage benchmark (`bench/storage.ts`): the same measurements as
 * for the file and SQLite backends, on a throwaway cluster started for the run (durable:
 * `fsync` and `synchronous_commit` on), each next to a raw `pg` baseline doing the same SQL
 * work on one connection:
 *   - PostgresLogStorage append latency (1-entry and 100-entry batches) vs a raw
 *     BEGIN / UPDATE / INSERT / COMMIT;
 *   - the last 100 entries of a 1,000,000-entry stream vs the raw SELECT;
 *   - PostgresRecordStorage first list page over 100,000 records (plain and filtered) vs the
 *     raw SELECT;
 *   - PostgresConversationSearchIndex first page of a query matching 5,000 of 100,000
 *     conversations vs the raw SELECT.
 */
import pg from 'pg';
import { PostgresConversationSearchIndex } from '../src/dao/postgres-conversation-search-index.js';
import { PostgresDatabase, PostgresLogStorage, PostgresRecordStorage } from '../src/storage/index.js';
import { startThrowawayPostgres } from './postgres-cluster.js';

const APPEND_ROUNDS = 300;
const READ_ROUNDS = 200;
const STREAM_ENTRIES = 1_000_000;
const RECORDS = 100_000;

/** Median and 99th percentile of a series, ms. */
export interface Summary {
  median: number;
  p99: number;
}

/** The figures printed side by side with the other backends. */
export interface PostgresFigures {
  append1: Summary;
  append100: Summary;
  tail: Summary;
  list: Summary;
  listFiltered: Summary;
  search: Summary;
}

type Report = (label: string, measured: Summary, baselineLabel: string, baseline: Summary) => void;

function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((left, right) => left - right);
  const at = (fraction: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] as number;
  return { median: at(0.5), p99: at(0.99) };
}

async function measure(rounds: number, action: () => Promise<unknown>): Promise<Summary> {
  for (let round = 0; round < 20; round += 1) await action();
  const samples: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const began = performance.now();
    await action();
    samples.push(performance.now() - began);
  }
  return summarize(samples);
}

function entry(index: number): { n: number; kind: string; text: string } {
  return { n: index, kind: 'assistant_message', text: `entry ${index} of the benchmark stream` };
}

/** Interleaves storage and raw appends round after round, so drift hits both alike. */
async function benchmarkAppends(logs: PostgresLogStorage, raw: pg.Client, batchSize: number): Promise<{ storage: Summary; raw: Summary }> {
  const texts = Array.from({ length: batchSize }, (_, index) => JSON.stringify(entry(index)));
  const values = texts.map((text) => JSON.parse(text) as unknown);
  const storageSamples: number[] = [];
  const rawSamples: number[] = [];
  const rawPath = `bench/raw-${batchSize}`;
  await raw.query("INSERT INTO log_streams (path, stream, last_seq) VALUES ($1, 'main', 0)", [rawPath]);
  let rawSeq = 0;
  for (let round = -20; round < APPEND_ROUNDS; round += 1) {
    let began = performance.now();
    await logs.append(`bench/append-${batchSize}`, 'main', values);
    const storageTime = performance.now() - began;
    began = performance.now();
    await raw.query('BEGIN');
    await raw.query("UPDATE log_streams SET last_seq = last_seq + $1 WHERE path = $2 AND stream = 'main'", [batchSize, rawPath]);
    await raw.query("INSERT INTO log_entries (path, stream, seq, value) SELECT $3, 'main', $1::bigint + ordinality, value FROM unnest($2::text[]) WITH ORDINALITY AS batch(value, ordinality)", [rawSeq, texts, rawPath]);
    await raw.query('COMMIT');
    rawSeq += batchSize;
    const rawTime = performance.now() - began;
    if (round < 0) continue;
    storageSamples.push(storageTime);
    rawSamples.push(rawTime);
  }
  return { storage: summarize(storageSamples), raw: summarize(rawSamples) };
}

/**
 * Runs the PostgreSQL measurements on a new throwaway cluster, printing each with `report`.
 * @throws Error when PostgreSQL cannot be started (naming the package to install)
 */
export async function benchmarkPostgres(report: Report): Promise<PostgresFigures> {
  const cluster = await startThrowawayPostgres({ durable: true });
  const database = new PostgresDatabase({ connectionString: cluster.connectionString, maxConnections: 4 });
  const raw = new pg.Client({ connectionString: cluster.connectionString });
  try {
    await database.ready();
    await raw.connect();
    console.log(`PostgreSQL (throwaway cluster on 127.0.0.1:${cluster.port}, fsync on, synchronous_commit on)`);
    const logs = new PostgresLogStorage(database);
    const appends: Summary[] = [];
    for (const batchSize of [1, 100]) {
      const result = await benchmarkAppends(logs, raw, batchSize);
      report(`append ${batchSize} ${batchSize === 1 ? 'entry' : 'entries'} (PostgresLogStorage)`, result.storage, 'raw pg BEGIN/UPDATE/INSERT/COMMIT', result.raw);
      appends.push(result.storage);
    }

    // The 1M-entry stream is loaded in SQL: the figure is about reading it.
    const loaded = performance.now();
    await raw.query(
      `INSERT INTO log_entries (path, stream, seq, value)
       SELECT 'bench/tail', 'main', n, json_build_object('n', n, 'kind', 'assistant_message', 'text', 'entry ' || n || ' of the benchmark stream')::text FROM generate_series(1, ${STREAM_ENTRIES}) AS n`,
    );
    await raw.query(`INSERT INTO log_streams (path, stream, last_seq) VALUES ('bench/tail', 'main', ${STREAM_ENTRIES})`);
    await raw.query('VACUUM ANALYZE log_entries');
    console.log(`(loaded ${STREAM_ENTRIES.toLocaleString('en')} entries in ${((performance.now() - loaded) / 1000).toFixed(1)} s)`);
    const tail = await measure(READ_ROUNDS, async () => {
      const entries = await logs.read('bench/tail', 'main', { direction: 'backward', limit: 100 });
      if (entries[0]?.seq !== STREAM_ENTRIES) throw new Error('tail read returned the wrong entries');
    });
    const rawTail = await measure(READ_ROUNDS, async () => {
      const { rows } = await raw.query<{ seq: string; value: string }>("SELECT seq, value FROM log_entries WHERE path = 'bench/tail' AND stream = 'main' ORDER BY seq DESC LIMIT 100");
      return rows.map((row) => ({ seq: Number(row.seq), value: JSON.parse(row.value) as unknown }));
    });
    report('last 100 of 1M (PostgresLogStorage)', tail, 'raw SELECT (+JSON.parse)', rawTail);

    const records = new PostgresRecordStorage(database);
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
    await raw.query('ANALYZE records_conversations');
    const decode = (rows: { key: string; value: string; updated_at: string }[]): unknown[] => rows.map((row) => ({ key: row.key, value: JSON.parse(row.value) as unknown, updatedAt: Number(row.updated_at) }));
    const list = await measure(READ_ROUNDS, () => records.list('conversations', { orderBy: 'updatedAt', order: 'desc', limit: 100 }));
    const rawList = await measure(READ_ROUNDS, async () => decode((await raw.query('SELECT key, value, updated_at FROM records_conversations ORDER BY updated_at DESC, key DESC LIMIT 101')).rows));
    report('record list page 1 (100 of 100k, PostgreSQL)', list, 'raw SELECT (+JSON.parse)', rawList);
    const filterSql = `SELECT key, value, updated_at FROM records_conversations WHERE (CASE WHEN json_typeof(value::json -> 'cwd') = 'string' THEN value::json ->> 'cwd' END) = $1 ORDER BY updated_at DESC, key DESC LIMIT 101`;
    const listFiltered = await measure(READ_ROUNDS, () => records.list('conversations', { orderBy: 'updatedAt', order: 'desc', limit: 100, where: { cwd: '/home/dev/project-7' } }));
    const rawFiltered = await measure(READ_ROUNDS, async () => decode((await raw.query(filterSql, ['/home/dev/project-7'])).rows));
    report('record list page 1, filtered on cwd (PostgreSQL)', listFiltered, 'raw SELECT (+JSON.parse)', rawFiltered);
    await records.close();

    const search = new PostgresConversationSearchIndex(database);
    await search.startRebuild();
    await raw.query(
      `INSERT INTO conversation_search (conversation_id, title, updated_at, next_ordinal)
       SELECT 'conv_' || lpad(n::text, 8, '0'), 'Conversation ' || n || ' about topic' || (n % 20), 1700000000000 + ((n * 7919) % ${RECORDS}) * 1000, 1 FROM generate_series(0, ${RECORDS - 1}) AS n`,
    );
    await raw.query(`INSERT INTO conversation_search_text (conversation_id, ordinal, body) SELECT conversation_id, 0, to_tsvector('simple', title) FROM conversation_search`);
    await search.finishRebuild();
    const searchPage = await measure(READ_ROUNDS, async () => {
      const page = await search.search('topic7', { limit: 50 });
      if (page.matches.length !== 50) throw new Error('search returned the wrong page');
    });
    const rawSearch = await measure(READ_ROUNDS, () =>
      raw.query(
        `SELECT c.conversation_id, c.updated_at FROM conversation_search c WHERE EXISTS (SELECT 1 FROM conversation_search_text t WHERE t.conversation_id = c.conversation_id AND t.body @@ to_tsquery('simple', $1)) ORDER BY c.updated_at DESC, c.conversation_id DESC LIMIT 51`,
        ["'topic7'"],
      ),
    );
    report('search page 1 (50 of 5k matches in 100k, PostgreSQL)', searchPage, 'raw SELECT', rawSearch);
    await search.close();
    await logs.close();
    return { append1: appends[0] as Summary, append100: appends[1] as Summary, tail, list, listFiltered, search: searchPage };
  } finally {
    await raw.end().catch(() => undefined);
    await database.close();
    await cluster.stop();
  }
}
