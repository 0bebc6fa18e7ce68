/**
 * A runtime server whose `storage.yaml` selects PostgreSQL: conversations, their items, the
 * listing and the search live in the database (nothing under the data directory's
 * `conversations/`), survive a restart with a new data directory, and bad storage
 * configuration stops the start with an error naming the file and the key path.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { ConfigurationError, loadConfiguration } from '../../src/config/configuration.js';
import { createLogger } from '../../src/logger.js';
import { startRuntimeServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment } from '../helpers/environment.js';
import { startInProcessServer } from '../helpers/in-process-server.js';
import { createTestSchema, dropTestSchema, startTestPostgres, type ThrowawayPostgres } from '../helpers/postgres-server.js';

const VARIABLE = 'OPENVAALA_TEST_DATABASE_URL';

let server: ThrowawayPostgres;

beforeAll(async () => {
  server = await startTestPostgres();
  process.env[VARIABLE] = server.connectionString;
}, 120_000);

afterAll(async () => {
  delete process.env[VARIABLE];
  await server?.stop();
});

function storageYaml(schema: string): string {
  return `backend: postgres\npostgres:\n  connectionString: env:${VARIABLE}\n  schema: ${schema}\n  maxConnections: 4\n`;
}

describe('runtime server on PostgreSQL', () => {
  it('keeps conversations, items, listing and search in the database, across a restart on another data directory', async () => {
    const schema = await createTestSchema(server);
    const first = await startInProcessServer('responses:\n  - text: "the flux capacitor is charged"\n', {
      beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'storage.yaml'), storageYaml(schema)),
    });
    let conversationId: string;
    try {
      conversationId = await first.conversation();
      await first.client.request('session/input', { conversationId, input: [{ type: 'text', text: 'charge the capacitor' }] });
      await first.turnsCompleted(1);
      const directory = path.join(first.environment.paths.dataDir, 'conversations');
      const files = existsSync(directory) ? readdirSync(directory, { recursive: true, encoding: 'utf8' }) : [];
      expect(files.filter((file) => file.endsWith('.jsonl'))).toEqual([]);
      const database = new pg.Client({ connectionString: server.connectionString });
      await database.connect();
      const rows = await database.query(`SELECT count(*)::int AS count FROM ${schema}.log_entries WHERE path = $1`, [`conversations/${conversationId}`]);
      const migrations = await database.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      await database.end();
      expect(rows.rows[0].count).toBeGreaterThan(0);
      expect(migrations.rows.map((row: { version: number }) => row.version)).toEqual([1, 2, 3]);
    } finally {
      await first.stop();
    }
    const second = await startInProcessServer('responses: []\n', {
      beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'storage.yaml'), storageYaml(schema)),
    });
    try {
      const listed = await second.client.request('conversation/list', {});
      expect(listed.conversations.map((conversation) => conversation.id)).toEqual([conversationId]);
      const searched = await second.client.request('conversation/list', { query: 'capacitor' });
      expect(searched.conversations.map((conversation) => conversation.id)).toEqual([conversationId]);
      expect((await second.client.request('conversation/list', { query: 'flux' })).conversations).toHaveLength(1);
      expect((await second.client.request('conversation/list', { query: 'nowhere' })).conversations).toHaveLength(0);
      const { conversation } = await second.client.request('conversation/get', { conversationId });
      const items = await second.client.request('items/list', { conversationId, sessionId: conversation.rootSessionId });
      expect(items.items.map((entry) => entry.item.kind)).toContain('assistant_message');
    } finally {
      await second.stop();
      await dropTestSchema(server, schema);
    }
  }, 60_000);

  it('refuses a storage.yaml that writes the connection string literally or lacks it, naming file, line and key path', async () => {
    const environment = await createTestEnvironment('responses: []\n');
    try {
      const file = path.join(environment.paths.configDir, 'storage.yaml');
      writeFileSync(file, 'backend: postgres\npostgres:\n  connectionString: postgres://user:secret@db/openvaala\n');
      const literal = await loadConfiguration(environment.paths.configDir).catch((error: unknown) => error);
      expect(literal).toBeInstanceOf(ConfigurationError);
      expect((literal as Error).message).toContain(`${file}:3: postgres.connectionString: write the connection string as env:NAME`);
      writeFileSync(file, 'backend: postgres\n');
      expect(((await loadConfiguration(environment.paths.configDir).catch((error: unknown) => error)) as Error).message).toContain(`${file}`);
      expect(((await loadConfiguration(environment.paths.configDir).catch((error: unknown) => error)) as Error).message).toMatch(/postgres: backend postgres needs postgres\.connectionString/);
      writeFileSync(file, 'backend: mysql\n');
      expect(((await loadConfiguration(environment.paths.configDir).catch((error: unknown) => error)) as Error).message).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:1: backend: `));
      writeFileSync(file, 'backend: postgres\npostgres:\n  connectionString: env:OPENVAALA_TEST_UNSET_VARIABLE\n  schema: 9bad\n');
      expect(((await loadConfiguration(environment.paths.configDir).catch((error: unknown) => error)) as Error).message).toContain(`${file}:4: postgres.schema: use letters, digits and "_"`);
    } finally {
      await environment.dispose();
    }
  });

  it('stops the start when the env: variable of the connection string is unset, naming storage.yaml and the key', async () => {
    const environment = await createTestEnvironment('responses: []\n');
    try {
      const file = path.join(environment.paths.configDir, 'storage.yaml');
      writeFileSync(file, 'backend: postgres\npostgres:\n  connectionString: env:OPENVAALA_TEST_UNSET_VARIABLE\n');
      const error = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toBe(`${file}:3: postgres.connectionString: the environment variable OPENVAALA_TEST_UNSET_VARIABLE is not set (it must hold the PostgreSQL connection string)`);
      // The data directory is free again: a server with the embedded default starts on it.
      writeFileSync(file, 'backend: embedded\n');
      const running = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') });
      const client = await RuntimeClient.connect({ url: running.url, token: running.token, clientName: 'test' });
      expect((await client.request('conversation/list', {})).conversations).toEqual([]);
      await client.close();
      await running.stop();
    } finally {
      await environment.dispose();
    }
  });

  it('stops the start with the reason when the database cannot be reached', async () => {
    const environment = await createTestEnvironment('responses: []\n');
    process.env.OPENVAALA_TEST_UNREACHABLE_URL = 'postgres://openvaala@127.0.0.1:1/postgres';
    try {
      writeFileSync(path.join(environment.paths.configDir, 'storage.yaml'), 'backend: postgres\npostgres:\n  connectionString: env:OPENVAALA_TEST_UNREACHABLE_URL\n');
      await expect(startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') })).rejects.toThrow(/PostgreSQL storage cannot start: .*ECONNREFUSED/);
    } finally {
      delete process.env.OPENVAALA_TEST_UNREACHABLE_URL;
      await environment.dispose();
    }
  });
});
