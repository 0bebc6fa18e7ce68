/**
 * Databases of the data directory that hold the only copy of their records (`platform.db`,
 * `schedules.db`), found damaged when the server opens them. Unlike `metadata.db`, which is an
 * index of the conversation logs (moved aside and rebuilt), such a file is never moved or
 * replaced by the server: the start stops, and the message says what is wrong and the two ways
 * on, which only the file's owner can choose between (restore a backup, or move the file aside
 * and start without what it held).
 */
import fs from 'node:fs';
import path from 'node:path';
import { shellQuote } from '../../shell-quote.js';
import { openSqliteDatabase, quoteIdentifier, type SqliteDatabase, type SqliteSynchronous } from './sqlite-database.js';

/** A database the server cannot rebuild, described for the message that refuses it. */
export interface StoredDatabase {
  /** Path of the database file. */
  file: string;
  /** What it holds, as a phrase ("the scheduled tasks and the record of their runs"). */
  holds: string;
  /** What a start without it lacks, and what it keeps, as a phrase ("the scheduled tasks (conversations are not in it)"). */
  withoutIt: string;
}

/** The companion files SQLite keeps next to a database in WAL mode. */
const COMPANION_SUFFIXES = ['-wal', '-shm'];

/** The SQLite result codes of a file that is not a database, or whose pages SQLite cannot read. */
const DAMAGE_CODES = /^SQLITE_(NOTADB|CORRUPT)/;

/**
 * A database holding records that exist nowhere else cannot be used: the server stops rather
 * than start without them or replace the file. The message names the file, what is wrong and
 * what the user can do.
 */
export class DamagedDatabaseError extends Error {
  /**
   * @param file path of the database file
   * @param problem what is wrong with it ("is a directory, not a database file")
   * @param message the whole explanation, with what the user can do
   */
  constructor(
    readonly file: string,
    readonly problem: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'DamagedDatabaseError';
  }
}

/**
 * Reads enough of a database to know SQLite can use it: its schema, and one row of every table.
 * A file that is not a database, or whose schema pages are damaged, throws here; damage deeper
 * in a table is only found when those rows are read.
 * @throws SqliteError (`SQLITE_NOTADB`, `SQLITE_CORRUPT`) when SQLite cannot read it
 */
export function probeSqliteDatabase(database: SqliteDatabase): void {
  const tables = database.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
  for (const { name } of tables) database.prepare(`SELECT * FROM ${quoteIdentifier(name)} LIMIT 1`).all();
}

/** What a file in place of a database is, when it is not a regular file (undefined for a regular file or none). */
function notAFile(file: string): string | undefined {
  let stats: fs.Stats;
  try {
    stats = fs.statSync(file);
  } catch {
    return undefined;
  }
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'is a directory, not a database file';
  return `is not a regular file (${stats.isFIFO() ? 'a named pipe' : stats.isSocket() ? 'a socket' : 'a device'}), so it cannot be the database`;
}

/**
 * What is wrong with a database file, when an error thrown opening or reading it says it is
 * damaged (SQLite cannot read it) or is not a file at all.
 * @returns the problem as a phrase after the file's name, or undefined for another failure (no permission, a full disk)
 */
function databaseDamage(file: string, error: unknown): string | undefined {
  const kind = notAFile(file);
  if (kind !== undefined) return kind;
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code !== 'string' || !DAMAGE_CODES.test(code)) continue;
    return `is damaged (SQLite: ${cause.message})`;
  }
  return undefined;
}

/** A path as one shell word, quoted only when it needs to be. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(text) ? text : shellQuote(text);
}

/** The first of `<file>.damaged`, `<file>.damaged-2`, … that is free with its companion files. */
function asideName(file: string): string {
  for (let attempt = 1; ; attempt++) {
    const candidate = `${file}.damaged${attempt === 1 ? '' : `-${attempt}`}`;
    if (['', ...COMPANION_SUFFIXES].every((suffix) => !fs.existsSync(`${candidate}${suffix}`))) return candidate;
  }
}

/**
 * The explanation of a damaged database the server cannot rebuild: the file and what is wrong,
 * what it holds, and the two ways on, with the commands that move it (and its WAL and
 * shared-memory files, which belong to it) aside to names that overwrite nothing.
 */
function damagedDatabaseMessage(database: StoredDatabase, problem: string): string {
  const { file } = database;
  const name = path.basename(file);
  const aside = asideName(file);
  const moves = ['', ...COMPANION_SUFFIXES].filter((suffix) => suffix === '' || fs.existsSync(`${file}${suffix}`)).map((suffix) => `  mv ${shellWord(`${file}${suffix}`)} ${shellWord(`${aside}${suffix}`)}`);
  return (
    `${file} ${problem}. ${name} cannot be rebuilt: it holds ${database.holds}. The server does not start without it, and does not move or replace it. ` +
    `Restore ${name} from a backup of the data directory (with the server stopped), or move it aside to start without ${database.withoutIt}; a new, empty ${name} is then created:\n${moves.join('\n')}`
  );
}

/**
 * Opens (creating it, mode 0600, if missing) a database whose records exist nowhere else, and
 * probes it (see {@link probeSqliteDatabase}).
 * @param synchronous how commits are synced (see `SqliteSynchronous`)
 * @throws DamagedDatabaseError when the file is not a database SQLite can read, or not a file at
 *   all (checked before opening it, so a named pipe is never opened); the file is neither moved nor replaced
 * @throws Error naming the file for other failures (no permission)
 */
export function openStoredDatabase(database: StoredDatabase, synchronous: SqliteSynchronous = 'FULL'): SqliteDatabase {
  const kind = notAFile(database.file);
  if (kind !== undefined) throw new DamagedDatabaseError(database.file, kind, damagedDatabaseMessage(database, kind));
  let opened: SqliteDatabase | undefined;
  try {
    opened = openSqliteDatabase(database.file, synchronous);
    probeSqliteDatabase(opened);
    return opened;
  } catch (error) {
    try {
      opened?.close();
    } catch {
      // The error that made it unusable is the one to report.
    }
    const problem = databaseDamage(database.file, error);
    if (problem === undefined) throw error;
    throw new DamagedDatabaseError(database.file, problem, damagedDatabaseMessage(database, problem), { cause: error });
  }
}
