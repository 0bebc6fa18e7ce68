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
import { SerialQueue } from '../serial-queue.js';

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
  /** Acceptances and new invitations one at a time: a code is checked and used up by one request. */
  private readonly queue = new SerialQueue();

  constructor(
    private readonly storage: RecordStorage,
    private readonly now: () => number = Date.now,
  ) {
    storage.defineNamespace({ name: INVITATIONS, filterFields: ['codeHash', 'email'] });
  }

  /** Creates an invitation (replacing a pending one of the same address); returns it and its one-time code. */
  create(email: string, role: PlatformRole, invitedBy: string): Promise<{ invitation: InvitationRecord; code: string }> {
    return this.queue.run(async () => {
      for (const old of (await this.storage.list<InvitationRecord>(INVITATIONS, { where: { email }, limit: 100 })).records) await this.storage.delete(INVITATIONS, old.key);
      const code = newSecret();
      const now = this.now();
      const invitation: InvitationRecord = { id: newPublicId('inv'), email, role, invitedBy, codeHash: hashSecret(code), createdAt: now, expiresAt: now + INVITATION_TTL_MS };
      await this.storage.set(INVITATIONS, invitation.id, invitation);
      return { invitation, code };
    });
  }

  /**
   * Accepts an invitation by its code: `use` makes the user, and only when it succeeds is the
   * invitation used up. A refused form (a short password, a long name) or a failed write
   * leaves the link working, so the invitee corrects the mistake instead of needing a new
   * link. Two acceptances of one code at once run one after the other; the second finds it used.
   * @param use makes the user of the invitation; what it throws is thrown, the invitation kept
   * @throws PlatformConflictError `invitation_invalid` when the code is unknown, used or expired
   */
  accept<T>(code: string, use: (invitation: InvitationRecord) => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      const found = (await this.storage.list<InvitationRecord>(INVITATIONS, { where: { codeHash: hashSecret(code) }, limit: 1 })).records[0]?.value;
      if (found && found.expiresAt <= this.now()) await this.storage.delete(INVITATIONS, found.id);
      if (!found || found.expiresAt <= this.now()) throw new PlatformConflictError('invitation_invalid', 'the invitation link is unknown, already used or expired; ask an administrator for a new one');
      const result = await use(found);
      await this.storage.delete(INVITATIONS, found.id);
      return result;
    });
  }

  /**
   * Accepts the pending invitation of an email address (a first OpenID Connect sign-in) as
   * {@link accept} does: used up only when `use` succeeds.
   * @returns what `use` returned, or undefined when the address has no unexpired invitation
   */
  acceptForEmail<T>(email: string, use: (invitation: InvitationRecord) => Promise<T>): Promise<T | undefined> {
    return this.queue.run(async () => {
      const found = (await this.storage.list<InvitationRecord>(INVITATIONS, { where: { email }, limit: 1 })).records[0]?.value;
      if (!found) return undefined;
      if (found.expiresAt <= this.now()) {
        await this.storage.delete(INVITATIONS, found.id);
        return undefined;
      }
      const result = await use(found);
      await this.storage.delete(INVITATIONS, found.id);
      return result;
    });
  }

  /** Pending (unexpired) invitations, newest first. */
  async list(): Promise<InvitationRecord[]> {
    const page = await this.storage.list<InvitationRecord>(INVITATIONS, { limit: 1000 });
    return page.records.map((record) => record.value).filter((invitation) => invitation.expiresAt > this.now()).sort((a, b) => b.createdAt - a.createdAt);
  }
}
