/**
 * The PostgreSQL storage of a runtime server (`storage.yaml` `backend: postgres`,
 * docs/storage.md): kept apart from `server-storage.ts` so that `pg` and these modules load
 * only when that backend is selected.
 */
import { PostgresConversationSearchIndex } from '../dao/postgres-conversation-search-index.js';
import type { StorageSelection } from '../config/storage-settings.js';
import { acquireActiveServerLock, type ActiveServerLock } from '../storage/postgres/active-server-lock.js';
import { PostgresDatabase } from '../storage/postgres/postgres-database.js';
import { PostgresLogStorage } from '../storage/postgres/postgres-log-storage.js';
import { PostgresRecordStorage } from '../storage/postgres/postgres-record-storage.js';
import { StagedLogStorage } from '../storage/staged/staged-log-storage.js';
import { StagedRecordStorage } from '../storage/staged/staged-record-storage.js';
import { describeStream } from '../dao/log-damage.js';
import { redacted, serverLogProblemListener, type OpenServerStorageOptions, type ServerStorage } from './server-storage.js';

/**
 * Opens the PostgreSQL storage: applies the migrations, then, without a cluster, waits for the
 * schema's active-server lock (one active server per schema; another one stands by until it is
 * gone). In a cluster every server serves at once (docs/deployment.md).
 * @throws Error when the database cannot be reached or migrated (the message says which)
 */
export async function openPostgresServerStorage(options: OpenServerStorageOptions & { selection: Extract<StorageSelection, { backend: 'postgres' }> }): Promise<ServerStorage> {
  const { selection, logger } = options;
  const onProblem = serverLogProblemListener(options);
  const database = new PostgresDatabase({
    connectionString: selection.connectionString,
    ...(selection.schema !== undefined ? { schema: selection.schema } : {}),
    ...(selection.maxConnections !== undefined ? { maxConnections: selection.maxConnections } : {}),
  });
  let lock: ActiveServerLock | undefined;
  try {
    await database.ready();
    // Without a cluster, one active server per schema; another one started on it waits here
    // until this one is gone. In a cluster every server serves, each conversation owned by one.
    if (selection.cluster === undefined) lock = await acquireActiveServerLock({
      connectionString: selection.connectionString,
      schema: database.schema,
      onWaiting: () => logger.warn({ schema: database.schema }, 'another runtime server is active on this PostgreSQL schema: standing by until it stops'),
      onLost: (error) => {
        logger.error({ error: error.message }, 'lost the active-server lock of the PostgreSQL schema');
        options.onActiveLockLost?.(error);
      },
    });
  } catch (error) {
    await database.close();
    throw error;
  }
  const real = new PostgresLogStorage(database, { onProblem });
  const logs = new StagedLogStorage(redacted(options.wrapLogStorage ? options.wrapLogStorage(real) : real, ['append', 'replaceStream'], options.redactor));
  const index = new StagedRecordStorage(redacted(new PostgresRecordStorage(database), ['set', 'mset'], options.redactor));
  const search = new PostgresConversationSearchIndex(database);
  const searchWrites = redacted(search, ['setConversations', 'addMessages'], options.redactor);
  return {
    logs,
    index,
    search: searchWrites,
    locateStream: describeStream,
    searchNeedsReindex: () => false,
    postgres: database,
    close: async () => {
      await search.close();
      await index.close();
      await logs.close();
      await database.close();
      await lock?.release();
    },
  };
}
