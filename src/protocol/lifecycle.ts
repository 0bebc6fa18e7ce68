/**
 * Protocol methods and notifications of the conversation lifecycle (SPEC §3, §5): delete,
 * archive, fork and rewind, and the live conversation list feed. Spread into `methods` and
 * `notifications` by `methods.ts`; the names are the contract.
 */
import { z } from 'zod';
import { ConversationSchema, ConversationSummarySchema, SessionSchema } from './entities.js';

/** A runtime id as a request param: `<prefix>_` then letters and digits (same rule as `methods.ts`). */
function idParam(prefix: string, what: string) {
  return z.string().regex(new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`), { message: `not a ${what} id (expected ${prefix}_ followed by letters and digits)` });
}
const conversationIdParam = idParam('conv', 'conversation');
const sessionIdParam = idParam('sess', 'session');
/** Item ids are made by the runtime (`item_…`) but imported or forked items may keep other spellings: only bounded, no NUL. */
const itemIdParam = z.string().min(1).max(200).refine((value) => !value.includes('\0'), { message: 'must not contain NUL' });
const turnIdParam = idParam('turn', 'turn');

/** Lifecycle request methods: name → params and result schemas. */
export const lifecycleMethods = {
  /**
   * Deletes a conversation: running turns are interrupted, a deletion entry is recorded, its
   * files are moved to the data directory's trash, and subscribers hear `conversation/deleted`.
   * A conversation in a git worktree is deleted only with `removeWorktree: true`, which also
   * removes the worktree and its branch; without it the request is refused (conflict
   * `worktree_present`) naming the worktree.
   */
  'conversation/delete': {
    params: z.object({ conversationId: conversationIdParam, removeWorktree: z.boolean().optional() }),
    result: z.object({ conversationId: z.string() }),
  },
  /** Marks a conversation archived (left out of `conversation/list` unless `archived: true`). */
  'conversation/archive': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({ conversation: ConversationSchema }),
  },
  /** Clears the archived mark. */
  'conversation/unarchive': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({ conversation: ConversationSchema }),
  },
  /**
   * A new conversation whose root session starts with a copy of the source root session's
   * items up to and including `fromItemId`, or up to the end of turn `lastTurnId` (exactly one).
   */
  'conversation/fork': {
    params: z
      .object({ conversationId: conversationIdParam, fromItemId: itemIdParam.optional(), lastTurnId: turnIdParam.optional() })
      .refine((params) => (params.fromItemId === undefined) !== (params.lastTurnId === undefined), { message: 'give exactly one of fromItemId and lastTurnId', path: ['fromItemId'] }),
    result: z.object({ conversation: ConversationSchema, session: SessionSchema }),
  },
  /**
   * Keeps a session's items up to and including `afterItemId` and drops the rest (refused while
   * the conversation runs a turn or has queued input).
   */
  'conversation/rewind': {
    params: z.object({ conversationId: conversationIdParam, sessionId: sessionIdParam.optional(), afterItemId: itemIdParam }),
    result: z.object({
      session: SessionSchema,
      /** Seq of the last item kept. */
      afterSeq: z.number().int().nonnegative(),
      /** Items dropped. */
      dropped: z.number().int().nonnegative(),
      /** Turns whose items were all dropped (now marked `rewound`). */
      rewoundTurnIds: z.array(z.string()),
    }),
  },
  /** Starts the live conversation list feed on this connection (`conversation/created|updated|deleted` for every conversation). */
  'conversations/subscribe': {
    params: z.object({}),
    result: z.object({}),
  },
  /** Ends the live conversation list feed on this connection. */
  'conversations/unsubscribe': {
    params: z.object({}),
    result: z.object({}),
  },
} as const;

/** Lifecycle notifications: name → params schema. */
export const lifecycleNotifications = {
  /** A conversation was created (list feed). */
  'conversation/created': z.object({ conversation: ConversationSchema, summary: ConversationSummarySchema }),
  /** A conversation was deleted: to its subscribers and on the list feed (with its last summary when known). */
  'conversation/deleted': z.object({ conversationId: z.string(), summary: ConversationSummarySchema.optional() }),
  /**
   * A session's history was rewound: items after `afterSeq` are gone, and items that follow
   * continue from `afterSeq + 1`. A client drops what it holds of that session after
   * `afterSeq` and remembers `historyEpoch` for its next `conversation/subscribe`.
   */
  'session/rewound': z.object({
    conversationId: z.string(),
    sessionId: z.string(),
    afterSeq: z.number().int().nonnegative(),
    historyEpoch: z.number().int().positive(),
    rewoundTurnIds: z.array(z.string()),
  }),
} as const;
