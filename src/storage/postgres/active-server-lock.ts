/**
 * One active runtime server per PostgreSQL schema. A server keeps its conversations' live
 * state (running turns, subscribers) in memory, so two servers must not serve the same
 * conversations at once; until conversations are leased one by one, the whole schema is held
 * by one server through a session-level advisory lock on a dedicated connection. Other
 * servers started on the same schema wait for it (standby) and take over as soon as it is
 * released: at a clean stop, or when the holder's connection drops (process killed, machine
 * gone: PostgreSQL ends the session and frees the lock when it notices, at once for a killed
 * process whose socket the kernel closes, after the TCP keepalive otherwise).
 */
import pg from 'pg';

/** First key of the two-part advisory lock ("ovac"); the second is the schema's hash. */
const ACTIVE_LOCK_CLASS = 0x6f766163;

/** Options of {@link acquireActiveServerLock}. */
export interface ActiveServerLockOptions {
  connectionString: string;
  /** The schema the lock guards. */
  schema: string;
  /** Called once when another server holds the lock and this one starts waiting. */
  onWaiting?: () => void;
  /** Called when the lock's connection fails after it was acquired: this server is no longer the only one. */
  onLost?: (error: Error) => void;
}

/** A held lock. */
export interface ActiveServerLock {
  /** Releases the lock (closes its connection). Idempotent. */
  release(): Promise<void>;
}

/**
 * Takes the schema's active-server lock, waiting as long as another server holds it.
 * @throws Error when the database cannot be reached
 */
export async function acquireActiveServerLock(options: ActiveServerLockOptions): Promise<ActiveServerLock> {
  const client = new pg.Client({ connectionString: options.connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000, application_name: 'openvaala active-server lock' });
  let released = false;
  let acquired = false;
  client.on('error', (error: Error) => {
    if (acquired && !released) options.onLost?.(error);
  });
  await client.connect();
  try {
    const key: [number, string] = [ACTIVE_LOCK_CLASS, options.schema];
    const tried = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked', key);
    if (tried.rows[0]?.locked !== true) {
      options.onWaiting?.();
      await client.query('SELECT pg_advisory_lock($1, hashtext($2))', key);
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new Error(`Cannot take the active-server lock of PostgreSQL schema "${options.schema}": ${(error as Error).message}`, { cause: error });
  }
  acquired = true;
  client.on('end', () => {
    if (!released) options.onLost?.(new Error('the connection holding the active-server lock ended'));
  });
  return {
    release: async () => {
      if (released) return;
      released = true;
      await client.end().catch(() => undefined);
    },
  };
}
