/**
 * Versioned schema of the PostgreSQL storages. Each migration runs once, in order, in one
 * transaction with its row in `schema_migrations`; servers starting at the same time take
 * turns through an advisory lock, so each migration is applied exactly once. A database whose
 * schema is newer than this build is refused (an older server must not write to it).
 *
 * Record namespaces are not here: the RecordStorage contract creates them at run time
 * (`defineNamespace`), as `records_<name>` tables.
 */
import type pg from 'pg';

/** One schema change. */
export interface PostgresMigration {
  /** 1, 2, 3, … in order, never reused. */
  version: number;
  /** What it does, stored with it. */
  name: string;
  /** Statements run in one transaction. */
  sql: string;
}

/** Key of the advisory lock held while migrating (any constant unlikely to collide: "ovmigrat" in hex-ish). */
const MIGRATION_LOCK_KEY = 0x6f766d69;

/** Every migration this build knows, oldest first. Append only. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'log streams and entries',
    // COLLATE "C": byte order of UTF-8, the order every backend lists names and keys in.
    sql: `
CREATE TABLE log_streams (
  path TEXT COLLATE "C" NOT NULL,
  stream TEXT COLLATE "C" NOT NULL,
  last_seq BIGINT NOT NULL,
  PRIMARY KEY (path, stream)
);
CREATE TABLE log_entries (
  path TEXT COLLATE "C" NOT NULL,
  stream TEXT COLLATE "C" NOT NULL,
  seq BIGINT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (path, stream, seq)
);`,
  },
  {
    version: 2,
    name: 'conversation search',
    sql: `
CREATE TABLE conversation_search (
  conversation_id TEXT COLLATE "C" PRIMARY KEY,
  title TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  next_ordinal INTEGER NOT NULL
);
CREATE INDEX conversation_search__updated ON conversation_search (updated_at, conversation_id);
CREATE TABLE conversation_search_text (
  conversation_id TEXT COLLATE "C" NOT NULL,
  ordinal INTEGER NOT NULL,
  body TSVECTOR NOT NULL,
  PRIMARY KEY (conversation_id, ordinal)
);
CREATE INDEX conversation_search_text__body ON conversation_search_text USING GIN (body);
-- Optional: with unaccent, search ignores diacritics as the SQLite backend does. Without the
-- privilege or the contrib module it is simply not used.
DO $$ BEGIN CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public; EXCEPTION WHEN others THEN NULL; END $$;`,
  },
  {
    version: 3,
    name: 'cluster servers and conversation owners',
    // The owner of a conversation is whoever holds its advisory lock; these rows only say
    // where that server can be reached (a row may outlive its server: the lock decides).
    sql: `
CREATE TABLE cluster_servers (
  server_id TEXT COLLATE "C" PRIMARY KEY,
  url TEXT NOT NULL,
  started_at BIGINT NOT NULL
);
CREATE TABLE conversation_owners (
  conversation_id TEXT COLLATE "C" PRIMARY KEY,
  server_id TEXT COLLATE "C" NOT NULL,
  url TEXT NOT NULL,
  since BIGINT NOT NULL
);
CREATE INDEX conversation_owners__server ON conversation_owners (server_id);`,
  },
];

/**
 * Creates the schema if missing and applies the migrations it lacks, each in its own
 * transaction, under an advisory lock.
 * @throws Error when the database is not UTF-8 (keys would not sort by code point) or its
 *   schema is newer than this build (naming both versions)
 */
export async function applyMigrations(client: pg.ClientBase, schema: string, migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS): Promise<void> {
  const encoding = (await client.query<{ server_encoding: string }>('SHOW server_encoding')).rows[0]?.server_encoding;
  if (encoding !== 'UTF8') {
    throw new Error(`the database encoding is ${String(encoding)}; OpenVaala needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8')`);
  }
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const applied = new Set((await client.query<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations`)).rows.map((row) => row.version));
    const newest = Math.max(0, ...applied);
    const known = Math.max(0, ...migrations.map((migration) => migration.version));
    if (newest > known) {
      throw new Error(`the database schema "${schema}" is at version ${newest}, newer than this server understands (${known}); upgrade the server`);
    }
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(`SET LOCAL search_path TO "${schema}"`);
        await client.query(migration.sql);
        await client.query(`INSERT INTO "${schema}".schema_migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`, { cause: error });
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
  }
}
