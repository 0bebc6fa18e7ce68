/**
 * LogStorage in a SQLite database (SPEC §4): the same contract as the file backend, used for
 * staged (in-memory) conversations and wherever one database file is preferred.
 */
import { defaultLogProblemListener, parseStoredLogRows } from '../log-problems.js';
import type { LogEntry, LogProblemListener, LogReadOptions, LogStorage } from '../log-storage.js';
import {
  descendantPathRange,
  normalizeReadOptions,
  serializeLogValues,
  sortNames,
  validateLogPath,
  validateStreamId,
} from '../log-validation.js';
import { resolveSqliteDatabase, type SqliteDatabase, type SqliteDatabaseSource } from './sqlite-database.js';

/** Options of {@link SqliteLogStorage}. */
export interface SqliteLogStorageOptions {
  /** Receives stored values that no longer parse (they are skipped). Default: a process warning. */
  onProblem?: LogProblemListener;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS log_streams (
  path TEXT NOT NULL,
  stream TEXT NOT NULL,
  last_seq INTEGER NOT NULL,
  PRIMARY KEY (path, stream)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_entries (
  path TEXT NOT NULL,
  stream TEXT NOT NULL,
  seq INTEGER NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (path, stream, seq)
);
`;

/** SQL has no "infinity" integer; this is larger than any seq. */
const SEQ_CEILING = Number.MAX_SAFE_INTEGER;

interface EntryRow {
  seq: number;
  value: string;
}

/**
 * Append-only streams stored in two tables: `log_entries(path, stream, seq, value)` and
 * `log_streams(path, stream, last_seq)`. An append is one transaction; with the
 * database's `synchronous=FULL` it is durable when the promise resolves. Can share one
 * database with {@link SqliteRecordStorage}.
 */
export class SqliteLogStorage implements LogStorage {
  private readonly database: SqliteDatabase;
  private readonly owned: boolean;
  private readonly onProblem: LogProblemListener;
  private closed = false;
  private readonly statements;
  private readonly appendBatch: (path: string, stream: string, texts: string[]) => number;

  /**
   * @param source an open database (left open by `close`) or a file path / `':memory:'`
   *   (opened here and closed by `close`).
   * @throws Error when the database cannot be opened or the schema cannot be created.
   */
  constructor(source: SqliteDatabaseSource, options: SqliteLogStorageOptions = {}) {
    ({ database: this.database, owned: this.owned } = resolveSqliteDatabase(source));
    this.onProblem = options.onProblem ?? defaultLogProblemListener;
    this.database.exec(SCHEMA);
    const database = this.database;
    this.statements = {
      lastSeq: database.prepare<[string, string], { last_seq: number }>('SELECT last_seq FROM log_streams WHERE path = ? AND stream = ?'),
      setLastSeq: database.prepare(
        'INSERT INTO log_streams (path, stream, last_seq) VALUES (?, ?, ?) ON CONFLICT (path, stream) DO UPDATE SET last_seq = excluded.last_seq',
      ),
      insert: database.prepare('INSERT INTO log_entries (path, stream, seq, value) VALUES (?, ?, ?, ?)'),
      forward: database.prepare<[string, string, number, number, number], EntryRow>(
        'SELECT seq, value FROM log_entries WHERE path = ? AND stream = ? AND seq > ? AND seq < ? ORDER BY seq ASC LIMIT ?',
      ),
      backward: database.prepare<[string, string, number, number, number], EntryRow>(
        'SELECT seq, value FROM log_entries WHERE path = ? AND stream = ? AND seq > ? AND seq < ? ORDER BY seq DESC LIMIT ?',
      ),
      streams: database.prepare<[string], { stream: string }>('SELECT stream FROM log_streams WHERE path = ?'),
      allPaths: database.prepare<[], { path: string }>('SELECT DISTINCT path FROM log_streams'),
      pathsBelow: database.prepare<[string, string], { path: string }>('SELECT DISTINCT path FROM log_streams WHERE path >= ? AND path < ?'),
      deleteStreamEntries: database.prepare('DELETE FROM log_entries WHERE path = ? AND stream = ?'),
      deleteStream: database.prepare('DELETE FROM log_streams WHERE path = ? AND stream = ?'),
      deletePathEntries: database.prepare('DELETE FROM log_entries WHERE path = ? OR (path >= ? AND path < ?)'),
      deletePath: database.prepare('DELETE FROM log_streams WHERE path = ? OR (path >= ? AND path < ?)'),
      deleteAllEntries: database.prepare('DELETE FROM log_entries'),
      deleteAll: database.prepare('DELETE FROM log_streams'),
    };
    this.appendBatch = database.transaction((path: string, stream: string, texts: string[]) => {
      const first = (this.statements.lastSeq.get(path, stream)?.last_seq ?? 0) + 1;
      texts.forEach((text, index) => this.statements.insert.run(path, stream, first + index, text));
      this.statements.setLastSeq.run(path, stream, first + texts.length - 1);
      return first;
    });
  }

  /** See {@link LogStorage.append}. One transaction per batch; nothing is written when it throws. */
  async append<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    this.checkOpen();
    this.checkStream(path, stream);
    const texts = serializeLogValues(path, stream, values);
    if (texts.length === 0) return [];
    let first: number;
    try {
      first = this.appendBatch(path, stream, texts);
    } catch (error) {
      throw new Error(`Append to stream ${JSON.stringify(stream)} in path ${JSON.stringify(path)} failed: ${(error as Error).message}`, { cause: error });
    }
    return values.map((value, index) => ({ seq: first + index, value }));
  }

  /** See {@link LogStorage.read}. Both cursors may be combined to read a bounded range. */
  async read<T = unknown>(path: string, stream: string, options?: LogReadOptions): Promise<LogEntry<T>[]> {
    this.checkOpen();
    this.checkStream(path, stream);
    const { direction, after, before, limit } = normalizeReadOptions(options);
    if (limit === 0) return [];
    const statement = direction === 'forward' ? this.statements.forward : this.statements.backward;
    const rows = statement.all(path, stream, after, Math.min(before, SEQ_CEILING), Number.isFinite(limit) ? limit : -1);
    const locate = (seq: number): string => `${this.database.name}, table log_entries, seq ${seq}`;
    return parseStoredLogRows<T>(rows, { path, stream, locate, onProblem: this.onProblem });
  }

  /** See {@link LogStorage.lastSeq}. */
  async lastSeq(path: string, stream: string): Promise<number> {
    this.checkOpen();
    this.checkStream(path, stream);
    return this.statements.lastSeq.get(path, stream)?.last_seq ?? 0;
  }

  /** See {@link LogStorage.listStreams}. */
  async listStreams(path: string): Promise<string[]> {
    this.checkOpen();
    validateLogPath(path);
    return sortNames(this.statements.streams.all(path).map((row) => row.stream));
  }

  /** See {@link LogStorage.listPaths}: child names (single segments) of paths holding streams. */
  async listPaths(path: string): Promise<string[]> {
    this.checkOpen();
    validateLogPath(path);
    const prefix = path === '' ? '' : `${path}/`;
    const rows = path === '' ? this.statements.allPaths.all() : this.statements.pathsBelow.all(descendantPathRange(path).from, descendantPathRange(path).to);
    const children = new Set<string>();
    for (const { path: stored } of rows) {
      if (stored === '' || !stored.startsWith(prefix)) continue;
      children.add(stored.slice(prefix.length).split('/')[0] as string);
    }
    return sortNames(children);
  }

  /** See {@link LogStorage.replaceStream}: one transaction deletes the old entries and inserts the new ones. */
  async replaceStream<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    this.checkOpen();
    this.checkStream(path, stream);
    const texts = serializeLogValues(path, stream, values);
    try {
      this.database.transaction(() => {
        this.statements.deleteStreamEntries.run(path, stream);
        texts.forEach((text, index) => this.statements.insert.run(path, stream, index + 1, text));
        this.statements.setLastSeq.run(path, stream, texts.length);
      })();
    } catch (error) {
      throw new Error(`Replacing stream ${JSON.stringify(stream)} in path ${JSON.stringify(path)} failed: ${(error as Error).message}`, { cause: error });
    }
    return values.map((value, index) => ({ seq: index + 1, value }));
  }

  /** See {@link LogStorage.deleteStream}. */
  async deleteStream(path: string, stream: string): Promise<void> {
    this.checkOpen();
    this.checkStream(path, stream);
    this.database.transaction(() => {
      this.statements.deleteStreamEntries.run(path, stream);
      this.statements.deleteStream.run(path, stream);
    })();
  }

  /** See {@link LogStorage.deletePath}; `''` deletes everything. */
  async deletePath(path: string): Promise<void> {
    this.checkOpen();
    validateLogPath(path);
    const { from, to } = descendantPathRange(path);
    this.database.transaction(() => {
      if (path === '') {
        this.statements.deleteAllEntries.run();
        this.statements.deleteAll.run();
        return;
      }
      this.statements.deletePathEntries.run(path, from, to);
      this.statements.deletePath.run(path, from, to);
    })();
  }

  /** Closes the database if this storage opened it. Later calls throw. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.owned) this.database.close();
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('SqliteLogStorage is closed');
  }

  private checkStream(path: string, stream: string): void {
    validateLogPath(path);
    validateStreamId(stream, path);
  }
}
