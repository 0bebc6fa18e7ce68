/**
 * Opens the storage a runtime server keeps conversations in (SPEC §4), as `storage.yaml`
 * selects: the embedded default (JSONL logs in the data directory, `metadata.db` beside them)
 * or one PostgreSQL database. Either way the dao gets staged storages (new conversations stay
 * in memory until their first input) and a conversation search.
 */
import type { ConversationSearchIndex } from '../dao/conversation-search-index.js';
import { CONVERSATIONS_PATH } from '../dao/conversation-store.js';
import { SqliteConversationSearchIndex } from '../dao/sqlite-conversation-search-index.js';
import type { StorageSelection } from '../config/storage-settings.js';
import type { Logger } from '../logger.js';
import { FileLogStorage } from '../storage/file/file-log-storage.js';
import type { StreamLocator } from '../dao/log-damage.js';
import type { LogProblemListener, LogStorage } from '../storage/log-storage.js';
import type { PostgresDatabase } from '../storage/postgres/postgres-database.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';
import { StagedLogStorage } from '../storage/staged/staged-log-storage.js';
import { StagedRecordStorage } from '../storage/staged/staged-record-storage.js';
import { redactingWrites } from '../platform/secrets/redacting-outputs.js';
import type { SecretRedactor } from '../platform/secrets/secret-redactor.js';
import { closeIndexDatabase, openIndexDatabase, rebuildIndex } from './index-database.js';

/** The opened storage of a server. */
export interface ServerStorage {
  logs: StagedLogStorage;
  index: StagedRecordStorage;
  search: ConversationSearchIndex;
  /** Names where a log stream is stored, in messages about damaged logs (the embedded storage: the file's path). */
  locateStream: StreamLocator;
  /** True when the search tables are new while conversations exist (they need `openvaala reindex`). */
  searchNeedsReindex: () => boolean;
  /** The PostgreSQL pool, when the backend is PostgreSQL (shared with the cluster coordination). */
  postgres?: PostgresDatabase;
  /** Closes everything, the shared database last. */
  close(): Promise<void>;
}

/** Options of {@link openServerStorage}. */
export interface OpenServerStorageOptions {
  dataDir: string;
  selection: StorageSelection;
  logger: Logger;
  /** Also told about each damaged log line the storage skips (the server log gets them in any case). */
  onLogProblem?: LogProblemListener;
  /** Wraps the real log storage (tests: fault injection). */
  wrapLogStorage?: (storage: LogStorage) => LogStorage;
  /** PostgreSQL: called when the active-server lock is lost after start (the server should stop). */
  onActiveLockLost?: (error: Error) => void;
  /**
   * Hides secret values (docs/platform.md, "Secrets"): the logs, the index and the search index
   * (titles, previews, message text) are written with every project secret replaced by `***`.
   */
  redactor?: SecretRedactor;
}

/** `storage` with its writes redacted by `redactor` when there is one (the backends' shared wrapping). */
export function redacted<T extends object>(storage: T, writes: readonly (keyof T & string)[], redactor: SecretRedactor | undefined): T {
  return redactor ? redactingWrites(storage, writes, redactor) : storage;
}

/** The problem listener of a server's log storage: the server log, then `onLogProblem`. */
export function serverLogProblemListener(options: Pick<OpenServerStorageOptions, 'logger' | 'onLogProblem'>): LogProblemListener {
  return (problem) => {
    options.logger.warn({ problem }, 'damaged log entry skipped');
    options.onLogProblem?.(problem);
  };
}

/**
 * Opens the selected storage. Embedded: a missing or damaged `metadata.db` is rebuilt from
 * the logs first. PostgreSQL: the migrations are applied before anything else.
 * @throws Error when the database cannot be opened or reached (the message says which)
 */
export async function openServerStorage(options: OpenServerStorageOptions): Promise<ServerStorage> {
  const { dataDir, selection, logger } = options;
  const onProblem = serverLogProblemListener(options);
  // The PostgreSQL modules (and `pg`) are loaded only when selected: an embedded server never holds them.
  if (selection.backend === 'postgres') return (await import('./server-storage-postgres.js')).openPostgresServerStorage({ ...options, selection });
  const files = new FileLogStorage(dataDir, { onProblem });
  const logs = new StagedLogStorage(redacted(options.wrapLogStorage ? options.wrapLogStorage(files) : files, ['append', 'replaceStream'], options.redactor));
  const opened = openIndexDatabase(dataDir);
  const database = opened.database;
  try {
    // A missing or damaged index is rebuilt from the logs before any client sees the listing.
    const rebuilt = opened.rebuild !== undefined && (await files.listPaths(CONVERSATIONS_PATH)).length > 0;
    if (rebuilt && opened.rebuild) await rebuildIndex(dataDir, files, database, opened.rebuild, logger);
    const index = new StagedRecordStorage(redacted(new SqliteRecordStorage(database), ['set', 'mset'], options.redactor));
    const search = new SqliteConversationSearchIndex(database);
    return {
      logs,
      index,
      locateStream: (logPath, stream) => files.streamFilePath(logPath, stream),
      search: redacted(search, ['setConversations', 'addMessages'], options.redactor),
      searchNeedsReindex: () => !rebuilt && search.createdTables,
      close: async () => {
        await search.close();
        await index.close();
        await logs.close();
        closeIndexDatabase(dataDir, database);
      },
    };
  } catch (error) {
    await logs.close();
    closeIndexDatabase(dataDir, database);
    throw error;
  }
}
