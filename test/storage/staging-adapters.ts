/**
 * Test adapters that drive the staged storages through the plain LogStorage / RecordStorage
 * interfaces, so the conformance suites can run against them: each name is staged on first
 * write and, depending on the mode, committed straight after it.
 */
import type { LogEntry, LogReadOptions, LogStorage } from '../../src/storage/log-storage.js';
import { validateLogPath, validateStreamId } from '../../src/storage/log-validation.js';
import type { NamespaceDefinition, RecordListOptions, RecordPage, RecordStorage, StoredRecord } from '../../src/storage/record-storage.js';
import type { StagedLogStorage } from '../../src/storage/staged/staged-log-storage.js';
import type { StagedRecordStorage } from '../../src/storage/staged/staged-record-storage.js';

/**
 * `before-commit`: everything written stays staged (in memory).
 * `after-commit`: each name is staged, written once, committed, then used on real storage.
 * `mixed`: about half of the names are staged (never committed), the rest go straight to real storage.
 */
export type StagingMode = 'before-commit' | 'after-commit' | 'mixed';

function chosenForStaging(name: string, mode: StagingMode): boolean {
  if (mode !== 'mixed') return true;
  let sum = 0;
  for (const character of name) sum += character.codePointAt(0) as number;
  return sum % 2 === 0;
}

function isValid(check: () => void): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

/** Stages the first segment of each path on its first append. */
export class AutoStagingLogStorage implements LogStorage {
  private readonly seen = new Set<string>();

  constructor(readonly staged: StagedLogStorage, private readonly mode: StagingMode) {}

  async append<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    const top = path.split('/')[0] as string;
    const valid = isValid(() => validateLogPath(path)) && isValid(() => validateStreamId(stream, path));
    if (!valid || path === '' || this.seen.has(top) || !Array.isArray(values) || values.length === 0) {
      return this.staged.append(path, stream, values);
    }
    this.seen.add(top);
    if (!chosenForStaging(top, this.mode)) return this.staged.append(path, stream, values);
    this.staged.stage(top);
    const result = this.staged.append(path, stream, values);
    if (this.mode === 'after-commit') {
      const entries = await result;
      await this.staged.commit(top);
      return entries;
    }
    return result;
  }

  read<T = unknown>(path: string, stream: string, options?: LogReadOptions): Promise<LogEntry<T>[]> {
    return this.staged.read<T>(path, stream, options);
  }

  replaceStream<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    return this.staged.replaceStream<T>(path, stream, values);
  }

  lastSeq(path: string, stream: string): Promise<number> {
    return this.staged.lastSeq(path, stream);
  }

  listStreams(path: string): Promise<string[]> {
    return this.staged.listStreams(path);
  }

  listPaths(path: string): Promise<string[]> {
    return this.staged.listPaths(path);
  }

  deleteStream(path: string, stream: string): Promise<void> {
    return this.staged.deleteStream(path, stream);
  }

  deletePath(path: string): Promise<void> {
    return this.staged.deletePath(path);
  }

  close(): Promise<void> {
    return this.staged.close();
  }
}

/** Stages each key on its first write. */
export class AutoStagingRecordStorage implements RecordStorage {
  private readonly seen = new Set<string>();

  constructor(readonly staged: StagedRecordStorage, private readonly mode: StagingMode) {}

  /** Stages the keys not seen before; returns those staged now. */
  private stageNew(namespace: string, keys: string[]): string[] {
    const staged: string[] = [];
    for (const key of keys) {
      const id = `${namespace}\0${key}`;
      if (this.seen.has(id)) continue;
      this.seen.add(id);
      if (!chosenForStaging(key, this.mode)) continue;
      try {
        this.staged.stage(namespace, key);
        staged.push(key);
      } catch {
        // Invalid names: the write itself reports the error.
      }
    }
    return staged;
  }

  private async commitAll(namespace: string, keys: string[]): Promise<void> {
    if (this.mode !== 'after-commit') return;
    for (const key of keys) await this.staged.commit(namespace, key);
  }

  defineNamespace(definition: NamespaceDefinition): void {
    this.staged.defineNamespace(definition);
  }

  async set<T>(namespace: string, key: string, value: T, updatedAt?: number): Promise<void> {
    const stagedNow = this.stageNew(namespace, [key]);
    await this.staged.set(namespace, key, value, updatedAt);
    await this.commitAll(namespace, stagedNow);
  }

  async mset<T>(namespace: string, records: { key: string; value: T; updatedAt?: number }[]): Promise<void> {
    const stagedNow = Array.isArray(records) ? this.stageNew(namespace, records.map((record) => record?.key)) : [];
    await this.staged.mset(namespace, records);
    await this.commitAll(namespace, stagedNow);
  }

  get<T>(namespace: string, key: string): Promise<StoredRecord<T> | undefined> {
    return this.staged.get<T>(namespace, key);
  }

  mget<T>(namespace: string, keys: string[]): Promise<(StoredRecord<T> | undefined)[]> {
    return this.staged.mget<T>(namespace, keys);
  }

  delete(namespace: string, key: string): Promise<boolean> {
    return this.staged.delete(namespace, key);
  }

  deleteRange(namespace: string, from: string, to: string): Promise<number> {
    return this.staged.deleteRange(namespace, from, to);
  }

  list<T>(namespace: string, options?: RecordListOptions): Promise<RecordPage<T>> {
    return this.staged.list<T>(namespace, options);
  }

  close(): Promise<void> {
    return this.staged.close();
  }
}
