/**
 * Scoped API tokens for scripts and CI (SPEC §9): `ov_` and 43 random characters, shown once
 * at creation and stored only as their SHA-256 hash, with a scope (read-only, one project,
 * admin), creation and last-use times (namespace `api_tokens`). A token acts for the user who
 * made it and never beyond that user's own rights.
 */
import type { PlatformRole, TokenScope } from '../caller.js';
import type { RecordStorage } from '../../storage/record-storage.js';
import { PlatformInputError, PlatformNotFoundError } from '../platform-errors.js';
import { hashSecret, newPublicId, newSecret } from '../platform-secrets.js';
import { SerialQueue } from '../serial-queue.js';

const TOKENS = 'api_tokens';
/** Prefix of every API token (tells it apart from the server token, and lets secret scanners find leaked ones). */
export const API_TOKEN_PREFIX = 'ov_';
/** Last-use times are written at most this often per token, ms. */
const TOUCH_INTERVAL_MS = 60_000;

/** A stored API token. */
export interface ApiTokenRecord {
  /** Public id (`tok_` and 20 hex digits). */
  id: string;
  userId: string;
  /** What the user called it (1–100 characters). */
  name: string;
  scope: TokenScope;
  secretHash: string;
  /** ms since the epoch. */
  createdAt: number;
  /** ms since the epoch; absent until first used. */
  lastUsedAt?: number;
}

/** An API token as its owner sees it (no hash). */
export type ApiTokenSummary = Omit<ApiTokenRecord, 'secretHash'>;

/** What an owner is shown. */
export function summarizeToken(token: ApiTokenRecord): ApiTokenSummary {
  const { secretHash: _secretHash, ...summary } = token;
  return summary;
}

/** Scoped API tokens, on a `RecordStorage`. */
export class ApiTokens {
  /**
   * Last-use writes and deletions run one after another, and a last-use write reads the record
   * again first: a write of a token read before its revocation would store it again, and the
   * revoked secret would go on working.
   */
  private readonly writes = new SerialQueue();

  constructor(
    private readonly storage: RecordStorage,
    private readonly now: () => number = Date.now,
  ) {
    storage.defineNamespace({ name: TOKENS, filterFields: ['userId', 'secretHash'] });
  }

  /**
   * Creates a token for `userId`; returns its record and the token itself (shown once).
   * @throws PlatformInputError naming `name` or `scope` (an admin scope needs an administrator)
   */
  async create(userId: string, role: PlatformRole, input: { name: string; scope: TokenScope }): Promise<{ token: ApiTokenRecord; secret: string }> {
    const name = input.name.trim();
    if (name === '' || [...name].length > 100) throw new PlatformInputError('name', 'must be 1 to 100 characters');
    if (input.scope.kind === 'admin' && role !== 'admin') throw new PlatformInputError('scope', 'only administrators can create admin tokens');
    const secret = newSecret(API_TOKEN_PREFIX);
    const token: ApiTokenRecord = { id: newPublicId('tok'), userId, name, scope: input.scope, secretHash: hashSecret(secret), createdAt: this.now() };
    await this.storage.set(TOKENS, token.id, token);
    return { token, secret };
  }

  /**
   * The token a presented secret is, or undefined; records its use. A token revoked while it
   * is being looked up gives undefined when its use is being recorded, and is never stored again.
   */
  async lookup(secret: string): Promise<ApiTokenRecord | undefined> {
    if (!secret.startsWith(API_TOKEN_PREFIX)) return undefined;
    const found = (await this.storage.list<ApiTokenRecord>(TOKENS, { where: { secretHash: hashSecret(secret) }, limit: 1 })).records[0]?.value;
    if (!found) return undefined;
    const now = this.now();
    if (found.lastUsedAt === undefined || now - found.lastUsedAt >= TOUCH_INTERVAL_MS) {
      return this.writes.run(async () => {
        const current = (await this.storage.get<ApiTokenRecord>(TOKENS, found.id))?.value;
        if (!current) return undefined;
        const touched = { ...current, lastUsedAt: now };
        await this.storage.set(TOKENS, current.id, touched);
        return touched;
      });
    }
    return found;
  }

  /** Whether the token with public id `tokenId` still exists. */
  async exists(tokenId: string): Promise<boolean> {
    return (await this.storage.get(TOKENS, tokenId)) !== undefined;
  }

  /** The tokens of a user, newest first. */
  async listForUser(userId: string): Promise<ApiTokenRecord[]> {
    const page = await this.storage.list<ApiTokenRecord>(TOKENS, { where: { userId }, limit: 1000 });
    return page.records.map((record) => record.value).sort((a, b) => b.createdAt - a.createdAt);
  }

  /**
   * Revokes a token of a user.
   * @throws PlatformNotFoundError naming `tokenId` when the user has no such token
   */
  async revoke(userId: string, tokenId: string): Promise<ApiTokenRecord> {
    const token = (await this.storage.get<ApiTokenRecord>(TOKENS, tokenId))?.value;
    if (!token || token.userId !== userId) throw new PlatformNotFoundError(`tokenId: no token ${JSON.stringify(tokenId.slice(0, 100))} of this user`);
    await this.writes.run(() => this.storage.delete(TOKENS, token.id));
    return token;
  }

  /** Removes every token of a user (user removed); returns their ids. */
  async removeForUser(userId: string): Promise<string[]> {
    return this.writes.run(async () => {
      const tokens = await this.storage.list<ApiTokenRecord>(TOKENS, { where: { userId }, limit: 10_000 });
      for (const { key } of tokens.records) await this.storage.delete(TOKENS, key);
      return tokens.records.map((record) => record.key);
    });
  }
}
