/**
 * The platform layer (SPEC §9) put together, opened once per server on the one platform
 * database (`<data-dir>/platform.db`, one SQLite connection shared by every store):
 *
 * - identity: users, invitations, web sessions, API tokens, pairing codes, the sign-in rate
 *   limit, and the rule for turning a cookie or token into a {@link Caller}. Sign-in is only
 *   offered when platform mode is on (`serve --platform` or `platform.enabled` in `server.yaml`);
 * - projects: projects with their members and conversation bindings, the access rules over them,
 *   the encrypted secrets with the redactor that hides their values, and per-user state. These
 *   are always open: without platform mode every connection is the local owner, who reaches all.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PlatformSettings } from '../config/platform-settings.js';
import { makeDirectorySync } from '../make-directory.js';
import type { RecordStorage } from '../storage/record-storage.js';
import { AccessControl } from './access/access-control.js';
import { CostAccounting } from './costs/cost-accounting.js';
import type { Caller } from './caller.js';
import { openPlatformDatabase, type PlatformDatabase } from './platform-database.js';
import { ProjectStore } from './projects/project-store.js';
import { SecretCipher } from './secrets/secret-cipher.js';
import { SecretRedactor } from './secrets/secret-redactor.js';
import { SecretStore } from './secrets/secret-store.js';
import { UserStateStore } from './settings/user-state.js';
import { PushSubscriptionStore } from './notifications/push-subscriptions.js';
import { ApiTokens } from './sign-in/api-tokens.js';
import { TrustedProxies } from './sign-in/client-address.js';
import { PairingCodes } from './sign-in/pairing.js';
import { PlatformSessions } from './sign-in/platform-sessions.js';
import { SignInRateLimit } from './sign-in/rate-limit.js';
import { Invitations } from './users/invitations.js';
import { UserStore } from './users/user-store.js';

/** Folder of per-project state inside the data directory. */
export const PROJECTS_DIRECTORY = 'projects';

/** The namespaces the projects part keeps in the platform database. */
export const PLATFORM_NAMESPACES = ['projects', 'project_members', 'project_conversations', 'project_secrets', 'user_settings', 'read_markers'] as const;

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

/** The parts of the platform made by {@link Platform.open}. */
interface ProjectParts {
  projects: ProjectStore;
  secrets: SecretStore;
  redactor: SecretRedactor;
  userState: UserStateStore;
  pushSubscriptions: PushSubscriptionStore;
  costs: CostAccounting;
}

/** The platform's stores and rules: identity and projects over one database connection. */
export class Platform {
  // Identity (sign-in).
  readonly users: UserStore;
  readonly invitations: Invitations;
  readonly sessions: PlatformSessions;
  readonly tokens: ApiTokens;
  readonly pairing = new PairingCodes();
  readonly rateLimit: SignInRateLimit;
  readonly trustedProxies: TrustedProxies;
  /** Base address of links given out (invitations, pairing): `publicUrl`, else the server's own address once listening. */
  linkBase = '';
  // Projects.
  readonly projects: ProjectStore;
  readonly access: AccessControl;
  readonly secrets: SecretStore;
  readonly redactor: SecretRedactor;
  readonly userState: UserStateStore;
  /** Browsers' Web Push subscriptions and the server's VAPID keys (docs/notifications.md). */
  readonly pushSubscriptions: PushSubscriptionStore;
  /** Token usage and cost of finished turns, and the projects' monthly thresholds. */
  readonly costs: CostAccounting;
  private readonly accessListeners = new Set<(ended: AccessEnded) => void>();
  private readonly userRemovedListeners = new Set<(userId: string) => Promise<void> | void>();

  private constructor(
    readonly dataDir: string,
    /** The platform database: every store declares its namespaces on its `records`. */
    readonly database: PlatformDatabase,
    /** The `platform:` section of `server.yaml`. */
    readonly settings: PlatformSettings,
    /** Whether platform mode is on: users may sign in and API tokens are accepted. */
    readonly signInEnabled: boolean,
    parts: ProjectParts,
  ) {
    const storage = database.records;
    this.users = new UserStore(storage);
    this.invitations = new Invitations(storage);
    this.sessions = new PlatformSessions(storage, settings.sessionTtlHours * 3600 * 1000);
    this.tokens = new ApiTokens(storage);
    this.rateLimit = new SignInRateLimit(settings.signInAttempts.max, settings.signInAttempts.windowSeconds * 1000);
    this.trustedProxies = new TrustedProxies(settings.trustedProxies);
    if (settings.publicUrl) this.linkBase = settings.publicUrl.replace(/\/+$/, '');
    this.projects = parts.projects;
    this.access = new AccessControl(parts.projects);
    this.secrets = parts.secrets;
    this.redactor = parts.redactor;
    this.userState = parts.userState;
    this.pushSubscriptions = parts.pushSubscriptions;
    this.costs = parts.costs;
    // A removed user's memberships, settings and read markers go with them.
    this.onUserRemoved(async (userId) => {
      await this.removeUserProjectData(userId);
    });
  }

  /**
   * Opens `<dataDir>/platform.db` and `<dataDir>/secrets.key` (creating them when missing).
   * @param settings the `platform:` section of `server.yaml`
   * @param signInEnabled whether platform mode is on (sign-in, API tokens)
   * @throws DamagedDatabaseError when `platform.db` is not a database SQLite can read (see `openPlatformDatabase`)
   * @throws Error naming the file when the database or the key cannot be used otherwise
   */
  static async open(dataDir: string, settings: PlatformSettings, signInEnabled: boolean): Promise<Platform> {
    const database = openPlatformDatabase(dataDir);
    try {
      const projects = await ProjectStore.open(database.records);
      const redactor = new SecretRedactor();
      const secrets = await SecretStore.open(database.records, SecretCipher.open(dataDir), redactor);
      const costs = await CostAccounting.open(database.records);
      return new Platform(dataDir, database, settings, signInEnabled, { projects, secrets, redactor, userState: UserStateStore.open(database.records), pushSubscriptions: PushSubscriptionStore.open(database.records), costs });
    } catch (error) {
      await database.close();
      throw error;
    }
  }

  /** The records of the platform database (every store's namespaces). */
  get storage(): RecordStorage {
    return this.database.records;
  }

  /** The caller a platform session cookie's secret stands for, or undefined (unknown, expired, user gone, platform mode off). */
  async callerOfSession(secret: string): Promise<Caller | undefined> {
    if (!this.signInEnabled) return undefined;
    const session = await this.sessions.lookup(secret);
    if (!session) return undefined;
    const user = await this.users.get(session.userId);
    return user ? { kind: 'user', userId: user.id, role: user.role, webSessionId: session.id } : undefined;
  }

  /** The caller an API token stands for, or undefined (unknown, revoked, user gone, platform mode off). */
  async callerOfToken(secret: string): Promise<Caller | undefined> {
    if (!this.signInEnabled) return undefined;
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
   * Registers a task run when a user is removed, before their sessions end (the projects part
   * registers the removal of the user's memberships and settings); returns its remover.
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
   * Removes a user and everything that is theirs: what `onUserRemoved` tasks remove (their
   * project memberships, settings and read markers), their sessions and tokens; their
   * connections end.
   * @throws PlatformConflictError `last_administrator`, PlatformNotFoundError (from `UserStore.remove`)
   */
  async removeUser(userId: string): Promise<void> {
    await this.users.remove(userId);
    for (const task of this.userRemovedListeners) await task(userId);
    const webSessionIds = await this.sessions.removeForUser(userId);
    const tokenIds = await this.tokens.removeForUser(userId);
    this.endAccess({ userIds: [userId], webSessionIds, tokenIds, reason: 'the user was removed' });
  }

  /**
   * What removing a user takes from the projects part: their memberships of every project
   * (their connections lose access to those projects at once), their settings and read
   * markers, and their push subscriptions. Run by {@link removeUser}; sessions and tokens are the identity part's.
   * @returns the ids of the projects they were a member of
   */
  async removeUserProjectData(userId: string): Promise<string[]> {
    const projects = await this.projects.removeMemberships(userId);
    await this.userState.forgetUser(userId);
    await this.pushSubscriptions.forgetOwner(userId);
    return projects;
  }

  /**
   * The persistent home of external agents' state for a project (`<dataDir>/projects/<id>/agent-home`,
   * mode 0700), created on first use: e.g. `CODEX_HOME` of its Codex sessions.
   */
  agentHome(projectId: string): string {
    const home = path.join(this.dataDir, PROJECTS_DIRECTORY, projectId, 'agent-home');
    makeDirectorySync(home, 0o700);
    return home;
  }

  /** Removes a project's folder in the data directory (its deletion). */
  removeProjectFiles(projectId: string): void {
    fs.rmSync(path.join(this.dataDir, PROJECTS_DIRECTORY, projectId), { recursive: true, force: true });
  }

  /**
   * The keys of every namespace of the projects part ({@link PLATFORM_NAMESPACES}), for checks
   * that a deletion left nothing behind and for diagnostics.
   */
  async inventory(): Promise<Record<string, string[]>> {
    const result: Record<string, string[]> = {};
    for (const namespace of PLATFORM_NAMESPACES) {
      const keys: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await this.database.records.list(namespace, { limit: 500, ...(cursor ? { cursor } : {}) });
        keys.push(...page.records.map((record) => record.key));
        cursor = page.nextCursor;
      } while (cursor);
      result[namespace] = keys;
    }
    return result;
  }

  /** Closes the database. */
  close(): Promise<void> {
    return this.database.close();
  }
}
