/**
 * LogStorage on PostgreSQL (SPEC §4): the same contract as the file and SQLite backends, for
 * deployments where several runtime servers share one database.
 */
import { defaultLogProblemListener, parseStoredLogRows } from '../log-problems.js';
import type { LogEntry, LogProblemListener, LogReadOptions, LogStorage } from '../log-storage.js';
import { descendantPathRange, normalizeReadOptions, serializeLogValues, sortNames, validateLogPath, validateStreamId } from '../log-validation.js';
import { StreamOperationQueue } from './operation-queue.js';
import type { PostgresClient, PostgresDatabase } from './postgres-database.js';

/** Options of {@link PostgresLogStorage}. */
export interface PostgresLogStorageOptions {
  /** Receives stored values that no longer parse (they are skipped). Default: a process warning. */
  onProblem?: LogProblemListener;
}

interface EntryRow {
  seq: string;
  value: string;
}

/**
 * Append-only streams in two tables (migration 1): `log_entries(path, stream, seq, value)`,
 * value as JSON text, and `log_streams(path, stream, last_seq)`. An append is one
 * transaction that first bumps `last_seq` (taking the stream's row lock, so appends from
 * several processes get contiguous seqs) and then inserts the batch; it resolves after
 * COMMIT, which PostgreSQL makes durable (WAL flush, with `synchronous_commit` on).
 * Within this process, writes to one stream are queued in call order.
 */
export class PostgresLogStorage implements LogStorage {
  private readonly onProblem: LogProblemListener;
  private readonly queue = new StreamOperationQueue();
  private closed = false;

  /**
   * @param database the shared pool (left open by `close`); its migrations run before the first query.
   */
  constructor(
    private readonly database: PostgresDatabase,
    options: PostgresLogStorageOptions = {},
  ) {
    this.onProblem = options.onProblem ?? defaultLogProblemListener;
  }

  /** See {@link LogStorage.append}. One transaction per batch; nothing is written when it throws. */
  async append<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    this.checkOpen();
    this.checkStream(path, stream);
    const texts = serializeLogValues(path, stream, values);
    if (texts.length === 0) return [];
    await this.database.ready();
    const first = await this.queue.stream(path, stream, async () => {
      try {
        return await this.database.transaction((client) => this.appendRows(client, path, stream, texts));
      } catch (error) {
        throw new Error(`Append to stream ${JSON.stringify(stream)} in path ${JSON.stringify(path)} failed: ${(error as Error).message}`, { cause: error });
      }
    });
    return values.map((value, index) => ({ seq: first + index, value }));
  }

  /** See {@link LogStorage.read}. Both cursors may be combined to read a bounded range. */
  async read<T = unknown>(path: string, stream: string, options?: LogReadOptions): Promise<LogEntry<T>[]> {
    this.checkOpen();
    this.checkStream(path, stream);
    const { direction, after, before, limit } = normalizeReadOptions(options);
    if (limit === 0) return [];
    await this.database.ready();
    const order = direction === 'forward' ? 'ASC' : 'DESC';
    const { rows } = await this.database.query<EntryRow>(
      `SELECT seq, value FROM log_entries WHERE path = $1 AND stream = $2 AND seq > $3 AND seq < $4 ORDER BY seq ${order} LIMIT $5`,
      [path, stream, after, Number.isFinite(before) ? before : Number.MAX_SAFE_INTEGER, Number.isFinite(limit) ? limit : null],
      `openvaala_log_read_${direction}`,
    );
    const locate = (seq: number): string => `PostgreSQL schema ${this.database.schema}, table log_entries, seq ${seq}`;
    return parseStoredLogRows<T>(rows, { path, stream, locate, onProblem: this.onProblem });
  }

  /** See {@link LogStorage.lastSeq}. */
  async lastSeq(path: string, stream: string): Promise<number> {
    this.checkOpen();
    this.checkStream(path, stream);
    await this.database.ready();
    const { rows } = await this.database.query<{ last_seq: string }>('SELECT last_seq FROM log_streams WHERE path = $1 AND stream = $2', [path, stream], 'openvaala_log_last_seq');
    return rows[0] === undefined ? 0 : Number(rows[0].last_seq);
  }

  /** See {@link LogStorage.listStreams}. */
  async listStreams(path: string): Promise<string[]> {
    this.checkOpen();
    validateLogPath(path);
    await this.database.ready();
    const { rows } = await this.database.query<{ stream: string }>('SELECT stream FROM log_streams WHERE path = $1', [path]);
    return sortNames(rows.map((row) => row.stream));
  }

  /** See {@link LogStorage.listPaths}: child names (single segments) of paths holding streams. */
  async listPaths(path: string): Promise<string[]> {
    this.checkOpen();
    validateLogPath(path);
    await this.database.ready();
    // substr counts characters (code points), not UTF-16 units.
    const childStart = [...path].length + 2;
    const { rows } =
      path === ''
        ? await this.database.query<{ child: string }>("SELECT DISTINCT split_part(path, '/', 1) AS child FROM log_streams WHERE path <> ''")
        : await this.database.query<{ child: string }>(
            "SELECT DISTINCT split_part(substr(path, $3), '/', 1) AS child FROM log_streams WHERE path >= $1 AND path < $2",
            [descendantPathRange(path).from, descendantPathRange(path).to, childStart],
          );
    return sortNames(rows.map((row) => row.child).filter((child) => child !== ''));
  }

  /** See {@link LogStorage.replaceStream}: one transaction deletes the old entries and inserts the new ones. */
  async replaceStream<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    this.checkOpen();
    this.checkStream(path, stream);
    const texts = serializeLogValues(path, stream, values);
    await this.database.ready();
    await this.queue.stream(path, stream, async () => {
      try {
        await this.database.transaction(async (client) => {
          // The row lock first, so a concurrent append from another process waits for the whole swap.
          await client.query(
            'INSERT INTO log_streams (path, stream, last_seq) VALUES ($1, $2, $3) ON CONFLICT (path, stream) DO UPDATE SET last_seq = EXCLUDED.last_seq',
            [path, stream, texts.length],
          );
          await client.query('DELETE FROM log_entries WHERE path = $1 AND stream = $2', [path, stream]);
          await this.insertEntries(client, path, stream, 1, texts);
        });
      } catch (error) {
        throw new Error(`Replacing stream ${JSON.stringify(stream)} in path ${JSON.stringify(path)} failed: ${(error as Error).message}`, { cause: error });
      }
    });
    return values.map((value, index) => ({ seq: index + 1, value }));
  }

  /** See {@link LogStorage.deleteStream}. */
  async deleteStream(path: string, stream: string): Promise<void> {
    this.checkOpen();
    this.checkStream(path, stream);
    await this.database.ready();
    await this.queue.stream(path, stream, () =>
      this.database.transaction(async (client) => {
        await client.query('DELETE FROM log_streams WHERE path = $1 AND stream = $2', [path, stream]);
        await client.query('DELETE FROM log_entries WHERE path = $1 AND stream = $2', [path, stream]);
      }),
    );
  }

  /** See {@link LogStorage.deletePath}; `''` deletes everything. */
  async deletePath(path: string): Promise<void> {
    this.checkOpen();
    validateLogPath(path);
    await this.database.ready();
    await this.queue.path(path, () =>
      this.database.transaction(async (client) => {
        if (path === '') {
          await client.query('DELETE FROM log_streams');
          await client.query('DELETE FROM log_entries');
          return;
        }
        const { from, to } = descendantPathRange(path);
        await client.query('DELETE FROM log_streams WHERE path = $1 OR (path >= $2 AND path < $3)', [path, from, to]);
        await client.query('DELETE FROM log_entries WHERE path = $1 OR (path >= $2 AND path < $3)', [path, from, to]);
      }),
    );
  }

  /** Marks the storage closed (later calls throw); the shared database stays open. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
  }

  /** Reserves the batch's seqs under the stream's row lock, then inserts it; returns the first seq. */
  private async appendRows(client: PostgresClient, path: string, stream: string, texts: string[]): Promise<number> {
    const { rows } = await client.query<{ last_seq: string }>(
      'INSERT INTO log_streams (path, stream, last_seq) VALUES ($1, $2, $3) ON CONFLICT (path, stream) DO UPDATE SET last_seq = log_streams.last_seq + EXCLUDED.last_seq RETURNING last_seq',
      [path, stream, texts.length],
    );
    const first = Number(rows[0]?.last_seq) - texts.length + 1;
    await this.insertEntries(client, path, stream, first, texts);
    return first;
  }

  private async insertEntries(client: PostgresClient, path: string, stream: string, first: number, texts: string[]): Promise<void> {
    if (texts.length === 0) return;
    await client.query(
      'INSERT INTO log_entries (path, stream, seq, value) SELECT $1, $2, $3::bigint + ordinality - 1, value FROM unnest($4::text[]) WITH ORDINALITY AS batch(value, ordinality)',
      [path, stream, first, texts],
    );
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('PostgresLogStorage is closed');
  }

  private checkStream(path: string, stream: string): void {
    validateLogPath(path);
    validateStreamId(stream, path);
  }
}
