/**
 * Per-user state of the platform (SPEC §9, "Per-user settings and read markers"), in the
 * platform database: settings (namespace `user_settings`, one record per user) and read
 * markers (namespace `read_markers`, one record per user and conversation, holding when the
 * user last read it). The local owner's state is kept under the user id `local-owner`.
 */
import type { UserSettings } from '../../protocol/projects.js';
import type { RecordStorage } from '../../storage/record-storage.js';
import type { Caller } from '../caller.js';
import { listAll } from '../projects/project-store.js';

const SETTINGS = 'user_settings';
const READ_MARKERS = 'read_markers';

interface ReadMarker {
  userId: string;
  conversationId: string;
  /** ms since the epoch. */
  readAt: number;
}

/** The id per-user state is kept under for a caller. */
export function stateOwner(caller: Caller): string {
  return caller.kind === 'local-owner' ? 'local-owner' : caller.userId;
}

/** Settings and read markers of each user. */
export class UserStateStore {
  private constructor(private readonly records: RecordStorage) {}

  /** Declares the namespaces. */
  static open(records: RecordStorage): UserStateStore {
    records.defineNamespace({ name: SETTINGS });
    records.defineNamespace({ name: READ_MARKERS, filterFields: ['userId', 'conversationId'] });
    return new UserStateStore(records);
  }

  /** A user's settings ({} when never set). */
  async settings(userId: string): Promise<UserSettings> {
    return (await this.records.get<UserSettings>(SETTINGS, userId))?.value ?? {};
  }

  /** Applies changes (`null` clears a field); returns the new settings. */
  async updateSettings(userId: string, changes: { [K in keyof UserSettings]?: UserSettings[K] | null }): Promise<UserSettings> {
    const next: Record<string, unknown> = { ...(await this.settings(userId)) };
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) delete next[key];
      else if (value !== undefined) next[key] = value;
    }
    await this.records.set(SETTINGS, userId, next);
    return next as UserSettings;
  }

  /** Marks a conversation read by a user now; returns the time recorded (ms). */
  async markRead(userId: string, conversationId: string, now = Date.now()): Promise<number> {
    await this.records.set<ReadMarker>(READ_MARKERS, `${userId}/${conversationId}`, { userId, conversationId, readAt: now });
    return now;
  }

  /** When a user last read each of some conversations (absent: never). */
  async readTimes(userId: string, conversationIds: string[]): Promise<Map<string, number>> {
    const found = await this.records.mget<ReadMarker>(READ_MARKERS, conversationIds.map((id) => `${userId}/${id}`));
    return new Map(found.flatMap((record) => (record ? [[record.value.conversationId, record.value.readAt] as const] : [])));
  }

  /** Removes every read marker of a conversation (its deletion). */
  async forgetConversation(conversationId: string): Promise<void> {
    for (const marker of await listAll<ReadMarker>(this.records, READ_MARKERS, { conversationId })) await this.records.delete(READ_MARKERS, `${marker.userId}/${conversationId}`);
  }

  /** Removes a user's settings and read markers (user deletion). */
  async forgetUser(userId: string): Promise<void> {
    await this.records.delete(SETTINGS, userId);
    for (const marker of await listAll<ReadMarker>(this.records, READ_MARKERS, { userId })) await this.records.delete(READ_MARKERS, `${userId}/${marker.conversationId}`);
  }
}
