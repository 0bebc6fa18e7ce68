/**
 * A sign-in lookup racing a revocation must never bring the revoked session or token back.
 * A lookup reads the record, then writes it again with its new last-use time (the touch); a
 * revocation, sign-out or user removal that deleted the record in between was undone by that
 * write, and the secret went on working. Each case is made deterministic by holding the
 * lookup's read of the record until the revocation has finished.
 */
import { afterEach, expect, it } from 'vitest';
import { ApiTokens } from '../../src/platform/sign-in/api-tokens.js';
import { PlatformSessions } from '../../src/platform/sign-in/platform-sessions.js';
import type { RecordStorage } from '../../src/storage/record-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { heldMethod, type Hold } from '../helpers/held-method.js';

const opened: RecordStorage[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((storage) => storage.close()));
});

/** A real SQLite record storage whose next `list` of `namespace` answers only once released. */
function heldStorage(namespace: string): { storage: RecordStorage; hold: () => Hold } {
  const real = new SqliteRecordStorage(':memory:');
  opened.push(real);
  const { proxy, hold } = heldMethod(real, 'list', (name) => name === namespace);
  return { storage: proxy, hold };
}

it('a token revoked while a lookup of it is touching it stays revoked', async () => {
  const { storage, hold } = heldStorage('api_tokens');
  const tokens = new ApiTokens(storage);
  const { token, secret } = await tokens.create('user_1', 'member', { name: 'ci', scope: { kind: 'read-only' } });
  const held = hold();
  const lookup = tokens.lookup(secret);
  await held.reached;
  await tokens.revoke('user_1', token.id);
  held.release();
  await lookup;
  expect(await tokens.exists(token.id)).toBe(false);
  expect(await tokens.lookup(secret)).toBeUndefined();
  expect(await tokens.listForUser('user_1')).toEqual([]);
});

it('the tokens of a removed user stay removed when a lookup was touching one', async () => {
  const { storage, hold } = heldStorage('api_tokens');
  const tokens = new ApiTokens(storage);
  const { token, secret } = await tokens.create('user_1', 'member', { name: 'ci', scope: { kind: 'read-only' } });
  const held = hold();
  const lookup = tokens.lookup(secret);
  await held.reached;
  expect(await tokens.removeForUser('user_1')).toEqual([token.id]);
  held.release();
  await lookup;
  expect(await tokens.exists(token.id)).toBe(false);
  expect(await tokens.lookup(secret)).toBeUndefined();
});

it('a touch of a token that is not revoked still records its use', async () => {
  let now = 1_000_000;
  const { storage } = heldStorage('api_tokens');
  const tokens = new ApiTokens(storage, () => now);
  const { token, secret } = await tokens.create('user_1', 'member', { name: 'ci', scope: { kind: 'read-only' } });
  expect(await tokens.lookup(secret)).toMatchObject({ id: token.id, lastUsedAt: 1_000_000 });
  now += 120_000;
  expect(await tokens.lookup(secret)).toMatchObject({ id: token.id, lastUsedAt: 1_120_000 });
  expect((await tokens.listForUser('user_1'))[0]?.lastUsedAt).toBe(1_120_000);
});

/** A platform session whose last use is older than the touch interval, so the next lookup writes it. */
async function staleSession(sessions: PlatformSessions, clock: { now: number }): Promise<{ id: string; secret: string }> {
  const { session, secret } = await sessions.create('user_1', { userAgent: 'test', address: '127.0.0.1', method: 'password' });
  clock.now += 120_000;
  return { id: session.id, secret };
}

it.each([
  ['revoked', async (sessions: PlatformSessions, id: string) => void (await sessions.revoke('user_1', id))],
  ['signed out', async (sessions: PlatformSessions, id: string, secret: string) => expect(await sessions.endBySecret(secret)).toMatchObject({ id })],
  ['removed with its user', async (sessions: PlatformSessions, id: string) => expect(await sessions.removeForUser('user_1')).toEqual([id])],
])('a web session %s while a lookup of it is touching it stays ended', async (_how, end) => {
  const clock = { now: 1_000_000 };
  const { storage, hold } = heldStorage('web_sessions');
  const sessions = new PlatformSessions(storage, 24 * 3_600_000, () => clock.now);
  const { id, secret } = await staleSession(sessions, clock);
  const held = hold();
  const lookup = sessions.lookup(secret);
  await held.reached;
  await end(sessions, id, secret);
  held.release();
  await lookup;
  expect(await sessions.isLive(id)).toBe(false);
  expect(await sessions.lookup(secret)).toBeUndefined();
});
