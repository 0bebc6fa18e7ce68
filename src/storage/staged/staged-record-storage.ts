/**
 * Staged RecordStorage (SPEC §4): records of a new conversation live in memory until it is
 * committed, then move to real storage, so an empty conversation never reaches disk.
 */
import type { NamespaceDefinition, RecordListOptions, RecordPage, RecordStorage, StoredRecord } from '../record-storage.js';
import {
  compareRecords,
  encodeRecordCursor,
  normalizeListOptions,
  validateNamespaceDefinition,
  serializeRecordValue,
  validateRecordKey,
  validateRecordKeys,
  validateUpdatedAt,
} from '../record-validation.js';
import { SqliteRecordStorage } from '../sqlite/sqlite-record-storage.js';
import { StagingRegistry } from './staging-registry.js';

/** Options of {@link StagedRecordStorage}. */
export interface StagedRecordStorageOptions {
  /** Where staged records live; default a new in-memory {@link SqliteRecordStorage}. Closed by `close`. */
  memory?: RecordStorage;
}

function stagedName(namespace: string, key: string): string {
  return `${namespace}\0${key}`;
}

function describe(namespace: string, key: string): string {
  return `Record ${JSON.stringify(key)} of namespace "${namespace}"`;
}

/**
 * A RecordStorage that keeps staged keys in memory and everything else in a real
 * RecordStorage. `list` merges both sides into one ordering; its cursors are those of
 * {@link encodeRecordCursor}, which both sides must understand (the SQLite backend does).
 * A staged key hides a record of the same key on the real side until committed.
 *
 * Limits: `mset` with both staged and unstaged keys is atomic per side, not across them;
 * `deleteRange` counts a key present on both sides twice.
 */
export class StagedRecordStorage implements RecordStorage {
  private readonly memory: RecordStorage;
  private readonly registry = new StagingRegistry();
  private readonly filterFields = new Map<string, Set<string>>();

  /**
   * @param real the durable storage that committed records go to (closed by `close`).
   * @param options see {@link StagedRecordStorageOptions}.
   */
  constructor(private readonly real: RecordStorage, options: StagedRecordStorageOptions = {}) {
    this.memory = options.memory ?? new SqliteRecordStorage(':memory:');
  }

  /**
   * Stages one key: until commit or discard, it is read and written in memory.
   * @throws Error when the key is invalid or already staged.
   */
  stage(namespace: string, key: string): void {
    this.checkNamespace(namespace);
    validateRecordKey(namespace, key);
    this.registry.stage(stagedName(namespace, key), describe(namespace, key));
  }

  /** Whether a key is staged. */
  isStaged(namespace: string, key: string): boolean {
    return this.registry.has(stagedName(namespace, key));
  }

  /**
   * Copies the staged record (if any; with its updatedAt) to the real storage and switches
   * the key over. On failure the key stays staged.
   * @throws Error when the key is not staged or the write fails.
   */
  async commit(namespace: string, key: string): Promise<void> {
    await this.registry.handOver(stagedName(namespace, key), describe(namespace, key), async () => {
      const record = await this.memory.get(namespace, key);
      if (record !== undefined) await this.real.set(namespace, key, record.value, record.updatedAt);
      await this.memory.delete(namespace, key);
    });
  }

  /**
   * Drops the staged record and unstages the key.
   * @throws Error when the key is not staged.
   */
  async discard(namespace: string, key: string): Promise<void> {
    await this.registry.handOver(stagedName(namespace, key), describe(namespace, key), async () => {
      await this.memory.delete(namespace, key);
    });
  }

  /** See {@link RecordStorage.defineNamespace}: declared on both sides. */
  defineNamespace(definition: NamespaceDefinition): void {
    const { name, filterFields } = validateNamespaceDefinition(definition);
    this.real.defineNamespace(definition);
    this.memory.defineNamespace(definition);
    const fields = this.filterFields.get(name) ?? new Set<string>();
    for (const field of filterFields) fields.add(field);
    this.filterFields.set(name, fields);
  }

  /** See {@link RecordStorage.set}. */
  set<T>(namespace: string, key: string, value: T, updatedAt?: number): Promise<void> {
    return this.routeKey(namespace, key, (storage) => storage.set(namespace, key, value, updatedAt));
  }

  /**
   * See {@link RecordStorage.mset}. Every record is checked before anything is written; the
   * staged and the unstaged records are then each written atomically (see the class limits).
   */
  async mset<T>(namespace: string, records: { key: string; value: T; updatedAt?: number }[]): Promise<void> {
    this.checkNamespace(namespace);
    if (!Array.isArray(records)) throw new Error(`mset on namespace "${namespace}" needs an array of records`);
    for (const record of records) {
      const key = validateRecordKey(namespace, record?.key);
      serializeRecordValue(namespace, key, record.value);
      if (record.updatedAt !== undefined) validateUpdatedAt(namespace, key, record.updatedAt);
    }
    await this.registry.partition(
      records.map((record) => stagedName(namespace, record.key)),
      async (staged) => {
        const inMemory = records.filter((record) => staged.has(stagedName(namespace, record.key)));
        const inReal = records.filter((record) => !staged.has(stagedName(namespace, record.key)));
        await Promise.all([
          inReal.length > 0 ? this.real.mset(namespace, inReal) : undefined,
          inMemory.length > 0 ? this.memory.mset(namespace, inMemory) : undefined,
        ]);
      },
    );
  }

  /** See {@link RecordStorage.get}. */
  get<T>(namespace: string, key: string): Promise<StoredRecord<T> | undefined> {
    return this.routeKey(namespace, key, (storage) => storage.get<T>(namespace, key));
  }

  /** See {@link RecordStorage.mget}. */
  async mget<T>(namespace: string, keys: string[]): Promise<(StoredRecord<T> | undefined)[]> {
    this.checkNamespace(namespace);
    validateRecordKeys(namespace, keys);
    return this.registry.partition(
      keys.map((key) => stagedName(namespace, key)),
      async (staged) => {
        const inMemory = keys.filter((key) => staged.has(stagedName(namespace, key)));
        const inReal = keys.filter((key) => !staged.has(stagedName(namespace, key)));
        const [fromReal, fromMemory] = await Promise.all([this.real.mget<T>(namespace, inReal), this.memory.mget<T>(namespace, inMemory)]);
        const found = new Map<string, StoredRecord<T> | undefined>();
        inReal.forEach((key, index) => found.set(key, fromReal[index]));
        inMemory.forEach((key, index) => found.set(key, fromMemory[index]));
        return keys.map((key) => found.get(key));
      },
    );
  }

  /** See {@link RecordStorage.delete}. */
  delete(namespace: string, key: string): Promise<boolean> {
    return this.routeKey(namespace, key, (storage) => storage.delete(namespace, key));
  }

  /** See {@link RecordStorage.deleteRange}: applied to both sides; staged keys stay staged. */
  async deleteRange(namespace: string, from: string, to: string): Promise<number> {
    this.checkNamespace(namespace);
    return this.registry.partition(this.stagedNames(namespace), async () => {
      const [inReal, inMemory] = await Promise.all([
        this.real.deleteRange(namespace, from, to),
        this.memory.deleteRange(namespace, from, to),
      ]);
      return inReal + inMemory;
    });
  }

  /** See {@link RecordStorage.list}: both sides merged into one ordering and paged together. */
  async list<T>(namespace: string, options: RecordListOptions = {}): Promise<RecordPage<T>> {
    const declared = this.checkNamespace(namespace);
    const normalized = normalizeListOptions(namespace, declared, options);
    const { realPage, memoryPage, staged } = await this.registry.partition(this.stagedNames(namespace), async (staged) => {
      const [realPage, memoryPage] = await Promise.all([this.real.list<T>(namespace, options), this.memory.list<T>(namespace, options)]);
      return { realPage, memoryPage, staged };
    });
    const merged = [...realPage.records.filter((record) => !staged.has(stagedName(namespace, record.key))), ...memoryPage.records].sort(
      (left, right) => compareRecords(left, right, normalized.orderBy, normalized.order),
    );
    const records = merged.slice(0, normalized.limit);
    const page: RecordPage<T> = { records };
    const last = records.at(-1);
    const more = merged.length > normalized.limit || realPage.nextCursor !== undefined || memoryPage.nextCursor !== undefined;
    if (more && last !== undefined) {
      page.nextCursor = encodeRecordCursor({ orderBy: normalized.orderBy, order: normalized.order, key: last.key, updatedAt: last.updatedAt });
    }
    return page;
  }

  /** Closes the memory and the real storage; staged records are gone. */
  async close(): Promise<void> {
    await Promise.allSettled([this.memory.close()]);
    await this.real.close();
  }

  private stagedNames(namespace: string): string[] {
    return this.registry.names().filter((name) => name.startsWith(`${namespace}\0`));
  }

  private checkNamespace(namespace: string): Set<string> {
    const fields = this.filterFields.get(namespace);
    if (fields === undefined) throw new Error(`Namespace ${JSON.stringify(namespace)} is not declared; call defineNamespace first`);
    return fields;
  }

  private routeKey<R>(namespace: string, key: string, operation: (storage: RecordStorage) => Promise<R>): Promise<R> {
    try {
      this.checkNamespace(namespace);
      validateRecordKey(namespace, key);
    } catch (error) {
      return Promise.reject(error);
    }
    const name = stagedName(namespace, key);
    return this.registry.route(
      () => (this.registry.has(name) ? name : undefined),
      () => operation(this.memory),
      () => operation(this.real),
    );
  }
}
