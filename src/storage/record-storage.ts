/**
 * The RecordStorage contract (SPEC §4): keyed JSON records in namespaces, each with an
 * update time. Used for the rebuildable index (`metadata.db`), never as the source of truth.
 */

/** A stored record. */
export interface StoredRecord<T = unknown> {
  key: string;
  value: T;
  /** Time of the last `set` of this key, in ms since the epoch. */
  updatedAt: number;
}

/** Declares a namespace: which string fields of its values may be used as list filters. */
export interface NamespaceDefinition {
  /** Namespace name: letters, digits and `_`. */
  name: string;
  /**
   * Top-level string fields of the stored values that `list` may filter on with equality.
   * Each one is indexed.
   */
  filterFields?: string[];
}

/** Options of `RecordStorage.list`. */
export interface RecordListOptions {
  /** Inclusive lower bound of the key. */
  keyFrom?: string;
  /** Exclusive upper bound of the key. */
  keyTo?: string;
  /** Keys starting with this prefix. */
  keyPrefix?: string;
  /** `key` (default) or `updatedAt` (ties broken by key). */
  orderBy?: 'key' | 'updatedAt';
  /** Default `asc`. */
  order?: 'asc' | 'desc';
  /** Equality filters on declared fields of the namespace. */
  where?: Record<string, string>;
  /** Page size; default 100. */
  limit?: number;
  /** Opaque cursor returned as `nextCursor` by the previous page. */
  cursor?: string;
}

/** One page of `list`. */
export interface RecordPage<T = unknown> {
  records: StoredRecord<T>[];
  /** Present when more records may follow; pass it back as `cursor`. */
  nextCursor?: string;
}

/**
 * Keyed JSON records in namespaces (SPEC §4, contract).
 *
 * Namespaces must be declared with `defineNamespace` before use.
 */
export interface RecordStorage {
  /**
   * Declares a namespace (idempotent). Declaring new filter fields later adds their indexes.
   * @throws Error when the name or a field name is invalid.
   */
  defineNamespace(definition: NamespaceDefinition): void;

  /** Stores one record, replacing any previous value; `updatedAt` defaults to now (ms). */
  set<T>(namespace: string, key: string, value: T, updatedAt?: number): Promise<void>;

  /** Stores several records atomically. */
  mset<T>(namespace: string, records: { key: string; value: T; updatedAt?: number }[]): Promise<void>;

  /** The record under a key, or undefined. */
  get<T>(namespace: string, key: string): Promise<StoredRecord<T> | undefined>;

  /** The records under several keys, in the order of `keys` (undefined where missing). */
  mget<T>(namespace: string, keys: string[]): Promise<(StoredRecord<T> | undefined)[]>;

  /** Deletes one key; returns whether it existed. */
  delete(namespace: string, key: string): Promise<boolean>;

  /** Deletes keys in [from, to); returns how many were deleted. */
  deleteRange(namespace: string, from: string, to: string): Promise<number>;

  /**
   * Lists records in pages. Cursors are stable under concurrent inserts: a record is never
   * returned twice across pages.
   * @throws Error naming the field when `where` uses a field not declared for the namespace.
   */
  list<T>(namespace: string, options?: RecordListOptions): Promise<RecordPage<T>>;

  /** Closes the database. */
  close(): Promise<void>;
}
