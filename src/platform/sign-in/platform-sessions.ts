/**
 * Server-side web sessions of platform users (SPEC §9): created at sign-in, carried by an
 * HttpOnly cookie holding a random secret, stored as the secret's SHA-256 hash with the user,
 * creation, expiry and last-use times (namespace `web_sessions`). A user lists and revokes
 * their own sessions by public id (`wsess_…`), which is not the secret.
 */
import type { RecordStorage } from '../../storage/record-storage.js';
import { PlatformNotFoundError } from '../platform-errors.js';
import { hashSecret, newPublicId, newSecret } from '../platform-secrets.js';
import { SerialQueue } from '../serial-queue.js';

const SESSIONS = 'web_sessions';
/** Last-use times are written at most this often per session, ms (a busy tab writes nothing more). */
const TOUCH_INTERVAL_MS = 60_000;

/** A stored platform web session. */
export interface PlatformSessionRecord {
  /** Public id (`wsess_` and 20 hex digits), used to list and revoke. */
  id: string;
  userId: string;
  /** SHA-256 of the cookie's secret. */
  secretHash: string;
  /** ms since the epoch. */
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number;
  /** The browser's `User-Agent`, cut to 200 characters (helps a user tell sessions apart). */
  userAgent: string;
  /** Client address at sign-in. */
  address: string;
  /** How it was made: `password`, `oidc:<name>`, `invitation`, `pairing`, `claim`. */
  method: string;
}

/** Platform web sessions, on a `RecordStorage`. */
export class PlatformSessions {
  /**
   * Last-use writes and deletions run one after another, and a last-use write reads the record
   * again first: a write of a session read before its revocation or sign-out would store it
   * again, and the ended session's cookie would go on working.
   */
  private readonly writes = new SerialQueue();

  /**
   * @param storage the platform database
   * @param ttlMs how long a session lasts from its creation, ms
   * @param now the clock, ms since the epoch
   */
  constructor(
    private readonly storage: RecordStorage,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    storage.defineNamespace({ name: SESSIONS, filterFields: ['userId', 'secretHash'] });
  }

  /** Starts a session; returns its record and the secret for the cookie (shown once, never stored). */
  async create(userId: string, details: { userAgent: string; address: string; method: string }): Promise<{ session: PlatformSessionRecord; secret: string }> {
    const secret = newSecret();
    const now = this.now();
    const session: PlatformSessionRecord = { id: newPublicId('wsess'), userId, secretHash: hashSecret(secret), createdAt: now, expiresAt: now + this.ttlMs, lastUsedAt: now, userAgent: details.userAgent.slice(0, 200), address: details.address, method: details.method };
    await this.storage.set(SESSIONS, session.id, session);
    return { session, secret };
  }

  /**
   * The live session a cookie secret belongs to, or undefined (an expired one is deleted).
   * Updates its last-use time; a session ended while it is being looked up gives undefined when
   * its use is being recorded, and is never stored again.
   */
  async lookup(secret: string): Promise<PlatformSessionRecord | undefined> {
    if (secret === '') return undefined;
    const found = (await this.storage.list<PlatformSessionRecord>(SESSIONS, { where: { secretHash: hashSecret(secret) }, limit: 1 })).records[0]?.value;
    if (!found) return undefined;
    const now = this.now();
    if (found.expiresAt <= now) {
      await this.storage.delete(SESSIONS, found.id);
      return undefined;
    }
    if (now - found.lastUsedAt >= TOUCH_INTERVAL_MS) {
      return this.writes.run(async () => {
        const current = (await this.storage.get<PlatformSessionRecord>(SESSIONS, found.id))?.value;
        if (!current) return undefined;
        const touched = { ...current, lastUsedAt: now };
        await this.storage.set(SESSIONS, current.id, touched);
        return touched;
      });
    }
    return found;
  }

  /** Whether the session with public id `sessionId` exists and has not expired. */
  async isLive(sessionId: string): Promise<boolean> {
    const session = (await this.storage.get<PlatformSessionRecord>(SESSIONS, sessionId))?.value;
    return session !== undefined && session.expiresAt > this.now();
  }

  /** The live sessions of a user, newest first (expired ones are deleted on the way). */
  async listForUser(userId: string): Promise<PlatformSessionRecord[]> {
    const page = await this.storage.list<PlatformSessionRecord>(SESSIONS, { where: { userId }, limit: 1000 });
    const now = this.now();
    const live: PlatformSessionRecord[] = [];
    for (const { value } of page.records) {
      if (value.expiresAt <= now) await this.storage.delete(SESSIONS, value.id);
      else live.push(value);
    }
    return live.sort((a, b) => b.createdAt - a.createdAt);
  }

  /**
   * Revokes one session of a user.
   * @throws PlatformNotFoundError naming `sessionId` when the user has no such session
   */
  async revoke(userId: string, sessionId: string): Promise<PlatformSessionRecord> {
    const session = (await this.storage.get<PlatformSessionRecord>(SESSIONS, sessionId))?.value;
    if (!session || session.userId !== userId) throw new PlatformNotFoundError(`sessionId: no session ${JSON.stringify(sessionId.slice(0, 100))} of this user`);
    await this.writes.run(() => this.storage.delete(SESSIONS, session.id));
    return session;
  }

  /** Ends the session a cookie secret belongs to (sign-out); returns it, or undefined when there was none. */
  async endBySecret(secret: string): Promise<PlatformSessionRecord | undefined> {
    return this.writes.run(async () => {
      const found = (await this.storage.list<PlatformSessionRecord>(SESSIONS, { where: { secretHash: hashSecret(secret) }, limit: 1 })).records[0]?.value;
      if (found) await this.storage.delete(SESSIONS, found.id);
      return found;
    });
  }

  /** Removes every session of a user (user removed); returns their ids. */
  async removeForUser(userId: string): Promise<string[]> {
    return this.writes.run(async () => {
      const sessions = await this.storage.list<PlatformSessionRecord>(SESSIONS, { where: { userId }, limit: 10_000 });
      for (const { key } of sessions.records) await this.storage.delete(SESSIONS, key);
      return sessions.records.map((record) => record.key);
    });
  }
}
