/**
 * The parts of the SQL RecordStorage backends (SQLite, PostgreSQL) that do not depend on the
 * SQL dialect: the shape of a listing query and of the page made from its rows, and the
 * argument checks of the batch operations. What differs by dialect (placeholders, the
 * expression reading a filter field, column types) is passed in as a {@link SqlListDialect};
 * the rest of each backend's SQL differs by dialect and stays in the backend.
 */
import type { RecordPage, StoredRecord } from './record-storage.js';
import { encodeRecordCursor, prefixUpperBound, type NormalizedListOptions } from './record-validation.js';

/** How one SQL dialect spells the pieces of a listing query. */
export interface SqlListDialect {
  /** The placeholder of the 1-based parameter `position` (`?` in SQLite, `$1` in PostgreSQL). */
  placeholder(position: number): string;
  /** The expression reading filter field `field` of the JSON value; the same text as in its index. */
  fieldExpression(field: string): string;
  /** Wraps the placeholder of the cursor's `updatedAt` (ms) where the dialect needs a type; default: as is. */
  updatedAtParameter?(placeholder: string): string;
}

/** A listing query: SQL text and its parameters in placeholder order. */
export interface SqlListQuery {
  sql: string;
  parameters: (string | number)[];
}

/**
 * Builds the SELECT of one listing page over a `records_<name>` table (columns key, value,
 * updated_at). It asks for one row more than the limit: that row tells whether another page
 * follows (see {@link recordPageFromRows}).
 *
 * @param table the table name, already quoted for the dialect.
 */
export function buildRecordListQuery(table: string, options: NormalizedListOptions, dialect: SqlListDialect): SqlListQuery {
  const conditions: string[] = [];
  const parameters: (string | number)[] = [];
  const bind = (value: string | number): string => {
    parameters.push(value);
    return dialect.placeholder(parameters.length);
  };
  if (options.keyFrom !== undefined) conditions.push(`key >= ${bind(options.keyFrom)}`);
  if (options.keyTo !== undefined) conditions.push(`key < ${bind(options.keyTo)}`);
  if (options.keyPrefix !== undefined && options.keyPrefix !== '') {
    conditions.push(`key >= ${bind(options.keyPrefix)}`);
    const upper = prefixUpperBound(options.keyPrefix);
    if (upper !== undefined) conditions.push(`key < ${bind(upper)}`);
  }
  for (const [field, value] of options.where) conditions.push(`${dialect.fieldExpression(field)} = ${bind(value)}`);
  const comparison = options.order === 'asc' ? '>' : '<';
  const direction = options.order === 'asc' ? 'ASC' : 'DESC';
  if (options.cursor !== undefined) {
    if (options.orderBy === 'key') {
      conditions.push(`key ${comparison} ${bind(options.cursor.key)}`);
    } else {
      const updatedAt = bind(options.cursor.updatedAt);
      const typed = dialect.updatedAtParameter?.(updatedAt) ?? updatedAt;
      conditions.push(`(updated_at, key) ${comparison} (${typed}, ${bind(options.cursor.key)})`);
    }
  }
  const orderBy = options.orderBy === 'key' ? `key ${direction}` : `updated_at ${direction}, key ${direction}`;
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  return { sql: `SELECT key, value, updated_at FROM ${table} ${where} ORDER BY ${orderBy} LIMIT ${bind(options.limit + 1)}`, parameters };
}

/**
 * Turns the rows of a {@link buildRecordListQuery} query into a page: at most `limit` records,
 * and a cursor after the last one when the extra row shows that more follow.
 *
 * @param toRecord parses one row (the value's JSON text, the dialect's updated_at type).
 */
export function recordPageFromRows<Row, T>(rows: Row[], options: NormalizedListOptions, toRecord: (row: Row) => StoredRecord<T>): RecordPage<T> {
  const records = rows.slice(0, options.limit).map(toRecord);
  const page: RecordPage<T> = { records };
  const last = records.at(-1);
  if (rows.length > options.limit && last !== undefined) {
    page.nextCursor = encodeRecordCursor({ orderBy: options.orderBy, order: options.order, key: last.key, updatedAt: last.updatedAt });
  }
  return page;
}
