/**
 * The storage layer (SPEC §4): the LogStorage and RecordStorage contracts and every backend.
 */
export type { JsonValue, LogEntry, LogProblem, LogProblemListener, LogReadOptions, LogStorage } from './log-storage.js';
export { UnreadableStreamError } from './log-storage.js';
export type { NamespaceDefinition, RecordListOptions, RecordPage, RecordStorage, StoredRecord } from './record-storage.js';
export {
  MAXIMUM_SEGMENT_BYTES,
  MAXIMUM_STREAM_ID_BYTES,
  STREAM_FILE_SUFFIX,
  descendantPathRange,
  isWithinLogPath,
  joinLogPath,
  normalizeReadOptions,
  serializeLogValues,
  sortNames,
  validateLogPath,
  validateStreamId,
  type NormalizedReadOptions,
} from './log-validation.js';
export { defaultLogProblemListener, notifyLogProblem, parseStoredLogRows, type StoredLogRow } from './log-problems.js';
export {
  DEFAULT_LIST_LIMIT,
  compareKeys,
  compareRecords,
  decodeRecordCursor,
  encodeRecordCursor,
  normalizeListOptions,
  prefixUpperBound,
  serializeRecordBatch,
  serializeRecordValue,
  validateKeyRange,
  validateNamespaceDefinition,
  validateRecordKey,
  validateRecordKeys,
  validateUpdatedAt,
  type NormalizedListOptions,
  type RecordCursor,
  type SerializedRecord,
} from './record-validation.js';
export { buildRecordListQuery, recordPageFromRows, type SqlListDialect, type SqlListQuery } from './sql-record-listing.js';
export { FileLogStorage, type FileLogStorageOptions } from './file/file-log-storage.js';
export {
  SQLITE_BUSY_TIMEOUT_MS,
  configureSqliteDatabase,
  openSqliteDatabase,
  resolveSqliteDatabase,
  type SqliteDatabase,
  type SqliteDatabaseSource,
} from './sqlite/sqlite-database.js';
export { SqliteLogStorage, type SqliteLogStorageOptions } from './sqlite/sqlite-log-storage.js';
export { SqliteRecordStorage } from './sqlite/sqlite-record-storage.js';
export { StagedLogStorage, type StagedLogStorageOptions } from './staged/staged-log-storage.js';
export { StagedRecordStorage, type StagedRecordStorageOptions } from './staged/staged-record-storage.js';
export { PostgresDatabase, quotePostgresIdentifier, type PostgresClient, type PostgresDatabaseOptions } from './postgres/postgres-database.js';
export { POSTGRES_MIGRATIONS, applyMigrations, type PostgresMigration } from './postgres/postgres-migrations.js';
export { PostgresLogStorage, type PostgresLogStorageOptions } from './postgres/postgres-log-storage.js';
export { PostgresRecordStorage } from './postgres/postgres-record-storage.js';
