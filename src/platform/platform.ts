/**
 * The identity half of the platform (SPEC §9) put together: users, invitations, web sessions,
 * API tokens, pairing codes and the sign-in rate limit on the platform database, and the rule
 * for turning a cookie or token into a {@link Caller}. The server creates one when platform
 * mode is on (`serve --platform` or `platform.enabled` in `server.yaml`).
 */
import type { PlatformSettings } from '../config/platform-settings.js';
import type { RecordStorage } from '../storage/record-storage.js';
import type { Caller } from './caller.js';
import { ApiTokens } from './sign-in/api-tokens.js';
import { TrustedProxies } from './sign-in/client-address.js';
import { PairingCodes } from './sign-in/pairing.js';
import { PlatformSessions } from './sign-in/platform-sessions.js';
import { SignInRateLimit } from './sign-in/rate-limit.js';
import { Invitations } from './users/invitations.js';
import { UserStore } from './users/user-store.js';

/**
 * Which callers lost their access: connections acting as any of them must end at once
 * (a revoked session, a revoked token, a removed or re-roled user).
 */
export interface AccessEnded {
  webSessionIds?: string[];
  tokenIds?: string[];
  userIds?: string[];
  /** Said to the closed connections (WebSocket close reason). */
  reason: string;
}

/** Whether a connection's caller is among those whose access ended. */
export function accessEndedFor(caller: Caller, ended: AccessEnded): boolean {
  if (caller.kind === 'local-owner') return false;
  if (ended.userIds?.includes(caller.userId)) return true;
  if (caller.kind === 'user') return ended.webSessionIds?.includes(caller.webSessionId) === true;
  return ended.tokenIds?.includes(caller.tokenId) === true;
}

/** The platform's identity services. */
export class Platform {
  readonly users: UserStore;
  readonly invitations: Invitations;
  readonly sessions: PlatformSessions;
  readonly tokens: ApiTokens;
  readonly pairing = new PairingCodes();
  readonly rateLimit: SignInRateLimit;
  readonly trustedProxies: TrustedProxies;
  /** Base address of links given out (invitations, pairing): `publicUrl`, else the server's own address once listening. */
  linkBase = '';
  private readonly accessListeners = new Set<(ended: AccessEnded) => void>();
  private readonly userRemovedListeners = new Set<(userId: string) => Promise<void> | void>();

  /**
   * @param storage the platform database (`openPlatformStorage`)
   * @param settings the `platform:` section of `server.yaml`
   */
  constructor(
    readonly storage: RecordStorage,
    readonly settings: PlatformSettings,
  ) {
    this.users = new UserStore(storage);
    this.invitations = new Invitations(storage);
    this.sessions = new PlatformSessions(storage, settings.sessionTtlHours * 3600 * 1000);
    this.tokens = new ApiTokens(storage);
    this.rateLimit = new SignInRateLimit(settings.signInAttempts.max, settings.signInAttempts.windowSeconds * 1000);
    this.trustedProxies = new TrustedProxies(settings.trustedProxies);
    if (settings.publicUrl) this.linkBase = settings.publicUrl.replace(/\/+$/, '');
  }

  /** The caller a platform session cookie's secret stands for, or undefined (unknown, expired, user gone). */
  async callerOfSession(secret: string): Promise<Caller | undefined> {
    const session = await this.sessions.lookup(secret);
    if (!session) return undefined;
    const user = await this.users.get(session.userId);
    return user ? { kind: 'user', userId: user.id, role: user.role, webSessionId: session.id } : undefined;
  }

  /** The caller an API token stands for, or undefined (unknown, revoked, user gone). */
  async callerOfToken(secret: string): Promise<Caller | undefined> {
    const token = await this.tokens.lookup(secret);
    if (!token) return undefined;
    const user = await this.users.get(token.userId);
    return user ? { kind: 'api-token', userId: user.id, role: user.role, tokenId: token.id, scope: token.scope } : undefined;
  }

  /**
   * Whether a connection's caller may still act: its session is live (not expired, not
   * removed) or its token exists, and its user still has the role it connected with.
   */
  async stillValid(caller: Caller): Promise<boolean> {
    if (caller.kind === 'local-owner') return true;
    const user = await this.users.get(caller.userId);
    if (!user || user.role !== caller.role) return false;
    return caller.kind === 'user' ? this.sessions.isLive(caller.webSessionId) : this.tokens.exists(caller.tokenId);
  }

  /** Registers a listener told when callers lose access (the server closes their connections); returns its remover. */
  onAccessEnded(listener: (ended: AccessEnded) => void): () => void {
    this.accessListeners.add(listener);
    return () => this.accessListeners.delete(listener);
  }

  /**
   * Registers a task run when a user is removed, before their sessions end (e.g. removing the
   * user's project memberships and settings); returns its remover.
   */
  onUserRemoved(task: (userId: string) => Promise<void> | void): () => void {
    this.userRemovedListeners.add(task);
    return () => this.userRemovedListeners.delete(task);
  }

  /** Tells listeners that some callers lost access. */
  endAccess(ended: AccessEnded): void {
    for (const listener of this.accessListeners) listener(ended);
  }

  /**
   * Removes a user and everything that is theirs: what `onUserRemoved` tasks remove, their
   * sessions and tokens; their connections end.
   * @throws PlatformConflictError `last_administrator`, PlatformNotFoundError (from `UserStore.remove`)
   */
  async removeUser(userId: string): Promise<void> {
    await this.users.remove(userId);
    for (const task of this.userRemovedListeners) await task(userId);
    const webSessionIds = await this.sessions.removeForUser(userId);
    const tokenIds = await this.tokens.removeForUser(userId);
    this.endAccess({ userIds: [userId], webSessionIds, tokenIds, reason: 'the user was removed' });
  }
}
