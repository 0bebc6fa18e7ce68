/**
 * RecordStorage on PostgreSQL (SPEC §4): the listing index of conversations when several
 * runtime servers share one database.
 */
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
import { quotePostgresIdentifier, type PostgresDatabase } from './postgres-database.js';

interface RecordRow {
  key: string;
  value: string;
  updated_at: string;
}

interface Namespace {
  table: string;
  filterFields: Set<string>;
}

/** Advisory lock key serialising namespace DDL across servers (concurrent CREATE … IF NOT EXISTS can collide). */
const NAMESPACE_LOCK_KEY = 0x6f766e73;

/**
 * A filter field's value when it is a JSON string, else NULL (so `5` never matches `"5"`).
 * Spelled identically in the index and the queries, so PostgreSQL uses the index.
 */
function fieldExpression(field: string): string {
  return `(CASE WHEN json_typeof(value::json -> '${field}') = 'string' THEN value::json ->> '${field}' END)`;
}

const LIST_DIALECT: SqlListDialect = {
  placeholder: (position) => `$${position}`,
  fieldExpression,
  updatedAtParameter: (placeholder) => `${placeholder}::bigint`,
};

function toRecord<T>(row: RecordRow): StoredRecord<T> {
  return { key: row.key, value: JSON.parse(row.value) as T, updatedAt: Number(row.updated_at) };
}

/**
 * Keyed JSON records, one table per namespace (`records_<name>`: key with `COLLATE "C"` so
 * keys sort by code point like every backend, value as JSON text, updated_at in ms). Declared
 * filter fields get expression indexes (with updated_at and key). Listing pages use the
 * shared keyset cursors on (updatedAt, key).
 *
 * `defineNamespace` is synchronous in the contract, while PostgreSQL is not: the tables are
 * created in the background and every later operation waits for that work (a failure is
 * thrown by those operations, naming the namespace).
 */
export class PostgresRecordStorage implements RecordStorage {
  private readonly namespaces = new Map<string, Namespace>();
  private schemaWork: Promise<void> = Promise.resolve();
  private schemaError: Error | undefined;
  private closed = false;

  /** @param database the shared pool (left open by `close`). */
  constructor(private readonly database: PostgresDatabase) {}

  /** See {@link RecordStorage.defineNamespace}. Creates the table and indexes if missing (in the background); filter fields accumulate. */
  defineNamespace(definition: NamespaceDefinition): void {
    this.checkOpen();
    const { name, filterFields } = validateNamespaceDefinition(definition);
    const table = `records_${name}`;
    const quoted = quotePostgresIdentifier(table);
    const statements = [
      `CREATE TABLE IF NOT EXISTS ${quoted} (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL, updated_at BIGINT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS ${quotePostgresIdentifier(`${table}__updated`)} ON ${quoted} (updated_at, key)`,
      ...filterFields.map((field) => `CREATE INDEX IF NOT EXISTS ${quotePostgresIdentifier(`${table}__field_${field}`)} ON ${quoted} (${fieldExpression(field)}, updated_at, key)`),
    ];
    this.schemaWork = this.schemaWork.then(async () => {
      try {
        await this.database.ready();
        await this.database.transaction(async (client) => {
          await client.query('SELECT pg_advisory_xact_lock($1)', [NAMESPACE_LOCK_KEY]);
          for (const statement of statements) await client.query(statement);
        });
      } catch (error) {
        this.schemaError ??= new Error(`Cannot create the tables of namespace "${name}": ${(error as Error).message}`, { cause: error });
      }
    });
    const existing = this.namespaces.get(name);
    if (existing) for (const field of filterFields) existing.filterFields.add(field);
    else this.namespaces.set(name, { table: quoted, filterFields: new Set(filterFields) });
  }

  /** See {@link RecordStorage.set}. @throws Error naming the namespace and key for bad input. */
  async set<T>(namespace: string, key: string, value: T, updatedAt?: number): Promise<void> {
    await this.mset(namespace, [{ key, value, updatedAt }]);
  }

  /** See {@link RecordStorage.mset}: one statement; nothing is stored when any record is invalid. */
  async mset<T>(namespace: string, records: { key: string; value: T; updatedAt?: number }[]): Promise<void> {
    const { table } = this.namespace(namespace);
    // A key given twice keeps its last value, as sequential upserts would.
    const rows = new Map<string, [string, number]>();
    for (const [key, value, updatedAt] of serializeRecordBatch(namespace, records)) rows.set(key, [value, updatedAt]);
    if (rows.size === 0) return;
    await this.ready();
    await this.database.query(
      `INSERT INTO ${table} (key, value, updated_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
      [[...rows.keys()], [...rows.values()].map((row) => row[0]), [...rows.values()].map((row) => row[1])],
    );
  }

  /** See {@link RecordStorage.get}. */
  async get<T>(namespace: string, key: string): Promise<StoredRecord<T> | undefined> {
    const { table } = this.namespace(namespace);
    validateRecordKey(namespace, key);
    await this.ready();
    const { rows } = await this.database.query<RecordRow>(`SELECT key, value, updated_at FROM ${table} WHERE key = $1`, [key]);
    return rows[0] ? toRecord<T>(rows[0]) : undefined;
  }

  /** See {@link RecordStorage.mget}: one statement, so the records are mutually consistent. */
  async mget<T>(namespace: string, keys: string[]): Promise<(StoredRecord<T> | undefined)[]> {
    const { table } = this.namespace(namespace);
    validateRecordKeys(namespace, keys);
    if (keys.length === 0) return [];
    await this.ready();
    const { rows } = await this.database.query<RecordRow>(`SELECT key, value, updated_at FROM ${table} WHERE key = ANY($1::text[])`, [keys]);
    const found = new Map(rows.map((row) => [row.key, row]));
    return keys.map((key) => {
      const row = found.get(key);
      return row ? toRecord<T>(row) : undefined;
    });
  }

  /** See {@link RecordStorage.delete}. */
  async delete(namespace: string, key: string): Promise<boolean> {
    const { table } = this.namespace(namespace);
    validateRecordKey(namespace, key);
    await this.ready();
    return ((await this.database.query(`DELETE FROM ${table} WHERE key = $1`, [key])).rowCount ?? 0) > 0;
  }

  /** See {@link RecordStorage.deleteRange}: keys k with from <= k < to (byte order of UTF-8). */
  async deleteRange(namespace: string, from: string, to: string): Promise<number> {
    const { table } = this.namespace(namespace);
    validateKeyRange(namespace, from, to);
    await this.ready();
    return (await this.database.query(`DELETE FROM ${table} WHERE key >= $1 AND key < $2`, [from, to])).rowCount ?? 0;
  }

  /** See {@link RecordStorage.list}. Keys are ordered by the byte order of their UTF-8 form. */
  async list<T>(namespace: string, options?: RecordListOptions): Promise<RecordPage<T>> {
    const { table, filterFields } = this.namespace(namespace);
    const normalized = normalizeListOptions(namespace, filterFields, options);
    await this.ready();
    const { sql, parameters } = buildRecordListQuery(table, normalized, LIST_DIALECT);
    const { rows } = await this.database.query<RecordRow>(sql, parameters);
    return recordPageFromRows(rows, normalized, (row) => toRecord<T>(row));
  }

  /** Marks the storage closed (later calls throw) once pending namespace work is done; the shared database stays open. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await this.schemaWork;
  }

  private async ready(): Promise<void> {
    await this.schemaWork;
    if (this.schemaError) throw this.schemaError;
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('PostgresRecordStorage is closed');
  }

  private namespace(name: string): Namespace {
    this.checkOpen();
    const namespace = this.namespaces.get(name);
    if (namespace === undefined) throw new Error(`Namespace ${JSON.stringify(name)} is not declared; call defineNamespace first`);
    return namespace;
  }
}
