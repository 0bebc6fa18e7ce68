/**
 * RecordStorage on SQLite (SPEC §4): `metadata.db`, the rebuildable listing index.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { NamespaceDefinition, RecordListOptions, RecordPage, RecordStorage, StoredRecord } from '../record-storage.js';
import {
  normalizeListOptions,
  serializeRecordBatch,
  validateKeyRange,
  validateNamespaceDefinition,
  validateRecordKey,
  validateRecordKeys,
} from '../record-validation.js';
import { buildRecordListQuery, recordPageFromRows, type SqlListDialect } from '../sql-record-listing.js';
import { quoteIdentifier, resolveSqliteDatabase, type SqliteDatabase, type SqliteDatabaseSource } from './sqlite-database.js';

type Statement = BetterSqlite3.Statement<unknown[], unknown>;

interface RecordRow {
  key: string;
  value: string;
  updated_at: number;
}

interface Namespace {
  table: string;
  filterFields: Set<string>;
}

/** Expression of a filter field; must be spelled identically in the index and in queries for SQLite to use the index. */
function fieldExpression(field: string): string {
  return `json_extract(value, '$.${field}')`;
}

const LIST_DIALECT: SqlListDialect = { placeholder: () => '?', fieldExpression };

function toRecord<T>(row: RecordRow): StoredRecord<T> {
  return { key: row.key, value: JSON.parse(row.value) as T, updatedAt: row.updated_at };
}

/**
 * Keyed JSON records, one table per namespace (`records_<name>`: key, value as JSON text,
 * updated_at in ms). Declared filter fields get expression indexes on
 * `json_extract(value, '$.<field>')` (with updated_at and key, so filtered listings by update
 * time are index-ordered). Listing pages use keyset cursors on (updatedAt, key), so inserts
 * between pages neither repeat nor hide records that existed before. A record updated
 * between pages of an `updatedAt` listing moves and may show again: the listing follows
 * current state. Can share one database with {@link SqliteLogStorage}.
 */
export class SqliteRecordStorage implements RecordStorage {
  private readonly database: SqliteDatabase;
  private readonly owned: boolean;
  private readonly namespaces = new Map<string, Namespace>();
  private readonly statements = new Map<string, Statement>();
  private closed = false;

  /**
   * @param source an open database (left open by `close`) or a file path / `':memory:'`
   *   (opened here, with WAL and `synchronous=FULL`, and closed by `close`).
   * @throws Error when the database cannot be opened.
   */
  constructor(source: SqliteDatabaseSource) {
    ({ database: this.database, owned: this.owned } = resolveSqliteDatabase(source));
  }

  /** See {@link RecordStorage.defineNamespace}. Creates the table and indexes if missing; filter fields accumulate. */
  defineNamespace(definition: NamespaceDefinition): void {
    this.checkOpen();
    const { name, filterFields } = validateNamespaceDefinition(definition);
    const table = `records_${name}`;
    const quoted = quoteIdentifier(table);
    this.database.transaction(() => {
      this.database.exec(`CREATE TABLE IF NOT EXISTS ${quoted} (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL, updated_at INTEGER NOT NULL)`);
      this.database.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}__updated`)} ON ${quoted} (updated_at, key)`);
      for (const field of filterFields) {
        this.database.exec(
          `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}__field_${field}`)} ON ${quoted} (${fieldExpression(field)}, updated_at, key)`,
        );
      }
    })();
    const existing = this.namespaces.get(name);
    if (existing) for (const field of filterFields) existing.filterFields.add(field);
    else this.namespaces.set(name, { table: quoted, filterFields: new Set(filterFields) });
  }

  /** See {@link RecordStorage.set}. @throws Error naming the namespace and key for bad input. */
  async set<T>(namespace: string, key: string, value: T, updatedAt?: number): Promise<void> {
    await this.mset(namespace, [{ key, value, updatedAt }]);
  }

  /** See {@link RecordStorage.mset}: one transaction; nothing is stored when any record is invalid. */
  async mset<T>(namespace: string, records: { key: string; value: T; updatedAt?: number }[]): Promise<void> {
    const { table } = this.namespace(namespace);
    const rows = serializeRecordBatch(namespace, records);
    const upsert = this.statement(
      `INSERT INTO ${table} (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    );
    this.database.transaction(() => {
      for (const row of rows) upsert.run(...row);
    })();
  }

  /** See {@link RecordStorage.get}. */
  async get<T>(namespace: string, key: string): Promise<StoredRecord<T> | undefined> {
    const { table } = this.namespace(namespace);
    validateRecordKey(namespace, key);
    const row = this.statement(`SELECT key, value, updated_at FROM ${table} WHERE key = ?`).get(key) as RecordRow | undefined;
    return row ? toRecord<T>(row) : undefined;
  }

  /** See {@link RecordStorage.mget}: read in one transaction, so the records are mutually consistent. */
  async mget<T>(namespace: string, keys: string[]): Promise<(StoredRecord<T> | undefined)[]> {
    const { table } = this.namespace(namespace);
    validateRecordKeys(namespace, keys);
    const select = this.statement(`SELECT key, value, updated_at FROM ${table} WHERE key = ?`);
    return this.database.transaction(() =>
      keys.map((key) => {
        const row = select.get(key) as RecordRow | undefined;
        return row ? toRecord<T>(row) : undefined;
      }),
    )();
  }

  /** See {@link RecordStorage.delete}. */
  async delete(namespace: string, key: string): Promise<boolean> {
    const { table } = this.namespace(namespace);
    validateRecordKey(namespace, key);
    return this.statement(`DELETE FROM ${table} WHERE key = ?`).run(key).changes > 0;
  }

  /** See {@link RecordStorage.deleteRange}: keys k with from <= k < to (byte order of UTF-8). */
  async deleteRange(namespace: string, from: string, to: string): Promise<number> {
    const { table } = this.namespace(namespace);
    validateKeyRange(namespace, from, to);
    return this.statement(`DELETE FROM ${table} WHERE key >= ? AND key < ?`).run(from, to).changes;
  }

  /** See {@link RecordStorage.list}. Keys are ordered by the byte order of their UTF-8 form. */
  async list<T>(namespace: string, options?: RecordListOptions): Promise<RecordPage<T>> {
    const { table, filterFields } = this.namespace(namespace);
    const normalized = normalizeListOptions(namespace, filterFields, options);
    const { sql, parameters } = buildRecordListQuery(table, normalized, LIST_DIALECT);
    const rows = this.statement(sql).all(...parameters) as RecordRow[];
    return recordPageFromRows(rows, normalized, (row) => toRecord<T>(row));
  }

  /** Closes the database if this storage opened it. Later calls throw. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.statements.clear();
    if (this.owned) this.database.close();
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('SqliteRecordStorage is closed');
  }

  private namespace(name: string): Namespace {
    this.checkOpen();
    const namespace = this.namespaces.get(name);
    if (namespace === undefined) {
      throw new Error(`Namespace ${JSON.stringify(name)} is not declared; call defineNamespace first`);
    }
    return namespace;
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
