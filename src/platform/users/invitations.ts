/**
 * Invitations (SPEC §9): an administrator invites an email address with a role; the invitee
 * opens a one-time link (the code is in the URL fragment, never sent to servers or logs),
 * chooses a password (or signs in with OpenID Connect using that verified address) and becomes
 * a user. Stored as the code's SHA-256 hash (namespace `invitations`); valid 7 days, used once.
 */
import type { PlatformRole } from '../caller.js';
import type { RecordStorage } from '../../storage/record-storage.js';
import { PlatformConflictError } from '../platform-errors.js';
import { hashSecret, newPublicId, newSecret } from '../platform-secrets.js';

const INVITATIONS = 'invitations';
/** How long an invitation link works, ms (7 days). */
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** A stored invitation. */
export interface InvitationRecord {
  id: string;
  email: string;
  role: PlatformRole;
  /** User id of the administrator who invited. */
  invitedBy: string;
  codeHash: string;
  createdAt: number;
  expiresAt: number;
}

/** Pending invitations, on a `RecordStorage`. */
export class Invitations {
  constructor(
    private readonly storage: RecordStorage,
    private readonly now: () => number = Date.now,
  ) {
    storage.defineNamespace({ name: INVITATIONS, filterFields: ['codeHash', 'email'] });
  }

  /** Creates an invitation (replacing a pending one of the same address); returns it and its one-time code. */
  async create(email: string, role: PlatformRole, invitedBy: string): Promise<{ invitation: InvitationRecord; code: string }> {
    for (const old of (await this.storage.list<InvitationRecord>(INVITATIONS, { where: { email }, limit: 100 })).records) await this.storage.delete(INVITATIONS, old.key);
    const code = newSecret();
    const now = this.now();
    const invitation: InvitationRecord = { id: newPublicId('inv'), email, role, invitedBy, codeHash: hashSecret(code), createdAt: now, expiresAt: now + INVITATION_TTL_MS };
    await this.storage.set(INVITATIONS, invitation.id, invitation);
    return { invitation, code };
  }

  /**
   * Uses up an invitation by its code.
   * @throws PlatformConflictError `invitation_invalid` when the code is unknown, used or expired
   */
  async take(code: string): Promise<InvitationRecord> {
    const found = (await this.storage.list<InvitationRecord>(INVITATIONS, { where: { codeHash: hashSecret(code) }, limit: 1 })).records[0]?.value;
    if (found) await this.storage.delete(INVITATIONS, found.id);
    if (!found || found.expiresAt <= this.now()) throw new PlatformConflictError('invitation_invalid', 'the invitation link is unknown, already used or expired; ask an administrator for a new one');
    return found;
  }

  /** Uses up the pending invitation of an email address (a first OpenID Connect sign-in), or undefined. */
  async takeForEmail(email: string): Promise<InvitationRecord | undefined> {
    const found = (await this.storage.list<InvitationRecord>(INVITATIONS, { where: { email }, limit: 1 })).records[0]?.value;
    if (!found) return undefined;
    await this.storage.delete(INVITATIONS, found.id);
    return found.expiresAt > this.now() ? found : undefined;
  }

  /** Pending (unexpired) invitations, newest first. */
  async list(): Promise<InvitationRecord[]> {
    const page = await this.storage.list<InvitationRecord>(INVITATIONS, { limit: 1000 });
    return page.records.map((record) => record.value).filter((invitation) => invitation.expiresAt > this.now()).sort((a, b) => b.createdAt - a.createdAt);
  }
}
