/**
 * The platform's identity stores on a real SQLite record storage, and its settings: the last
 * administrator holds under concurrent demotions, sessions expire, tokens are stored hashed,
 * the client address honours only trusted proxies, `server.yaml` mistakes name the key, and a
 * server without platform mode answers `users/*` with `platform_off`.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadConfiguration } from '../../src/config/configuration.js';
import { createLogger } from '../../src/logger.js';
import { openPlatformDatabase, PLATFORM_DATABASE_FILE } from '../../src/platform/platform-database.js';
import { ApiTokens } from '../../src/platform/sign-in/api-tokens.js';
import { clientAddress, TrustedProxies } from '../../src/platform/sign-in/client-address.js';
import { PlatformSessions } from '../../src/platform/sign-in/platform-sessions.js';
import { UserStore } from '../../src/platform/users/user-store.js';
import { startRuntimeServer } from '../../src/server/runtime-server.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { createTestEnvironment } from '../helpers/environment.js';
import { RpcSocket } from './platform-client.js';

function request(peer: string, forwardedFor?: string): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } } as unknown as IncomingMessage;
}

describe('users', () => {
  it('keeps one administrator when two demote each other at the same time', async () => {
    const users = new UserStore(new SqliteRecordStorage(':memory:'));
    const ada = await users.claim({ email: 'ada@example.com', password: 'correct horse battery' });
    const bob = await users.create({ email: 'bob@example.com', role: 'admin', password: 'bobs long password' });
    const outcomes = await Promise.allSettled([users.setRole(ada.id, 'member'), users.setRole(bob.id, 'member')]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(String((outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason.message)).toMatch(/is the last administrator and cannot be demoted/);
    expect((await users.list()).filter((user) => user.role === 'admin')).toHaveLength(1);
  });

  it('stores an argon2id hash, never the password, and refuses a taken email', async () => {
    const users = new UserStore(new SqliteRecordStorage(':memory:'));
    const ada = await users.claim({ email: ' Ada@Example.com ', password: 'correct horse battery' });
    expect(ada.email).toBe('ada@example.com');
    expect(ada.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await users.verifyCredentials('ada@example.com', 'correct horse battery')).toMatchObject({ id: ada.id });
    expect(await users.verifyCredentials('ada@example.com', 'wrong')).toBeUndefined();
    expect(await users.verifyCredentials('nobody@example.com', 'wrong')).toBeUndefined();
    await expect(users.create({ email: 'ADA@example.com', role: 'member' })).rejects.toThrow('a user with email ada@example.com exists already');
    await expect(users.create({ email: 'x@example.com', role: 'member', displayName: 42 })).rejects.toThrow('displayName: not a string');
  });
});

describe('sessions and tokens', () => {
  it('expire sessions and keep only hashes of the secrets', async () => {
    let now = 1_000_000;
    const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-platform-'));
    try {
      const platformDatabase = openPlatformDatabase(directory);
      const sessions = new PlatformSessions(platformDatabase.records, 60_000, () => now);
      const tokens = new ApiTokens(platformDatabase.records, () => now);
      const { secret, session } = await sessions.create('user_1', { userAgent: 'test', address: '127.0.0.1', method: 'password' });
      const { secret: token } = await tokens.create('user_1', 'member', { name: 'ci', scope: { kind: 'read-only' } });
      expect((await sessions.lookup(secret))?.id).toBe(session.id);
      now += 60_000;
      expect(await sessions.lookup(secret)).toBeUndefined();
      expect(await sessions.listForUser('user_1')).toEqual([]);
      await platformDatabase.close();
      const database = readFileSync(path.join(directory, PLATFORM_DATABASE_FILE));
      expect(database.includes(Buffer.from(secret))).toBe(false);
      expect(database.includes(Buffer.from(token))).toBe(false);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('client addresses', () => {
  const trusted = new TrustedProxies(['127.0.0.1', '10.0.0.0/8']);

  it('read X-Forwarded-For only from trusted proxies, from the right', () => {
    expect(clientAddress(request('203.0.113.5', '198.51.100.1'), trusted)).toBe('203.0.113.5');
    expect(clientAddress(request('127.0.0.1', '198.51.100.1, 203.0.113.9'), trusted)).toBe('203.0.113.9');
    expect(clientAddress(request('::ffff:127.0.0.1', '203.0.113.9, 10.1.2.3'), trusted)).toBe('203.0.113.9');
    expect(clientAddress(request('127.0.0.1', 'not-an-address'), trusted)).toBe('127.0.0.1');
    expect(clientAddress(request('127.0.0.1'), trusted)).toBe('127.0.0.1');
    expect(clientAddress(request('127.0.0.1', '1.2.3.4'), new TrustedProxies([]))).toBe('127.0.0.1');
  });
});

describe('server.yaml platform settings', () => {
  it('name the key of a wrong trusted proxy or OpenID Connect issuer', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-platform-config-'));
    try {
      mkdirSync(root, { recursive: true });
      writeFileSync(path.join(root, 'server.yaml'), 'platform:\n  enabled: true\n  trustedProxies: [proxy.local]\n  oidc:\n    - { name: "a b", issuer: nope, clientId: x, clientSecret: env:X }\n');
      const failure = await loadConfiguration(root).then(
        () => undefined,
        (error: unknown) => (error as Error).message,
      );
      expect(failure).toMatch(/server\.yaml:3.*platform\.trustedProxies\[0\].*not an IP address or CIDR range/);
      expect(failure).toMatch(/platform\.oidc\[0\]\.name.*letters, digits, - and _ only/);
      expect(failure).toMatch(/platform\.oidc\[0\]\.issuer/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('a server without platform mode', () => {
  it('answers users/* with platform_off and account/get with the local owner', async () => {
    const environment = await createTestEnvironment('responses: []\n');
    const server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') });
    try {
      const local = await RpcSocket.open(server.url, { authorization: `Bearer ${server.token}` });
      const off = await local.failure('users/list');
      expect(off.data?.reason).toBe('platform_off');
      expect(off.message).toContain('openvaala serve --platform');
      expect(await local.result('account/get')).toEqual({ platform: false, caller: 'local-owner' });
      await expect(RpcSocket.open(server.url, { authorization: 'Bearer ov_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' })).rejects.toThrow(/401/);
      local.close();
    } finally {
      await server.stop();
      await environment.dispose();
    }
  });
});
