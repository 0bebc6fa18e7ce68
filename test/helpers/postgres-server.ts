/**
 * A real PostgreSQL server for tests: a throwaway cluster (`bench/postgres-cluster.ts`) on a
 * free loopback port, plus one fresh schema per storage under test so tests never see each
 * other's tables. A test needing PostgreSQL fails (never skips) when it cannot start, with the
 * reason and how to install it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../../bench/postgres-cluster.js';

export type { ThrowawayPostgres } from '../../bench/postgres-cluster.js';

/**
 * Starts a throwaway cluster with `fsync` off (test data need not survive a power loss).
 * @throws Error `PostgreSQL could not be started for these tests: <reason>`
 */
export async function startTestPostgres(): Promise<ThrowawayPostgres> {
  try {
    return await startThrowawayPostgres({ durable: false });
  } catch (error) {
    throw new Error(`PostgreSQL could not be started for these tests: ${(error as Error).message}`, { cause: error });
  }
}

/** Creates a new, empty schema with a random name (`test_<hex>`) and returns its name. */
export async function createTestSchema(server: ThrowawayPostgres): Promise<string> {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: server.connectionString });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
  return schema;
}

/** Drops a schema made by {@link createTestSchema} with everything in it. */
export async function dropTestSchema(server: ThrowawayPostgres, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: server.connectionString });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
