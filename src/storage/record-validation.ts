/**
 * Argument checks, list cursors and key ordering shared by the RecordStorage backends
 * (SPEC §4), so every backend accepts the same inputs and can read the others' cursors.
 */
import type { NamespaceDefinition, RecordListOptions, StoredRecord } from './record-storage.js';

const NAMESPACE_PATTERN = /^[A-Za-z0-9_]+$/;
const FIELD_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Default page size of `list`. */
export const DEFAULT_LIST_LIMIT = 100;

/**
 * Checks a namespace definition.
 * @throws Error naming the namespace or field when the name is not letters, digits and `_`,
 *   or a filter field is not an identifier (letters, digits, `_`, not starting with a digit).
 */
export function validateNamespaceDefinition(definition: NamespaceDefinition): { name: string; filterFields: string[] } {
  const name = definition?.name;
  if (typeof name !== 'string' || !NAMESPACE_PATTERN.test(name)) {
    throw new Error(`Invalid namespace name ${JSON.stringify(name)}: use letters, digits and "_"`);
  }
  const filterFields = definition.filterFields ?? [];
  if (!Array.isArray(filterFields)) throw new Error(`Invalid filterFields of namespace "${name}": must be an array`);
  for (const field of filterFields) {
    if (typeof field !== 'string' || !FIELD_PATTERN.test(field)) {
      throw new Error(`Invalid filter field ${JSON.stringify(field)} of namespace "${name}": use letters, digits and "_", not starting with a digit`);
    }
  }
  return { name, filterFields: [...new Set(filterFields)] };
}

/** @throws Error naming the namespace when a key is not a non-empty string without NUL. */
export function validateRecordKey(namespace: string, key: unknown): string {
  if (typeof key !== 'string' || key === '' || key.includes('\0')) {
    throw new Error(`Invalid key ${JSON.stringify(key)} in namespace "${namespace}": must be a non-empty string without NUL`);
  }
  return key;
}

/** @throws Error naming the namespace and key when `updatedAt` is not an integer number of ms >= 0. */
export function validateUpdatedAt(namespace: string, key: string, updatedAt: unknown): number {
  if (updatedAt === undefined) return Date.now();
  if (typeof updatedAt !== 'number' || !Number.isSafeInteger(updatedAt) || updatedAt < 0) {
    throw new Error(`Invalid updatedAt ${String(updatedAt)} for key ${JSON.stringify(key)} in namespace "${namespace}": must be an integer number of ms >= 0`);
  }
  return updatedAt;
}

/** @throws Error naming the namespace and key when the value is not JSON-serialisable. */
export function serializeRecordValue(namespace: string, key: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new Error(`Value of key ${JSON.stringify(key)} in namespace "${namespace}" is not JSON-serialisable: ${(error as Error).message}`, { cause: error });
  }
  if (typeof text !== 'string') {
    throw new Error(`Value of key ${JSON.stringify(key)} in namespace "${namespace}" is not JSON-serialisable (${typeof value})`);
  }
  return text;
}

/** One record of an `mset` batch, checked and serialised: key, value as JSON text, updatedAt in ms. */
export type SerializedRecord = readonly [key: string, value: string, updatedAt: number];

/**
 * Checks and serialises every record of an `mset` batch up front, so a bad record rejects the
 * whole batch before anything is written. A missing `updatedAt` becomes the current time.
 * @throws Error naming the namespace (and key) when `records` is not an array, a key is
 *   invalid, a value is not JSON-serialisable or an `updatedAt` is not an integer >= 0.
 */
export function serializeRecordBatch(namespace: string, records: unknown): SerializedRecord[] {
  if (!Array.isArray(records)) throw new Error(`mset on namespace "${namespace}" needs an array of records`);
  return (records as { key?: unknown; value?: unknown; updatedAt?: unknown }[]).map((record) => {
    const key = validateRecordKey(namespace, record?.key);
    return [key, serializeRecordValue(namespace, key, record.value), validateUpdatedAt(namespace, key, record.updatedAt)] as const;
  });
}

/**
 * Checks the keys of an `mget` call.
 * @throws Error naming the namespace when `keys` is not an array or a key is invalid.
 */
export function validateRecordKeys(namespace: string, keys: unknown): string[] {
  if (!Array.isArray(keys)) throw new Error(`mget on namespace "${namespace}" needs an array of keys`);
  for (const key of keys) validateRecordKey(namespace, key);
  return keys as string[];
}

/**
 * Checks the bounds of a `deleteRange` call.
 * @throws Error naming the namespace when a bound is not a string.
 */
export function validateKeyRange(namespace: string, from: unknown, to: unknown): void {
  if (typeof from !== 'string' || typeof to !== 'string') throw new Error(`deleteRange on namespace "${namespace}" needs string bounds`);
}

/** A position in a listing: the last record returned, and the ordering it belongs to. */
export interface RecordCursor {
  orderBy: 'key' | 'updatedAt';
  order: 'asc' | 'desc';
  key: string;
  updatedAt: number;
}

/** Encodes a cursor as base64url JSON (`{"v":1,"by","order","key","updatedAt"}`). Opaque to callers. */
export function encodeRecordCursor(cursor: RecordCursor): string {
  const json = JSON.stringify({ v: 1, by: cursor.orderBy, order: cursor.order, key: cursor.key, updatedAt: cursor.updatedAt });
  return Buffer.from(json, 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeRecordCursor}.
 * @throws Error naming the namespace when the cursor is malformed or was made for another
 *   `orderBy`/`order`.
 */
export function decodeRecordCursor(namespace: string, cursor: string, orderBy: string, order: string): RecordCursor {
  let parsed: { v?: unknown; by?: unknown; order?: unknown; key?: unknown; updatedAt?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof parsed;
  } catch {
    throw new Error(`Invalid list cursor for namespace "${namespace}": not a cursor returned by list`);
  }
  if (parsed?.v !== 1 || typeof parsed.key !== 'string' || typeof parsed.updatedAt !== 'number') {
    throw new Error(`Invalid list cursor for namespace "${namespace}": not a cursor returned by list`);
  }
  if (parsed.by !== orderBy || parsed.order !== order) {
    throw new Error(`Invalid list cursor for namespace "${namespace}": it was made for orderBy=${String(parsed.by)} order=${String(parsed.order)}, not orderBy=${orderBy} order=${order}`);
  }
  return { orderBy, order, key: parsed.key, updatedAt: parsed.updatedAt } as RecordCursor;
}

/** List options after validation, with defaults filled in. */
export interface NormalizedListOptions {
  keyFrom?: string;
  keyTo?: string;
  keyPrefix?: string;
  orderBy: 'key' | 'updatedAt';
  order: 'asc' | 'desc';
  where: [string, string][];
  limit: number;
  cursor?: RecordCursor;
}

/**
 * Checks list options against a namespace's declared filter fields.
 * @throws Error naming the namespace and option: unknown `orderBy`/`order`, a non-string
 *   bound, a `where` field not declared (naming the declared ones) or a non-string `where`
 *   value, a `limit` that is not an integer >= 1, a bad cursor.
 */
export function normalizeListOptions(namespace: string, declaredFields: ReadonlySet<string>, options: RecordListOptions = {}): NormalizedListOptions {
  const orderBy = options.orderBy ?? 'key';
  const order = options.order ?? 'asc';
  if (orderBy !== 'key' && orderBy !== 'updatedAt') throw new Error(`Invalid list option orderBy ${JSON.stringify(orderBy)} for namespace "${namespace}": use "key" or "updatedAt"`);
  if (order !== 'asc' && order !== 'desc') throw new Error(`Invalid list option order ${JSON.stringify(order)} for namespace "${namespace}": use "asc" or "desc"`);
  for (const bound of ['keyFrom', 'keyTo', 'keyPrefix'] as const) {
    if (options[bound] !== undefined && typeof options[bound] !== 'string') {
      throw new Error(`Invalid list option ${bound} for namespace "${namespace}": must be a string`);
    }
  }
  const where = Object.entries(options.where ?? {});
  for (const [field, value] of where) {
    if (!declaredFields.has(field)) {
      const declared = [...declaredFields].join(', ') || 'none';
      throw new Error(`Unknown filter field "${field}" for namespace "${namespace}" (declared filter fields: ${declared})`);
    }
    if (typeof value !== 'string') throw new Error(`Invalid filter value for field "${field}" of namespace "${namespace}": must be a string`);
  }
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`Invalid list option limit ${String(limit)} for namespace "${namespace}": must be an integer >= 1`);
  const normalized: NormalizedListOptions = { orderBy, order, where, limit };
  if (options.keyFrom !== undefined) normalized.keyFrom = options.keyFrom;
  if (options.keyTo !== undefined) normalized.keyTo = options.keyTo;
  if (options.keyPrefix !== undefined) normalized.keyPrefix = options.keyPrefix;
  if (options.cursor !== undefined) {
    if (typeof options.cursor !== 'string') throw new Error(`Invalid list cursor for namespace "${namespace}": must be a string`);
    normalized.cursor = decodeRecordCursor(namespace, options.cursor, orderBy, order);
  }
  return normalized;
}

/**
 * Compares keys by Unicode code point, which is the byte order of their UTF-8 form and so
 * the order SQLite's BINARY collation gives (plain `<` compares UTF-16 units and differs
 * for characters beyond U+FFFF).
 */
export function compareKeys(left: string, right: string): number {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index += 1) {
    const a = left.codePointAt(index) as number;
    const b = right.codePointAt(index) as number;
    if (a !== b) return a - b;
    if (a > 0xffff) index += 1;
  }
  return left.length - right.length;
}

/** Compares two records in a listing's order (`updatedAt` ties broken by key). */
export function compareRecords(left: StoredRecord, right: StoredRecord, orderBy: 'key' | 'updatedAt', order: 'asc' | 'desc'): number {
  let result = orderBy === 'updatedAt' ? left.updatedAt - right.updatedAt : 0;
  if (result === 0) result = compareKeys(left.key, right.key);
  return order === 'asc' ? result : -result;
}

/**
 * The smallest string greater than every string starting with `prefix`, or undefined when
 * there is none (a prefix made only of U+10FFFF). Turns a prefix into a key range.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const codePoints = [...prefix];
  while (codePoints.length > 0) {
    const last = (codePoints.pop() as string).codePointAt(0) as number;
    if (last < 0x10ffff) {
      // Skip the surrogate range: those code points cannot appear in well-formed text.
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return codePoints.join('') + String.fromCodePoint(next);
    }
  }
  return undefined;
}
