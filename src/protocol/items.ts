/**
 * Item schemas (SPEC §3 "Item kinds": the kind names are the contract). An item is one thing
 * a session recorded; clients render items and the model context is built from them.
 */
import { z } from 'zod';
import { PlanStepSchema } from './plans.js';
import { ApprovalDecisionSchema } from './approval-options.js';
import { ToolDetailsSchema } from './tool-details.js';

/** How an item ended. */
export const ItemStatusSchema = z.enum(['completed', 'failed', 'interrupted']);
/** How an item ended. */
export type ItemStatus = z.infer<typeof ItemStatusSchema>;

/** A part of user content: text, an image (data URL or URL), or a reference to a stored file. */
export const ContentPartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), url: z.string(), mediaType: z.string().optional() }),
  /** A file; with `attachmentId`, one uploaded to the conversation (`POST /api/v1/uploads`), which the model reads. */
  z.object({ type: z.literal('file'), path: z.string(), name: z.string().optional(), mediaType: z.string().optional(), attachmentId: z.string().optional() }),
]);
/** A part of user content. */
export type ContentPart = z.infer<typeof ContentPartSchema>;

/** A JSON Schema branch requiring one string property (each branch of an `anyOf` of alternatives must define what it requires). */
function requiredString(name: string): Record<string, unknown> {
  return { properties: { [name]: { type: 'string', minLength: 1 } }, required: [name] };
}

/**
 * A `file` part as a client sends it in `session/input`: an upload named by `attachmentId`
 * (the server fills in `path`, `name` and `mediaType` from the stored file, whatever the client
 * wrote there), or a file named by `path`. At least one of the two is required (the JSON Schema
 * says so with `anyOf`).
 */
export const InputFilePartSchema = z
  .object({ type: z.literal('file'), path: z.string().min(1).optional(), name: z.string().optional(), mediaType: z.string().optional(), attachmentId: z.string().min(1).optional() })
  .refine((part) => part.path !== undefined || part.attachmentId !== undefined, { message: 'a file part needs `attachmentId` (an upload) or `path`' })
  .meta({ anyOf: [requiredString('attachmentId'), requiredString('path')] });
/** A `file` part as a client sends it in `session/input`. */
export type InputFilePart = z.infer<typeof InputFilePartSchema>;

/**
 * A part of the input a client sends (`session/input`): as {@link ContentPartSchema}, except
 * that a `file` part naming an upload needs no `path` (see {@link InputFilePartSchema}). The
 * recorded `user_message` always holds complete {@link ContentPart}s.
 */
export const InputContentPartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), url: z.string(), mediaType: z.string().optional() }),
  InputFilePartSchema,
]);
/** A part of the input a client sends. */
export type InputContentPart = z.infer<typeof InputContentPartSchema>;

/** Token counts reported by the provider. */
export const TokenUsageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
  /** Input tokens served from the provider's prompt cache, when reported. */
  cachedInputTokens: z.number().int().nonnegative().optional(),
  /** Output tokens spent on reasoning, when reported. */
  reasoningTokens: z.number().int().nonnegative().optional(),
});
/** Token counts reported by the provider. */
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

const itemBase = {
  id: z.string(),
  sessionId: z.string(),
  turnId: z.string(),
  /** Creation time, ms since the epoch. */
  createdAt: z.number(),
  /** Completion time, ms since the epoch. */
  completedAt: z.number(),
  status: ItemStatusSchema,
};

/**
 * Who sent an input: the client connection (`clientName` from its `initialize`, and the
 * server's number for the connection), or another session of the conversation
 * (`clientName: "agent"` with that `sessionId`).
 */
export const InputAuthorSchema = z.object({
  clientName: z.string(),
  connectionId: z.string().optional(),
  /** The session that sent it, when an agent did. */
  sessionId: z.string().optional(),
});
/** Who sent an input. */
export type InputAuthor = z.infer<typeof InputAuthorSchema>;

/** A message the user sent (or steering input read during a turn). */
export const UserMessageItemSchema = z.object({
  ...itemBase,
  kind: z.literal('user_message'),
  content: z.array(ContentPartSchema),
  mode: z.enum(['input', 'steer']),
  /** Who sent it (absent in logs written before it was recorded). */
  author: InputAuthorSchema.optional(),
  /** The `inputId` `session/input` answered with. */
  inputId: z.string().optional(),
  /** The client's own id for the message (`session/input` `clientMessageId`), echoed. */
  clientMessageId: z.string().optional(),
});

/** Text the model wrote (Markdown). */
export const AssistantMessageItemSchema = z.object({
  ...itemBase,
  kind: z.literal('assistant_message'),
  text: z.string(),
  /** `provider/model` that wrote it. */
  model: z.string(),
});

/** The model's reasoning: a readable summary plus opaque provider data kept for replay. */
export const ReasoningItemSchema = z.object({
  ...itemBase,
  kind: z.literal('reasoning'),
  /** The summary parts joined by a blank line (what readers of items without `summaryParts` show). */
  summary: z.string(),
  /**
   * The readable summary in the parts the provider sent (Responses summary parts, Anthropic
   * thinking blocks, Gemini thoughts); `item/delta` `partIndex` indexes it. Absent in items
   * written before parts were recorded.
   */
  summaryParts: z.array(z.string()).optional(),
  /** The model's raw reasoning text, where the provider gives it (Chat Completions `reasoning_content`). */
  rawText: z.string().optional(),
  /**
   * `provider/model` that produced it. Reasoning is sent back only to that model: signed or
   * encrypted reasoning is bound to it (absent in logs written before it was recorded; such
   * reasoning is not sent back).
   */
  model: z.string().optional(),
  providerData: z.record(z.string(), z.unknown()).optional(),
});

/** A tool call and its result, as one item so the transcript never holds one without the other. */
export const ToolCallItemSchema = z.object({
  ...itemBase,
  kind: z.literal('tool_call'),
  callId: z.string(),
  toolName: z.string(),
  arguments: z.unknown(),
  executor: z.string().optional(),
  output: z.string(),
  isError: z.boolean(),
  exitCode: z.number().int().nullable().optional(),
  structured: z.record(z.string(), z.unknown()).optional(),
  /** Typed details for clients (command, file changes, MCP, subagents, search, read); see `tool-details.ts`. */
  details: ToolDetailsSchema.optional(),
  /** Wall time of the tool's work, ms. */
  durationMs: z.number().nonnegative(),
  /**
   * Opaque provider data of the call, sent back with it to the same model only:
   * `{model: "provider/model", metadata}` (Gemini's `thoughtSignature`).
   */
  providerData: z.record(z.string(), z.unknown()).optional(),
});

/** A message between sessions (parent ⇄ subagent). */
export const AgentMessageItemSchema = z.object({
  ...itemBase,
  kind: z.literal('agent_message'),
  fromSessionId: z.string(),
  toSessionId: z.string(),
  text: z.string(),
});

/** A decision on a tool call that needed approval. */
export const ApprovalItemSchema = z.object({
  ...itemBase,
  kind: z.literal('approval'),
  callId: z.string(),
  toolName: z.string(),
  decision: ApprovalDecisionSchema,
  /** Who decided: `client:<client name>` of the deciding connection. */
  decidedBy: z.string(),
  /** The command prefix allowed for the session (with `allow_prefix`), as parsed words. */
  prefix: z.array(z.string()).optional(),
  message: z.string().optional(),
  /** True when the deciding client answered by its own rule, without asking a person. */
  automatic: z.boolean().optional(),
});

/** A failed model call, with the provider's own message. */
export const ModelErrorItemSchema = z.object({
  ...itemBase,
  kind: z.literal('model_error'),
  provider: z.string(),
  model: z.string(),
  httpStatus: z.number().int().nullable(),
  message: z.string(),
  retries: z.number().int().nonnegative(),
});

/** A compaction summary standing in for the items up to `lastItemId`. */
export const ContextSummaryItemSchema = z.object({
  ...itemBase,
  kind: z.literal('context_summary'),
  text: z.string(),
  lastItemId: z.string(),
});

/** The session's model changed. */
export const ModelChangeItemSchema = z.object({ ...itemBase, kind: z.literal('model_change'), from: z.string(), to: z.string() });
/** The session's agent changed (`session/setAgent`), recorded when the next turn starts. */
export const AgentChangeItemSchema = z.object({ ...itemBase, kind: z.literal('agent_change'), from: z.string(), to: z.string() });
/** The agent set its plan (`update_plan`): every step, as a whole. */
export const PlanItemSchema = z.object({ ...itemBase, kind: z.literal('plan'), explanation: z.string().optional(), steps: z.array(PlanStepSchema) });
/** The session's executor changed. */
export const ExecutorChangeItemSchema = z.object({ ...itemBase, kind: z.literal('executor_change'), from: z.string(), to: z.string() });

/** Instructions added to the context (AGENTS.md, a skill, the agent definition). */
export const InstructionItemSchema = z.object({
  ...itemBase,
  kind: z.literal('instruction'),
  /** `client`: given with `conversation/create` `instructions`. */
  source: z.enum(['agents_md', 'skill', 'agent', 'client']),
  name: z.string(),
  body: z.string(),
});

/** One run of a configured hook. */
export const HookRunItemSchema = z.object({
  ...itemBase,
  kind: z.literal('hook_run'),
  event: z.string(),
  command: z.string(),
  exitCode: z.number().int().nullable(),
  output: z.string(),
  decision: z.string().optional(),
  /**
   * `pre_tool_use`, `post_tool_use`: the call the hook ran for, as its `tool_call` item names it
   * (several calls of one step run, and their hooks, at once). Absent for other events and in
   * items written before it was recorded.
   */
  callId: z.string().optional(),
  /** With `callId`: the tool of that call. */
  toolName: z.string().optional(),
});

/** Marks where a turn was cut short, and why. */
export const InterruptionItemSchema = z.object({
  ...itemBase,
  kind: z.literal('interruption'),
  reason: z.enum(['user', 'shutdown', 'crash_recovery', 'limit']),
  message: z.string().optional(),
});

/** Any item (SPEC §3). */
export const ItemSchema = z.discriminatedUnion('kind', [
  UserMessageItemSchema,
  AssistantMessageItemSchema,
  ReasoningItemSchema,
  ToolCallItemSchema,
  AgentMessageItemSchema,
  ApprovalItemSchema,
  ModelErrorItemSchema,
  ContextSummaryItemSchema,
  ModelChangeItemSchema,
  AgentChangeItemSchema,
  ExecutorChangeItemSchema,
  InstructionItemSchema,
  PlanItemSchema,
  HookRunItemSchema,
  InterruptionItemSchema,
]);
/** Any item (SPEC §3). */
export type Item = z.infer<typeof ItemSchema>;
/** The kind names of items. */
export type ItemKind = Item['kind'];
/** The item of one kind. */
export type ItemOf<K extends ItemKind> = Extract<Item, { kind: K }>;
/** An item as stored in a session log, with its seq in that stream. */
export const StoredItemSchema = z.object({ seq: z.number().int().positive(), item: ItemSchema });
/** An item as stored in a session log, with its seq in that stream. */
export type StoredItem = z.infer<typeof StoredItemSchema>;
