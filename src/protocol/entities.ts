/**
 * Conversation, session and turn state (SPEC §3). These are the values stored, last entry
 * wins, in a conversation's `metadata.jsonl`, and sent to clients.
 */
import { z } from 'zod';
import { ApprovalOptionSchema } from './approval-options.js';
import { TokenUsageSchema } from './items.js';
import { SessionPlanSchema } from './plans.js';
import { ConversationContextFields } from './conversation-context.js';
import { ToolDetailsSchema } from './tool-details.js';
import { UserInputRequestSchema } from './user-input.js';

/** One executor a conversation may use, and its working directory there. */
export const WorkLocationEntrySchema = z.object({
  /** Executor name from configuration (`local`). */
  executor: z.string(),
  /** Absolute working directory on that executor. */
  cwd: z.string(),
});
/** One executor a conversation may use, and its working directory there. */
export type WorkLocationEntry = z.infer<typeof WorkLocationEntrySchema>;

/**
 * The git worktree a conversation works in (docs/protocol.md, "Worktrees"): made by
 * `conversation/create` with `worktree`, on the conversation's first executor.
 */
export const ConversationWorktreeSchema = z.object({
  /** Executor holding the repository. */
  executor: z.string(),
  /** Absolute path of the main checkout the worktree was made from (where merges land). */
  repositoryRoot: z.string(),
  /** Absolute path of the worktree. */
  path: z.string(),
  /** The worktree's own branch, `openvaala/<short id>`. */
  branch: z.string(),
  /** The branch it was made from and merges into; absent when made from a detached HEAD. */
  baseBranch: z.string().optional(),
  /** The commit it was made from (full hash). */
  baseCommit: z.string(),
  /** Set once `worktree/discard` removed it, ms since the epoch. */
  removedAt: z.number().optional(),
});
/** The git worktree a conversation works in. */
export type ConversationWorktree = z.infer<typeof ConversationWorktreeSchema>;

/** A conversation: one task, its work location and its sessions. */
export const ConversationSchema = z.object({
  id: z.string(),
  title: z.string(),
  /** The executors (first = default) and working directories. */
  workLocation: z.array(WorkLocationEntrySchema).min(1),
  /** The session created with the conversation. */
  rootSessionId: z.string(),
  /** ms since the epoch. */
  createdAt: z.number(),
  /** ms since the epoch; moves on every new item or state change. */
  updatedAt: z.number(),
  /** Set by `conversation/archive`, cleared by `conversation/unarchive`; archived ones are left out of listings by default. */
  archived: z.boolean().optional(),
  /** For a conversation made by `conversation/fork`: the source conversation and its last item copied. */
  forkedFrom: z.object({ conversationId: z.string(), itemId: z.string() }).optional(),
  /** The project the conversation belongs to (platform layer, SPEC §9); absent for one outside every project. */
  projectId: z.string().optional(),
  /** The git worktree and branch the conversation works in, when made with one. */
  worktree: ConversationWorktreeSchema.optional(),
  ...ConversationContextFields,
});
/** A conversation. */
export type Conversation = z.infer<typeof ConversationSchema>;

/** A tool call waiting for a person's decision (SPEC §5 `approval/request`). */
export const ApprovalRequestSchema = z.object({
  approvalId: z.string(),
  conversationId: z.string(),
  sessionId: z.string(),
  turnId: z.string(),
  callId: z.string(),
  /** The call's `tool_call` item (its `item/started` came before this request). */
  itemId: z.string(),
  toolName: z.string(),
  arguments: z.unknown(),
  executor: z.string().optional(),
  /** What the call will do, as far as known before it runs (the command and its cwd, the diffs to apply). */
  details: ToolDetailsSchema.optional(),
  /** The answers to offer, in order (see `approvalOptions`). */
  options: z.array(ApprovalOptionSchema),
  /** Why it is asked (the policy rule that matched). */
  reason: z.string(),
  /**
   * For a call that runs one simple shell command: the command prefix, as parsed words, that
   * the decision `allow_prefix` would allow for the rest of the session (e.g. `["git", "status"]`).
   */
  proposedPrefix: z.array(z.string()).min(1).optional(),
  /** ms since the epoch. */
  requestedAt: z.number(),
});
/** A tool call waiting for a person's decision. */
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;


/** A session's state. */
export const SessionStatusSchema = z.enum(['idle', 'running', 'closed']);

/** One agent's line of work inside a conversation. */
export const SessionSchema = z.object({
  id: z.string(),
  conversationId: z.string(),
  /** Parent session for subagents, null for the root session. */
  parentSessionId: z.string().nullable(),
  /** Agent definition name. */
  agent: z.string(),
  /** `provider/model`. */
  model: z.string(),
  status: SessionStatusSchema,
  /** The running turn, if any. */
  activeTurnId: z.string().nullable(),
  /** Inputs waiting for the next turn, oldest first. */
  queuedInputs: z.array(z.object({ id: z.string(), text: z.string(), clientMessageId: z.string().optional() })),
  /**
   * Tool calls of the running turn waiting for approval. Waiting lives in memory only, so a
   * stored list in an older shape (written before `itemId` and `options`) reads as empty
   * rather than making the whole session entry unreadable.
   */
  pendingApprovals: z.array(ApprovalRequestSchema).default([]).catch([]),
  /** Questions of `request_user_input` waiting for the user. */
  pendingUserInputs: z.array(UserInputRequestSchema).default([]).catch([]),
  /**
   * Number of times the session's history was rewound (`conversation/rewind`); absent means 0.
   * A client holding items of an older epoch drops those after `rewoundAfterSeq`.
   */
  historyEpoch: z.number().int().nonnegative().optional(),
  /** Seq of the last item kept by the latest rewind (present once `historyEpoch` > 0). */
  rewoundAfterSeq: z.number().int().nonnegative().optional(),
  /**
   * Set by `session/setAgent` until the next turn starts and records the change as an
   * `agent_change` item: the agent the session last ran as (`from`) and when the change was
   * asked for (ms since the epoch). Kept with the session so a server restart in between
   * loses nothing.
   */
  pendingAgentChange: z.object({ from: z.string(), requestedAt: z.number() }).optional(),
  /** The agent's current plan (its last `update_plan`), when it made one. */
  plan: SessionPlanSchema.optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
/** One agent's line of work inside a conversation. */
export type Session = z.infer<typeof SessionSchema>;

/** How a turn ended, or `running`. */
export const TurnStatusSchema = z.enum(['running', 'completed', 'failed', 'interrupted']);
/** How a turn ended, or `running`. */
export type TurnStatus = z.infer<typeof TurnStatusSchema>;

/**
 * Why a turn ended: `end_turn` (the model finished), `user_interrupt` (`session/interrupt`),
 * `shutdown` (the server stopped), `step_limit` (`maxSteps` model calls), `max_tokens` (the
 * provider's output limit: finish reason `length`), `refusal` (the provider's content filter),
 * `model_error` (the model call failed after its retries, or the turn could not go on),
 * `hook_refused` (a `user_prompt_submit` hook refused the prompt), `crash_recovery` (the
 * server that ran it died; recorded by the next one).
 */
export const TurnStopReasonSchema = z.enum(['end_turn', 'user_interrupt', 'shutdown', 'step_limit', 'max_tokens', 'refusal', 'model_error', 'hook_refused', 'crash_recovery']);
/** Why a turn ended. */
export type TurnStopReason = z.infer<typeof TurnStopReasonSchema>;

/** One run of the agent loop, started by an input. */
export const TurnSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  conversationId: z.string(),
  status: TurnStatusSchema,
  /** Model calls made. */
  steps: z.number().int().nonnegative(),
  usage: TokenUsageSchema,
  /** Why it failed, when it did. */
  error: z.string().optional(),
  /** Why it ended (absent while running, and in logs written before it was recorded). */
  stopReason: TurnStopReasonSchema.optional(),
  /** `provider/model` the turn ran on. */
  model: z.string().optional(),
  /** What the turn's model calls cost, USD, when the model's prices are known. */
  costUsd: z.number().nonnegative().optional(),
  startedAt: z.number(),
  completedAt: z.number().nullable(),
  /** True when a rewind dropped every item of the turn: it is no longer part of the history. */
  rewound: z.boolean().optional(),
});
/** One run of the agent loop. */
export type Turn = z.infer<typeof TurnSchema>;

/** What the conversation list shows of a conversation. */
export const ConversationSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  cwd: z.string(),
  /** The default (first) executor of the work location. */
  executor: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** Status of the last turn of the root session, if any (rewound turns left out). */
  lastTurnStatus: TurnStatusSchema.nullable(),
  /**
   * Why that turn stopped, when it stopped for a reason other than a normal finish (`max_tokens`,
   * `refusal`, `step_limit`, …; see `stop-reasons.ts`). Absent otherwise, and in index records
   * written before the field existed (until `openvaala reindex`).
   */
  lastTurnStopReason: TurnStopReasonSchema.optional(),
  /** True while a turn runs or input is queued in any session of the conversation. */
  running: z.boolean(),
  /** The start of the root session's last user or assistant message (at most 200 characters; empty when none). */
  preview: z.string(),
  archived: z.boolean(),
  /** Platform layer: the conversation's project, when it has one (`conversation/list` and the list feed's notifications). */
  projectId: z.string().optional(),
  /** Platform layer: whether it changed since the caller last marked it read (`conversations/markRead`; `conversation/list` only). */
  unread: z.boolean().optional(),
});
/** What the conversation list shows of a conversation. */
export type ConversationSummary = z.infer<typeof ConversationSummarySchema>;

/**
 * A damaged part of a conversation's logs that the server skipped while reading them (SPEC §4:
 * damage is reported and skipped, never fatal): an incomplete last line (`torn_tail`), a line
 * that is no valid entry (`corrupt_line`) or an entry that does not match the schema
 * (`invalid_entry`). What the server noticed since it started; every entry before and after
 * it is read as usual.
 */
export const LogDamageSchema = z.object({
  /** The stream: `metadata` or a session id. */
  stream: z.string(),
  kind: z.enum(['torn_tail', 'corrupt_line', 'invalid_entry']),
  /** Where, as the storage names it: for the file storage the file's path with its line and byte offset, or the entry's seq. */
  location: z.string(),
  /** What was wrong and what became of it. */
  message: z.string(),
});
/** A damaged part of a conversation's logs that the server skipped while reading them. */
export type LogDamage = z.infer<typeof LogDamageSchema>;
