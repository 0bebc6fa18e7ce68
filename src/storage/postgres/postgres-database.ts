/**
 * The PostgreSQL connection pool shared by the PostgreSQL storages (SPEC §4), with the schema
 * migrations applied once before the first query (see `postgres-migrations.ts`).
 */
import pg from 'pg';
import { applyMigrations } from './postgres-migrations.js';

/** How to reach the database. */
export interface PostgresDatabaseOptions {
  /** libpq connection string, `postgres://user:password@host:port/database?...`. */
  connectionString: string;
  /**
   * Schema holding every table (created if missing), so several deployments can share one
   * database. Letters, digits and `_`, starting with a letter or `_`. Default `public`.
   */
  schema?: string;
  /** Most connections the pool opens. Default 10. */
  maxConnections?: number;
  /** Name shown in `pg_stat_activity`. Default `openvaala`. */
  applicationName?: string;
}

/** A connection taken from the pool for a transaction. */
export type PostgresClient = pg.PoolClient;

const SCHEMA_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A pool of connections to one PostgreSQL database, every connection with `search_path` set to
 * the configured schema. The migrations run once, on first use (`ready`); every storage built
 * on the database waits for them. Shared: storages built on it do not close it; its owner
 * calls {@link PostgresDatabase.close}.
 */
export class PostgresDatabase {
  /** The schema holding the tables. */
  readonly schema: string;
  /** The connection string (for LISTEN connections that must live outside the pool). */
  readonly connectionString: string;
  private readonly pool: pg.Pool;
  private readyPromise: Promise<void> | undefined;
  private closed = false;

  /**
   * @throws Error naming the option when the schema name or the pool size is invalid
   */
  constructor(options: PostgresDatabaseOptions) {
    if (typeof options?.connectionString !== 'string' || options.connectionString === '') {
      throw new Error('A PostgreSQL storage needs a connection string');
    }
    this.schema = options.schema ?? 'public';
    if (!SCHEMA_PATTERN.test(this.schema)) {
      throw new Error(`Invalid PostgreSQL schema name ${JSON.stringify(this.schema)}: use letters, digits and "_", not starting with a digit`);
    }
    const max = options.maxConnections ?? 10;
    if (!Number.isSafeInteger(max) || max < 1) throw new Error(`Invalid PostgreSQL maxConnections ${String(max)}: must be an integer >= 1`);
    this.connectionString = options.connectionString;
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max,
      application_name: options.applicationName ?? 'openvaala',
      options: `-c search_path=${this.schema}`,
    });
    // An idle connection dropped by the server must not crash the process; the pool replaces it.
    this.pool.on('error', () => undefined);
  }

  /**
   * Resolves once the schema exists and every migration is applied. Called by every storage
   * before its first query; the work is done once.
   * @throws Error when the database cannot be reached, is not UTF-8, or has a newer schema
   */
  ready(): Promise<void> {
    this.readyPromise ??= this.withClient((client) => applyMigrations(client, this.schema)).catch((error: unknown) => {
      this.readyPromise = undefined;
      throw new Error(`PostgreSQL storage cannot start: ${(error as Error).message}`, { cause: error });
    });
    return this.readyPromise;
  }

  /**
   * Runs one statement on any pooled connection. With `name`, the statement is prepared once
   * per connection and reused (saves parsing and planning on hot reads); a name must always
   * go with the same SQL text.
   */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, parameters: unknown[] = [], name?: string): Promise<pg.QueryResult<R>> {
    this.checkOpen();
    return name === undefined ? this.pool.query<R>(sql, parameters) : this.pool.query<R>({ name, text: sql, values: parameters });
  }

  /** Runs `work` on one connection inside `BEGIN … COMMIT` (rolled back when it throws). */
  async transaction<T>(work: (client: PostgresClient) => Promise<T>): Promise<T> {
    return this.withClient(async (client) => {
      await client.query('BEGIN');
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  /** Runs `work` on one pooled connection, released afterwards. */
  async withClient<T>(work: (client: PostgresClient) => Promise<T>): Promise<T> {
    this.checkOpen();
    const client = await this.pool.connect();
    try {
      return await work(client);
    } finally {
      client.release();
    }
  }

  /** Closes every connection. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('The PostgreSQL database is closed');
  }
}

/** Quotes an SQL identifier (table or index name). */
export function quotePostgresIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
