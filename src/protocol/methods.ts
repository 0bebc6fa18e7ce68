/**
 * The runtime protocol's methods and notifications (SPEC §5: the names are the contract;
 * shapes evolve with `PROTOCOL_VERSION`). Defined once here; the server, the CLI, the tests
 * and the exported JSON Schema all use these definitions.
 */
import { z } from 'zod';
import { ApprovalDecisionSchema } from './approval-options.js';
import { ClientCapabilitiesSchema, ServerCapabilitiesSchema } from './capabilities.js';
import { userInputMethods, userInputNotifications, userInputServerRequests } from './user-input.js';
import { ApprovalRequestSchema, ConversationSchema, ConversationSummarySchema, SessionSchema, TurnSchema } from './entities.js';
import { ItemSchema, StoredItemSchema } from './items.js';
import { lifecycleMethods, lifecycleNotifications } from './lifecycle.js';
import { turnControlMethods, turnControlNotifications } from './turn-control.js';
import { agentMethods } from './agents.js';
import { pluginMethods } from './plugins.js';
import { planNotifications } from './plans.js';
import { conversationMethods } from './conversations.js';
import { conversationTransferMethods } from './conversation-transfer.js';
import { projectMethods } from './projects.js';
import { sessionMethods } from './sessions.js';
import { approvalIdParam, conversationIdParam, ReasoningEffortSchema, sessionIdParam } from './request-params.js';
import { workspaceMethods, workspaceNotifications } from './workspace.js';
import { workspaceGitMethods } from './workspace-git.js';
import { browserMethods } from './browser.js';
import { worktreeMethods } from './worktrees.js';
import { clientFileMethods, clientFileServerRequests } from './client-files.js';
import { clientCommandMethods, clientCommandServerRequests } from './client-commands.js';
import { platformIdentityMethods } from './platform-identity.js';
import { scheduleMethods } from './schedules.js';
import { notificationMethods } from './notifications.js';
import { costMethods, costNotifications } from './costs.js';

export { PROTOCOL_VERSION } from './version.js';

const conversationId = z.string().min(1);
/** Seq of an entry in a conversation's `metadata.jsonl`. */
const metadataSeq = z.number().int().nonnegative();

export { ReasoningEffortSchema, type ReasoningEffort } from './request-params.js';

/** A model of the catalog (`models/list`). */
export const ModelInfoSchema = z.object({
  /** `provider/model-id`. */
  id: z.string(),
  provider: z.string(),
  /** Provider kind (`openai`, `anthropic`, `google`, `openai-compatible`). */
  kind: z.string(),
  /** Name shown to people (the configured `displayName`, else the model id). */
  displayName: z.string(),
  /** Context window in tokens, when known. */
  contextWindow: z.number().int().positive().optional(),
  /** Most tokens the model writes in one answer, when known. */
  maxOutputTokens: z.number().int().positive().optional(),
  capabilities: z.object({ tools: z.boolean(), reasoning: z.boolean(), images: z.boolean() }),
  /** The efforts `session/input` `reasoningEffort` may ask of this model (empty for a model that does not reason). */
  reasoningEfforts: z.array(ReasoningEffortSchema),
  /** Prices in USD per million tokens, when known (`providers.yaml` `prices`, else built in). */
  prices: z
    .object({ inputPerMillionUsd: z.number().nonnegative(), outputPerMillionUsd: z.number().nonnegative(), cachedInputPerMillionUsd: z.number().nonnegative().optional() })
    .optional(),
});
/** A model of the catalog. */
export type ModelInfo = z.infer<typeof ModelInfoSchema>;

/**
 * Streamed progress of an item: assistant `text`, reasoning summary text (`reasoning`, in the
 * summary part `partIndex`), raw reasoning text (`reasoningRaw`), or tool `output`.
 */
export const ItemDeltaSchema = z.object({
  text: z.string().optional(),
  reasoning: z.string().optional(),
  /** With `reasoning`: which summary part (0-based, the index into the item's `summaryParts`) the text belongs to. */
  partIndex: z.number().int().nonnegative().optional(),
  reasoningRaw: z.string().optional(),
  output: z.string().optional(),
});
/** Streamed progress of an item. */
export type ItemDelta = z.infer<typeof ItemDeltaSchema>;

/** Request methods: name → params and result schemas. */
export const methods = {
  initialize: {
    params: z.object({
      clientInfo: z.object({ name: z.string().min(1), version: z.string().optional() }),
      protocolVersion: z.number().int().optional(),
      /**
       * The server token, for a connection whose upgrade carried none (a browser that cannot
       * set headers): the first message of such a connection must be `initialize` with it.
       */
      token: z.string().max(1000).optional(),
      /** What the client handles; defaults in `capabilities.ts`. */
      capabilities: ClientCapabilitiesSchema.optional(),
    }),
    result: z.object({
      serverInfo: z.object({ name: z.string(), version: z.string() }),
      protocolVersion: z.number().int(),
      capabilities: ServerCapabilitiesSchema,
    }),
  },
  ...conversationMethods,
  ...sessionMethods,
  ...pluginMethods,
  'executors/list': {
    params: z.object({}),
    result: z.object({ executors: z.array(z.object({ name: z.string(), kind: z.enum(['local', 'ssh', 'virtual']) })) }),
  },
  /**
   * The model catalog: configured models, plus those the providers list when the server
   * discovers them (cached; `refresh: true` asks the providers again).
   */
  'models/list': {
    params: z.object({ refresh: z.boolean().optional() }),
    result: z.object({
      models: z.array(ModelInfoSchema),
      defaultModel: z.string().optional(),
      /** Providers whose model list could not be read (their configured models are still listed). */
      warnings: z.array(z.string()).optional(),
      /** When the providers were last asked, ms since the epoch (absent without discovery). */
      discoveredAt: z.number().optional(),
    }),
  },
  /** Answers an approval request (alternative to answering the server's `approval/request`). */
  'approval/respond': {
    params: z.object({
      conversationId: conversationIdParam,
      approvalId: approvalIdParam,
      decision: ApprovalDecisionSchema,
      message: z.string().optional(),
      /** With `allow_prefix`: the words to allow (default: the request's `proposedPrefix`). */
      prefix: z.array(z.string().min(1)).min(1).optional(),
      /**
       * True when no person decided: the client answered by its own rule (e.g. `openvaala exec`
       * without a terminal denies every call that needs approval). The model is told so instead
       * of being told the user decided.
       */
      automatic: z.boolean().optional(),
    }),
    result: z.object({
      /** False when the request was already answered (by another client) or is gone. */
      accepted: z.boolean(),
    }),
  },
  'config/get': {
    params: z.object({}),
    result: z.object({
      /** The configuration in force, by file key, with secrets replaced by `***`. */
      configuration: z.record(z.string(), z.unknown()),
      /** The last reload's problems, when it failed (the configuration above stays in force). */
      error: z.string().optional(),
    }),
  },
  /** Edits configuration files (comments kept), loads the result, restores the files if it fails. */
  'config/update': {
    params: z.object({
      changes: z
        .array(
          z.object({
            file: z.enum(['providers', 'agents', 'mcp', 'hooks', 'executors', 'server']),
            path: z.array(z.union([z.string(), z.number().int().nonnegative()])).min(1),
            value: z.unknown().optional(),
            remove: z.boolean().optional(),
          }),
        )
        .min(1),
    }),
    result: z.object({ configuration: z.record(z.string(), z.unknown()) }),
  },
  'config/reload': {
    params: z.object({}),
    result: z.object({ ok: z.boolean(), error: z.string().optional(), notes: z.array(z.string()).optional() }),
  },
  /**
   * The server process: its pid, version, configuration directory, whether work is running,
   * and which of the named environment variables it has (never their values), so a client can
   * tell that a server started earlier lacks a key the client's shell now has.
   */
  'server/status': {
    params: z.object({
      /** Environment variable names to check (e.g. those `providers.yaml` references with `env:`). */
      environment: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')).max(100).optional(),
    }),
    result: z.object({
      pid: z.number().int(),
      version: z.string(),
      configDir: z.string(),
      /** True while a turn runs or a session has queued work. */
      busy: z.boolean(),
      /** For each name asked: true when the variable is set and not empty in the server's environment. */
      environment: z.record(z.string(), z.boolean()),
    }),
  },
  'items/list': {
    params: z.object({
      conversationId: conversationIdParam,
      sessionId: sessionIdParam.optional(),
      direction: z.enum(['forward', 'backward']).optional(),
      /** Exclusive seq cursor: forward reads after it, backward reads before it. */
      cursor: z.number().int().nonnegative().optional(),
      limit: z.number().int().min(1).max(1000).optional(),
    }),
    result: z.object({ items: z.array(StoredItemSchema), nextCursor: z.number().int().optional() }),
  },
  ...lifecycleMethods,
  ...conversationTransferMethods,
  ...turnControlMethods,
  ...agentMethods,
  ...workspaceMethods,
  ...workspaceGitMethods,
  ...browserMethods,
  ...scheduleMethods,
  ...notificationMethods,
  ...worktreeMethods,
  ...userInputMethods,
  ...clientFileMethods,
  ...clientCommandMethods,
  ...platformIdentityMethods,
  ...projectMethods,
  ...costMethods,
} as const;

/** Server-to-client notifications: name → params schema. */
export const notifications = {
  /** `seq`: of the state's entry in `metadata.jsonl` (the last one written, when the write failed); the same for `session/updated` and `turn/*`. */
  /**
   * To a conversation's subscribers, with the `seq` of its `metadata.jsonl` entry; on the list
   * feed (`conversations/subscribe`), which follows the index, with `summary` and no `seq`.
   */
  'conversation/updated': z.object({ conversation: ConversationSchema, seq: metadataSeq.optional(), summary: ConversationSummarySchema.optional() }),
  'session/updated': z.object({ conversationId, session: SessionSchema, seq: metadataSeq }),
  'turn/started': z.object({ conversationId, turn: TurnSchema, seq: metadataSeq }),
  'turn/completed': z.object({ conversationId, turn: TurnSchema, seq: metadataSeq }),
  /** An item began; `item` holds what is known so far (its kind and ids). */
  'item/started': z.object({
    conversationId,
    sessionId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    kind: z.string(),
    /** The session log's last stored seq when the item began. */
    seq: z.number().int().nonnegative(),
    /** Partial fields (tool name and arguments for tool calls). */
    partial: z.record(z.string(), z.unknown()),
  }),
  /** Streaming progress of an item in progress: assistant text, reasoning text or tool output. */
  'item/delta': z.object({
    conversationId,
    sessionId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    /** The item's kind (as in its `item/started`). */
    kind: z.string(),
    /** The session log's last stored seq when the delta was sent. */
    seq: z.number().int().nonnegative(),
    delta: ItemDeltaSchema,
  }),
  /** The configuration was reloaded or changed (`ok`), or a reload failed and the previous one stays (`error`). */
  /** After a reload or update: `ok`, every problem (`error`), and what applies only later (`notes`). */
  'config/updated': z.object({ ok: z.boolean(), error: z.string().optional(), notes: z.array(z.string()).optional() }),
  'approval/requested': z.object({ conversationId, approval: ApprovalRequestSchema }),
  'approval/resolved': z.object({
    conversationId,
    approvalId: z.string(),
    sessionId: z.string(),
    turnId: z.string(),
    callId: z.string(),
    itemId: z.string(),
    decision: ApprovalDecisionSchema,
    /** `client:<client name>` of the connection that decided, or `interruption`. */
    decidedBy: z.string(),
  }),
  /**
   * A model call of a running turn failed with a transient error (429, 5xx, a dropped
   * connection or a stalled stream, a transient error event) and will be retried after
   * `delayMs` ms. When the failed attempt had streamed text or reasoning, those items were
   * completed just before with status `failed` (cut off) and the retry streams into new items.
   * Nothing is stored for the notification itself; the turn's final failure, if any, is a
   * `model_error` item.
   */
  'turn/retrying': z.object({
    conversationId,
    sessionId: z.string(),
    turnId: z.string(),
    /** The retry about to be made, from 1. */
    attempt: z.number().int().positive(),
    maxRetries: z.number().int().nonnegative(),
    /** Wait before the retry, ms (the provider's `Retry-After` when it gave one). */
    delayMs: z.number().nonnegative(),
    /** HTTP status of the failure; null for a connection failure. */
    httpStatus: z.number().int().nullable(),
    /** The provider's message. */
    message: z.string(),
  }),
  /**
   * Something the turn goes on without, that the user should know: an MCP server that could not
   * be started (its tools are not offered this turn; it is tried again at the next turn),
   * steering input a `user_prompt_submit` hook refused (the turn goes on without it), a skill
   * whose `SKILL.md` is invalid (left out of the turn), or a project's `.openvaala/plugins.yaml`
   * that does not validate (the user's plugin settings apply instead). Said once per turn per
   * cause; nothing is stored for it (the server log has it too).
   */
  'turn/warning': z.object({
    conversationId,
    sessionId: z.string(),
    turnId: z.string(),
    /**
     * What it is about: `mcp_server` (the MCP server `name` did not start), `hook` (a hook of
     * the event `name` refused steering input), `skill` (the skill file `name` was skipped) or
     * `plugin` (the project's plugin settings file `name` was ignored).
     */
    source: z.enum(['mcp_server', 'hook', 'skill', 'plugin']),
    /** The MCP server's name, the hook event (`user_prompt_submit`), or the file's absolute path. */
    name: z.string(),
    /**
     * The warning in words, naming the server or hook and the cause (e.g. `MCP server "files"
     * could not be started: command "npx-typo" was not found; …`, or `steering input in_… was not
     * given to the turn: it was refused by the user_prompt_submit hook "screen.sh": …`).
     */
    message: z.string(),
  }),
  /** An item was completed and stored at `seq` in its session's log. */
  'item/completed': z.object({ conversationId, sessionId: z.string(), seq: z.number().int().positive(), item: ItemSchema }),
  ...lifecycleNotifications,
  ...turnControlNotifications,
  ...planNotifications,
  ...workspaceNotifications,
  ...userInputNotifications,
  ...costNotifications,
} as const;

/**
 * Requests the server sends to clients (JSON-RPC requests in the other direction): name →
 * params and the result the client answers with.
 */
export const serverRequests = {
  /** Sent to every attached client when a tool call needs approval; the first answer wins. */
  'approval/request': {
    params: ApprovalRequestSchema,
    result: z.object({
      decision: ApprovalDecisionSchema,
      message: z.string().optional(),
      /** With `allow_prefix`: the words to allow (default: the request's `proposedPrefix`). */
      prefix: z.array(z.string().min(1)).min(1).optional(),
      /**
       * True when no person decided: the client answered by its own rule (e.g. `openvaala exec`
       * without a terminal denies every call that needs approval). The model is told so instead
       * of being told the user decided.
       */
      automatic: z.boolean().optional(),
    }),
  },
  ...userInputServerRequests,
  ...clientFileServerRequests,
  ...clientCommandServerRequests,
} as const;

/** A request method name. */
export type MethodName = keyof typeof methods;
/** The params of a method. */
export type MethodParams<M extends MethodName> = z.infer<(typeof methods)[M]['params']>;
/** The result of a method. */
export type MethodResult<M extends MethodName> = z.infer<(typeof methods)[M]['result']>;
/** A notification name. */
export type NotificationName = keyof typeof notifications;
/** The params of a notification. */
export type NotificationParams<N extends NotificationName> = z.infer<(typeof notifications)[N]>;
/** Any notification, as a tagged union (`{ method, params }`). */
export type AnyNotification = { [N in NotificationName]: { method: N; params: NotificationParams<N> } }[NotificationName];

/** Whether a string names a request method of the protocol. */
export function isMethodName(name: string): name is MethodName {
  return Object.prototype.hasOwnProperty.call(methods, name);
}
