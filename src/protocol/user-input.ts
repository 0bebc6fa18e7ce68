/**
 * `request_user_input` (protocol version 2): the agent asks the user a question. It reaches
 * clients like an approval: the notification `input/requested`, the server-to-client request
 * `input/request` (to connections that declared `userInput`), `input/respond` from any
 * client, and `input/resolved` once answered (first answer wins).
 */
import { z } from 'zod';

const conversationId = z.string().min(1);
const requestIdParam = z.string().regex(/^input_[0-9A-Za-z]{1,64}$/, { message: 'not a user input request id (expected input_ followed by letters and digits)' });

/** A question waiting for the user. */
export const UserInputRequestSchema = z.object({
  requestId: z.string(),
  conversationId: z.string(),
  sessionId: z.string(),
  turnId: z.string(),
  /** The `request_user_input` call and its `tool_call` item. */
  callId: z.string(),
  itemId: z.string(),
  question: z.string(),
  /** Answers to offer; absent: free text only. */
  choices: z.array(z.string()).optional(),
  /** Whether an answer outside `choices` is accepted. */
  allowFreeText: z.boolean(),
  /** ms since the epoch. */
  requestedAt: z.number(),
});
/** A question waiting for the user. */
export type UserInputRequest = z.infer<typeof UserInputRequestSchema>;

/** How a question ended: `answered` by a client, or `cancelled` (the turn was interrupted, or a client said no user can answer). */
export const UserInputOutcomeSchema = z.enum(['answered', 'cancelled']);

/** Client methods for user input. */
export const userInputMethods = {
  /** Answers a waiting question; the first answer wins. */
  'input/respond': {
    params: z.object({ conversationId: z.string().regex(/^conv_[0-9A-Za-z]{1,64}$/, { message: 'not a conversation id (expected conv_ followed by letters and digits)' }), requestId: requestIdParam, answer: z.string() }),
    /** `accepted`: false when the question was already answered or cancelled. */
    result: z.object({ accepted: z.boolean() }),
  },
} as const;

/** Notifications for user input. */
export const userInputNotifications = {
  'input/requested': z.object({ conversationId, request: UserInputRequestSchema }),
  'input/resolved': z.object({
    conversationId,
    requestId: z.string(),
    sessionId: z.string(),
    turnId: z.string(),
    callId: z.string(),
    itemId: z.string(),
    outcome: UserInputOutcomeSchema,
    /** The answer, when `answered`. */
    answer: z.string().optional(),
    /** Client name of the connection that answered (`client:<name>`), or `interruption`. */
    decidedBy: z.string(),
  }),
} as const;

/** Server-to-client requests for user input. */
export const userInputServerRequests = {
  /**
   * Asks the user. The client answers `{ answer }`, or `{ declined }` with a reason when no
   * user can answer (e.g. no terminal), which ends the question for every client.
   */
  'input/request': {
    params: UserInputRequestSchema,
    result: z.union([z.object({ answer: z.string() }), z.object({ declined: z.string().min(1) })]),
  },
} as const;
