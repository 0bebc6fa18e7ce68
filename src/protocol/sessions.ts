/**
 * Session methods (SPEC §5): input, interruption, model change, compaction and listing of a
 * conversation's sessions. Spread into `methods` of `methods.ts`.
 */
import { z } from 'zod';
import { SessionSchema } from './entities.js';
import { InputContentPartSchema } from './items.js';
import { ClientMessageIdSchema } from './turn-control.js';
import { conversationIdParam, ReasoningEffortSchema, sessionIdParam } from './request-params.js';

/** The `session/*` request methods: name → params and result schemas. */
export const sessionMethods = {
  'session/input': {
    params: z.object({
      conversationId: conversationIdParam,
      /** Default: the conversation's root session. */
      sessionId: sessionIdParam.optional(),
      /** Text, or content parts (a `file` part may name an upload by `attachmentId` alone). */
      input: z.union([z.string().min(1), z.array(InputContentPartSchema).min(1)]),
      /** `queue` (default): next turn; `steer`: read before the running turn's next model call. */
      mode: z.enum(['queue', 'steer']).optional(),
      /**
       * Reasoning effort for the turn this input starts, over the model's configured effort
       * (`providers.yaml`). Ignored for steering input (the running turn keeps its effort).
       */
      reasoningEffort: ReasoningEffortSchema.optional(),
      /**
       * `provider/model` for the turn this input starts only (the session's model is unchanged).
       * Ignored for steering input read by a running turn.
       */
      model: z.string().min(1).optional(),
      /**
       * With `mode: "steer"`: the turn the steering is meant for. When that turn is not the
       * running one the input is refused (-32009 `no_running_turn` / `turn_mismatch`) instead
       * of starting a turn.
       */
      expectedTurnId: z.string().regex(/^turn_[0-9A-Za-z]{1,64}$/, { message: 'not a turn id (expected turn_ followed by letters and digits)' }).optional(),
      /** The client's id for this input: a repeat answers the first result and does nothing. */
      clientMessageId: ClientMessageIdSchema.optional(),
    }),
    result: z.object({
      sessionId: z.string(),
      /** The input's id (`session.queuedInputs[].id`, `session/dequeue`). */
      inputId: z.string(),
      /** True when the input waits behind a running turn (or is steering not yet read). */
      queued: z.boolean(),
      /** The turn started for it (or, for steering, the running turn that reads it). */
      turnId: z.string().optional(),
    }),
  },
  'session/interrupt': {
    params: z.object({
      conversationId: conversationIdParam,
      sessionId: sessionIdParam.optional(),
      /** Interrupt only this turn: -32009 `no_running_turn` / `turn_mismatch` when it is not the running one. */
      turnId: z.string().regex(/^turn_[0-9A-Za-z]{1,64}$/, { message: 'not a turn id (expected turn_ followed by letters and digits)' }).optional(),
    }),
    result: z.object({
      /** True when a turn was running and has been interrupted. */
      interrupted: z.boolean(),
      turnId: z.string().optional(),
    }),
  },
  'session/setModel': {
    params: z.object({ conversationId: conversationIdParam, sessionId: sessionIdParam.optional(), model: z.string().min(1) }),
    result: z.object({ session: SessionSchema }),
  },
  /** Manual compaction: runs as a turn of its own, now when idle or after the queued work. */
  'session/compact': {
    params: z.object({ conversationId: conversationIdParam, sessionId: sessionIdParam.optional() }),
    result: z.object({ sessionId: z.string(), queued: z.boolean(), turnId: z.string().optional() }),
  },
  'session/list': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({ sessions: z.array(SessionSchema) }),
  },
};
