/**
 * What users learn about damage in a conversation's logs (docs/storage.md, "Damaged logs"):
 * the damaged lines and entries that reads skipped, gathered per conversation as the storage
 * and the dao report them (the `damage` of `conversation/get` and `conversation/export`), and
 * the error of a conversation whose logs are damaged beyond what reads skip.
 */
import type { LogDamage } from '../protocol/index.js';
import type { LogProblem } from '../storage/log-storage.js';
import type { InvalidEntryReport } from './metadata-log.js';

/**
 * Damage entries kept per conversation: a log of garbage holds a line per few bytes, and
 * telling about the first ones says what there is to say.
 */
export const MAXIMUM_DAMAGE_PER_CONVERSATION = 100;

/** Names where a stream is stored, for messages (the file storage: the file's path). */
export type StreamLocator = (path: string, stream: string) => string;

/** The {@link StreamLocator} of a storage that has no better name for a stream than its path and id. */
export const describeStream: StreamLocator = (path, stream) => `stream "${stream}" of ${path}`;

/**
 * A conversation that cannot be opened because its logs are damaged beyond what reads skip: a
 * log cannot be read at all, or the metadata log holds no valid conversation entry. The
 * message names the conversation, the file and what is wrong.
 */
export class DamagedConversationError extends Error {
  constructor(
    readonly conversationId: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`conversation "${conversationId}" cannot be opened: ${detail}`, options);
    this.name = 'DamagedConversationError';
  }
}

/**
 * The conversation whose log path is `path` (SPEC §4 layout: `conversations/<id>`, the one
 * `conversationPath` of the store makes); undefined for other paths.
 */
function conversationOfPath(path: string): string | undefined {
  const match = /^conversations\/([^/]+)$/.exec(path);
  return match?.[1];
}

/**
 * The damage found in each conversation's logs since the server started. The storage reports
 * a damaged line once per opened stream, when a read first passes over it, so the reports are
 * kept here for every later reader rather than looked for again.
 */
export class LogDamageRegistry {
  private readonly conversations = new Map<string, Map<string, LogDamage>>();

  /** The storage's problem listener: takes the problems of conversation logs. */
  readonly onProblem = (problem: LogProblem): void => {
    const conversationId = conversationOfPath(problem.path);
    if (conversationId !== undefined) this.add(conversationId, { stream: problem.stream, kind: problem.kind, location: problem.location, message: problem.message });
  };

  /** An entry that did not match the schema and was skipped, stored at `location` (where the stream is). */
  invalidEntry(report: InvalidEntryReport, location: string): void {
    this.add(report.conversationId, { stream: report.stream, kind: 'invalid_entry', location: `${location}, seq ${report.seq}`, message: `entry skipped: ${report.message}` });
  }

  /** The damage known in a conversation's logs, in the order it was found. */
  of(conversationId: string): LogDamage[] {
    return [...(this.conversations.get(conversationId)?.values() ?? [])];
  }

  /** After an append to a stream: its torn tail, if any, is cut off now and no longer in the log. */
  appended(conversationId: string, stream: string): void {
    this.drop(conversationId, (damage) => damage.stream === stream && damage.kind === 'torn_tail');
  }

  /** After a stream was replaced (a rewind writes only the entries it read): nothing of its damage is left. */
  forgetStream(conversationId: string, stream: string): void {
    this.drop(conversationId, (damage) => damage.stream === stream);
  }

  /** After a conversation's logs were deleted or written anew. */
  forget(conversationId: string): void {
    this.conversations.delete(conversationId);
  }

  private add(conversationId: string, damage: LogDamage): void {
    let known = this.conversations.get(conversationId);
    if (!known) {
      known = new Map();
      this.conversations.set(conversationId, known);
    }
    const key = `${damage.stream}\u0000${damage.kind}\u0000${damage.location}`;
    if (known.has(key) || known.size >= MAXIMUM_DAMAGE_PER_CONVERSATION) return;
    known.set(key, damage);
  }

  private drop(conversationId: string, matches: (damage: LogDamage) => boolean): void {
    const known = this.conversations.get(conversationId);
    if (!known) return;
    for (const [key, damage] of known) if (matches(damage)) known.delete(key);
    if (known.size === 0) this.conversations.delete(conversationId);
  }
}
