/**
 * Protocol shapes for controlling turns precisely and following them exactly (SPEC §5):
 * withdrawing a queued input, per-call token usage and cost, and the end of a subscription's
 * replay. Spread into `methods` and `notifications` (methods.ts).
 */
import { z } from 'zod';
import { TokenUsageSchema } from './items.js';

const conversationId = z.string().min(1);

/**
 * A client's own id for a message (`session/input`, `conversation/create`): 1–128 characters.
 * The server answers a repeat with the first result instead of acting twice (docs/protocol.md,
 * "Idempotency").
 */
export const ClientMessageIdSchema = z.string().min(1).max(128);

/**
 * Per session id, a seq of that session's item log: for `conversation/subscribe` `heads`, the
 * last item stored when the subscription began; for `conversation/synced`, the last item sent
 * by the replay.
 */
export const SessionHeadsSchema = z.record(z.string(), z.number().int().nonnegative());
/** Per session id, a seq of that session's item log. */
export type SessionHeads = z.infer<typeof SessionHeadsSchema>;

/** Prices of a model, USD per million tokens. */
export interface ModelPrices {
  inputPerMillionUsd: number;
  outputPerMillionUsd: number;
  /** Input tokens read from the provider's cache; default: the input price. */
  cachedInputPerMillionUsd?: number;
}

/** Request methods added by this module (spread into `methods`). */
export const turnControlMethods = {
  /**
   * Withdraws an input still waiting in a session's queue (or steering not yet read).
   * Errors: -32004 when no input of that id is known; -32009 `input_started` when it already
   * started its turn (or was read by the running one).
   */
  'session/dequeue': {
    params: z.object({
      conversationId: z.string().regex(/^conv_[0-9A-Za-z]{1,64}$/, { message: 'not a conversation id (expected conv_ followed by letters and digits)' }),
      sessionId: z.string().regex(/^sess_[0-9A-Za-z]{1,64}$/, { message: 'not a session id (expected sess_ followed by letters and digits)' }).optional(),
      /** The `inputId` `session/input` answered with. */
      inputId: z.string().regex(/^input_[0-9A-Za-z]{1,64}$/, { message: 'not an input id (expected input_ followed by letters and digits)' }),
    }),
    result: z.object({ sessionId: z.string(), inputId: z.string(), dequeued: z.literal(true) }),
  },
} as const;

/** Notifications added by this module (spread into `notifications`). */
export const turnControlNotifications = {
  /**
   * After every model call of a turn: that call's tokens, the turn's total so far, how much of
   * the context window is in use, and the turn's cost so far when the model's prices are known.
   */
  'session/usage': z.object({
    conversationId,
    sessionId: z.string(),
    turnId: z.string(),
    /** The session log's last stored seq when the call ended. */
    seq: z.number().int().nonnegative(),
    /** `provider/model` called. */
    model: z.string(),
    lastCall: TokenUsageSchema,
    turnTotal: TokenUsageSchema,
    /** Tokens of context in use after the call (its input plus its output). */
    contextTokens: z.number().int().nonnegative(),
    /** The model's context window, tokens. */
    contextWindow: z.number().int().positive().optional(),
    /** The turn's cost so far, USD (only when the model's prices are known). */
    costUsd: z.number().nonnegative().optional(),
  }),
  /**
   * A subscription's replay is over: everything after this is live. `heads` holds, per session,
   * the seq of the last item the subscriber has been sent.
   */
  'conversation/synced': z.object({ conversationId, heads: SessionHeadsSchema }),
} as const;
