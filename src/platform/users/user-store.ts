/**
 * Platform users (SPEC §9): email, display name, role (admin / member), an optional argon2id
 * password hash and linked OpenID Connect identities. Kept in the platform database
 * (namespace `users`). Every change that could leave the platform without an administrator
 * (demoting or removing one) runs in one serial queue and is refused when it would.
 */
import type { PlatformRole } from '../caller.js';
import type { RecordStorage } from '../../storage/record-storage.js';
import { PlatformConflictError, PlatformInputError, PlatformNotFoundError } from '../platform-errors.js';
import { newPublicId } from '../platform-secrets.js';
import { SerialQueue } from '../serial-queue.js';
import { checkNewPassword, hashPassword, verifyNothing, verifyPassword } from './passwords.js';

/** Namespace of user records. */
const USERS = 'users';

/** A stored user. */
export interface UserRecord {
  /** `user_` and 20 hex digits. */
  id: string;
  /** Lowercased, trimmed email address (unique). */
  email: string;
  displayName: string;
  role: PlatformRole;
  /** argon2id PHC string; absent for users who sign in only with OpenID Connect. */
  passwordHash?: string;
  /** `<issuer>#<subject>` of each OpenID Connect identity linked to this user. */
  identities: string[];
  /** ms since the epoch. */
  createdAt: number;
}

/** A user as clients see it (no password hash). */
export interface UserSummary {
  id: string;
  email: string;
  displayName: string;
  role: PlatformRole;
  /** Whether the user can sign in with a password. */
  hasPassword: boolean;
  createdAt: number;
}

/** What is said about a user to clients. */
export function summarizeUser(user: UserRecord): UserSummary {
  return { id: user.id, email: user.email, displayName: user.displayName, role: user.role, hasPassword: user.passwordHash !== undefined, createdAt: user.createdAt };
}

/** Email addresses as HTML's `type=email` accepts them (WHATWG HTML §4.10.5.1.5), at most 254 characters (RFC 5321 §4.5.3.1). */
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/**
 * Normalizes and checks an email address.
 * @throws PlatformInputError naming `field` when it is not an email address
 */
export function checkEmail(email: unknown, field = 'email'): string {
  if (typeof email !== 'string' || email.trim() === '') throw new PlatformInputError(field, 'missing or not a string');
  const normalized = email.trim().toLowerCase();
  if (normalized.length > 254 || !EMAIL.test(normalized)) throw new PlatformInputError(field, `${JSON.stringify(email.slice(0, 100))} is not an email address`);
  return normalized;
}

/** Checks a role. @throws PlatformInputError naming `field` */
export function checkRole(role: unknown, field = 'role'): PlatformRole {
  if (role !== 'admin' && role !== 'member') throw new PlatformInputError(field, `must be "admin" or "member", got ${JSON.stringify(role)}`);
  return role;
}

/** Users of the platform, on a `RecordStorage`. */
export class UserStore {
  private readonly queue = new SerialQueue();

  constructor(private readonly storage: RecordStorage) {
    storage.defineNamespace({ name: USERS, filterFields: ['email', 'role'] });
  }

  /** Every user, oldest first. */
  async list(): Promise<UserRecord[]> {
    const users: UserRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.storage.list<UserRecord>(USERS, { limit: 500, ...(cursor ? { cursor } : {}) });
      users.push(...page.records.map((record) => record.value));
      cursor = page.nextCursor;
    } while (cursor);
    return users.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  /** Whether any user exists (the platform has been claimed). */
  async hasUsers(): Promise<boolean> {
    return (await this.storage.list(USERS, { limit: 1 })).records.length > 0;
  }

  /** The user with `id`, or undefined. */
  async get(id: string): Promise<UserRecord | undefined> {
    return (await this.storage.get<UserRecord>(USERS, id))?.value;
  }

  /** The user with `email` (any case), or undefined. */
  async findByEmail(email: string): Promise<UserRecord | undefined> {
    const page = await this.storage.list<UserRecord>(USERS, { where: { email: email.trim().toLowerCase() }, limit: 1 });
    return page.records[0]?.value;
  }

  /** The user an OpenID Connect identity (`<issuer>#<subject>`) is linked to, or undefined. */
  async findByIdentity(identity: string): Promise<UserRecord | undefined> {
    return (await this.list()).find((user) => user.identities.includes(identity));
  }

  /**
   * Claims the platform: creates the first administrator. Only while there is no user at all.
   * @throws PlatformConflictError `already_claimed` when a user exists
   * @throws PlatformInputError naming `email`, `password` or `displayName`
   */
  async claim(input: { email: unknown; password: unknown; displayName?: unknown }): Promise<UserRecord> {
    const email = checkEmail(input.email);
    const password = checkNewPassword(input.password);
    const displayName = checkDisplayName(input.displayName, email);
    return this.queue.run(async () => {
      if (await this.hasUsers()) throw new PlatformConflictError('already_claimed', 'the platform already has an administrator; ask one for an invitation');
      return this.insert({ email, displayName, role: 'admin', passwordHash: await hashPassword(password), identities: [] });
    });
  }

  /**
   * Creates a user (an accepted invitation, a first OpenID Connect sign-in).
   * @throws PlatformConflictError `email_taken` when the email address has a user already
   */
  async create(input: { email: string; displayName?: unknown; role: PlatformRole; password?: string; identity?: string }): Promise<UserRecord> {
    const email = checkEmail(input.email);
    const displayName = checkDisplayName(input.displayName, email);
    const password = input.password === undefined ? undefined : checkNewPassword(input.password);
    return this.queue.run(async () => {
      if (await this.findByEmail(email)) throw new PlatformConflictError('email_taken', `a user with email ${email} exists already`);
      return this.insert({ email, displayName, role: input.role, ...(password !== undefined ? { passwordHash: await hashPassword(password) } : {}), identities: input.identity ? [input.identity] : [] });
    });
  }

  /** Links an OpenID Connect identity to a user (idempotent). */
  linkIdentity(userId: string, identity: string): Promise<UserRecord> {
    return this.queue.run(async () => {
      const user = await this.required(userId, 'userId');
      if (user.identities.includes(identity)) return user;
      const updated = { ...user, identities: [...user.identities, identity] };
      await this.storage.set(USERS, user.id, updated);
      return updated;
    });
  }

  /**
   * The user whose email and password match, or undefined. Takes the time of one argon2
   * verification whether or not the address exists.
   */
  async verifyCredentials(email: string, password: string): Promise<UserRecord | undefined> {
    const user = await this.findByEmail(email);
    if (!user?.passwordHash) return verifyNothing(password).then(() => undefined);
    return (await verifyPassword(user.passwordHash, password)) ? user : undefined;
  }

  /**
   * Changes a user's role.
   * @throws PlatformNotFoundError for an unknown user
   * @throws PlatformConflictError `last_administrator` when it would demote the only administrator
   */
  setRole(userId: string, role: PlatformRole): Promise<UserRecord> {
    return this.queue.run(async () => {
      const user = await this.required(userId, 'userId');
      if (user.role === role) return user;
      if (user.role === 'admin') await this.refuseIfLastAdministrator(user, 'demoted');
      const updated = { ...user, role };
      await this.storage.set(USERS, user.id, updated);
      return updated;
    });
  }

  /**
   * Removes a user (the caller removes what belongs to them: sessions, tokens, memberships).
   * @throws PlatformNotFoundError for an unknown user
   * @throws PlatformConflictError `last_administrator` when it is the only administrator
   */
  remove(userId: string): Promise<UserRecord> {
    return this.queue.run(async () => {
      const user = await this.required(userId, 'userId');
      if (user.role === 'admin') await this.refuseIfLastAdministrator(user, 'removed');
      await this.storage.delete(USERS, user.id);
      return user;
    });
  }

  private async refuseIfLastAdministrator(user: UserRecord, change: string): Promise<void> {
    const administrators = await this.storage.list<UserRecord>(USERS, { where: { role: 'admin' }, limit: 2 });
    if (administrators.records.length <= 1) {
      throw new PlatformConflictError('last_administrator', `${user.email} is the last administrator and cannot be ${change}; make another user an administrator first`);
    }
  }

  private async required(userId: string, field: string): Promise<UserRecord> {
    const user = await this.get(userId);
    if (!user) throw new PlatformNotFoundError(`${field}: no user ${JSON.stringify(userId.slice(0, 100))}`);
    return user;
  }

  private async insert(fields: Omit<UserRecord, 'id' | 'createdAt'>): Promise<UserRecord> {
    const user: UserRecord = { id: newPublicId('user'), createdAt: Date.now(), ...fields };
    await this.storage.set(USERS, user.id, user);
    return user;
  }
}

/** A display name: the given one trimmed (1–100 characters) or the email's local part. @throws PlatformInputError naming `displayName` */
function checkDisplayName(value: unknown, email: string): string {
  if (value === undefined || value === null || value === '') return email.split('@')[0] as string;
  if (typeof value !== 'string') throw new PlatformInputError('displayName', 'not a string');
  const trimmed = value.trim();
  if (trimmed === '' || [...trimmed].length > 100) throw new PlatformInputError('displayName', 'must be 1 to 100 characters');
  return trimmed;
}
