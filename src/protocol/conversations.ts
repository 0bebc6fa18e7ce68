/**
 * Conversation methods (SPEC §5): creating, updating, listing, reading and subscribing to
 * conversations. Spread into `methods` of `methods.ts`.
 */
import { z } from 'zod';
import { ConversationSchema, ConversationSummarySchema, LogDamageSchema, SessionSchema, TurnSchema } from './entities.js';
import { ApprovalPolicyParamSchema, McpServersParamSchema } from './conversation-context.js';
import { ClientMessageIdSchema, SessionHeadsSchema } from './turn-control.js';
import { conversationIdParam, cwdParam, idParam, sessionIdParam, workLocationParam } from './request-params.js';

/**
 * Longest conversation title, in UTF-16 code units as JavaScript counts them (an emoji counts
 * two): the cap of project names, so a title prints as a line a person can read.
 */
export const CONVERSATION_TITLE_MAX_LENGTH = 200;

const titleParam = z.string().max(CONVERSATION_TITLE_MAX_LENGTH, { error: (issue) => `at most ${CONVERSATION_TITLE_MAX_LENGTH} characters (got ${typeof issue.input === 'string' ? issue.input.length : '?'})` });

/**
 * A title made up by the server or a client (a directory's name, a fork's `(fork)`) cut so it
 * fits {@link CONVERSATION_TITLE_MAX_LENGTH}: where it has to be cut, whole characters are kept
 * (never half a surrogate pair) and `…` marks the cut, before `suffix`.
 * @param title the text to fit
 * @param suffix kept whole after the (cut) title, e.g. ` (fork)`
 */
export function fitConversationTitle(title: string, suffix = ''): string {
  if (title.length + suffix.length <= CONVERSATION_TITLE_MAX_LENGTH) return `${title}${suffix}`;
  const room = Math.max(0, CONVERSATION_TITLE_MAX_LENGTH - suffix.length - 1);
  let kept = '';
  for (const character of title) {
    if (kept.length + character.length > room) break;
    kept += character;
  }
  return `${kept}…${suffix}`;
}

/** The `conversation/*` request methods: name → params and result schemas. */
export const conversationMethods = {
  'conversation/create': {
    params: z.object({
      /** Absolute working directory on the executor (give this or `workLocation`). */
      cwd: cwdParam.optional(),
      /** Executor name; default `local`. */
      executor: z.string().optional(),
      /** Several executors with their working directories (the first is the default). */
      workLocation: workLocationParam.optional(),
      /** `provider/model`; default from configuration. */
      model: z.string().optional(),
      agent: z.string().optional(),
      /** At most `CONVERSATION_TITLE_MAX_LENGTH` (200) characters; default the working directory's name, cut to fit. */
      title: titleParam.optional(),
      /** The client's id for this request: a repeat answers the first result and creates nothing. */
      clientMessageId: ClientMessageIdSchema.optional(),
      /** MCP servers for this conversation only, each shaped like one entry of `mcp.yaml` `servers`. */
      mcpServers: McpServersParamSchema.optional(),
      /** Extra instructions for the model, recorded as an `instruction` item (source `client`). */
      instructions: z.string().min(1).optional(),
      /** Approval policy for this conversation only, over the agent's (`agents.yaml` shape). */
      approvalPolicy: ApprovalPolicyParamSchema.optional(),
      /** The project the conversation belongs to (platform layer); without cwd or workLocation it works in the project's workspace. */
      projectId: idParam('proj', 'project').optional(),
      /**
       * Work in a new git worktree and branch `openvaala/<short id>` of the repository holding
       * `cwd` (or the first work location entry), made on that executor from `baseBranch`
       * (default: the branch checked out there). The conversation's working directory becomes
       * the worktree (docs/protocol.md, "Worktrees").
       */
      worktree: z.object({ baseBranch: z.string().min(1).max(200).optional() }).strict().optional(),
    }).refine((params) => (params.cwd === undefined) !== (params.workLocation === undefined) || (params.projectId !== undefined && params.cwd === undefined && params.workLocation === undefined), { message: 'give either cwd (with an optional executor) or workLocation (or neither, with projectId: the project\'s workspace)', path: ['cwd'] }),
    result: z.object({ conversation: ConversationSchema, session: SessionSchema }),
  },
  /** Renames a conversation or changes its work location (recorded as `executor_change` at each session's next turn). */
  'conversation/update': {
    params: z.object({ conversationId: conversationIdParam, title: titleParam.min(1).optional(), workLocation: workLocationParam.optional() }),
    result: z.object({ conversation: ConversationSchema }),
  },
  'conversation/list': {
    params: z.object({
      limit: z.number().int().min(1).max(500).optional(),
      /** The `nextCursor` of the previous page, as returned. */
      cursor: z.string().min(1).max(2000).regex(/^[A-Za-z0-9_-]+$/, { message: 'not a cursor returned by conversation/list' }).optional(),
      /**
       * Only conversations whose title or a user or assistant message matches this full-text
       * query (SQLite FTS5 syntax: words, "quoted phrases", prefix*, AND, OR, NOT), in the
       * same order as without it.
       */
      query: z.string().min(1, 'the query is empty').max(1000, 'the query is over 1000 characters').optional(),
      /** Only conversations whose first working directory is exactly this. */
      cwd: z.string().min(1).optional(),
      /** Only conversations whose first (default) executor is this. */
      executor: z.string().min(1).optional(),
      /** true: only archived conversations; false (default): only the others. */
      archived: z.boolean().optional(),
      /** Newest first by `updated` (default) or `created` time; a cursor continues the sort it was made for. A `query` lists by `updated` only. */
      sort: z.enum(['created', 'updated']).optional(),
    }),
    result: z.object({ conversations: z.array(ConversationSummarySchema), nextCursor: z.string().optional() }),
  },
  'conversation/get': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({
      conversation: ConversationSchema,
      sessions: z.array(SessionSchema),
      turns: z.array(TurnSchema),
      /** Damaged lines and entries of the conversation's logs that were skipped (at most 100); absent when there are none. */
      damage: z.array(LogDamageSchema).optional(),
    }),
  },
  'conversation/subscribe': {
    params: z.object({
      conversationId: conversationIdParam,
      /**
       * Per session id, the last item seq the client already has. Stored items after it are
       * sent as `item/completed` before live events; omitted sessions are sent from the start.
       * `"head"`: no stored items, only what happens from now (and the items in progress).
       */
      afterSeq: z.union([z.literal('head'), z.record(sessionIdParam, z.number().int().nonnegative())]).optional(),
      /**
       * Per session id, the `historyEpoch` the client's items belong to. Where it is older than
       * the session's (a rewind happened since), or omitted for a rewound session, the replay
       * starts no later than the rewind point, so no item after it is skipped.
       */
      historyEpoch: z.record(sessionIdParam, z.number().int().nonnegative()).optional(),
    }),
    result: z.object({
      conversation: ConversationSchema,
      sessions: z.array(SessionSchema),
      turns: z.array(TurnSchema),
      /** Per session, the seq of its last stored item when the subscription began. */
      heads: SessionHeadsSchema,
      /** Seq of the last `metadata.jsonl` entry written when the subscription began. */
      metadataSeq: z.number().int().nonnegative(),
      /** Damaged lines and entries of the conversation's logs that were skipped (at most 100); absent when there are none. */
      damage: z.array(LogDamageSchema).optional(),
    }),
  },
  'conversation/unsubscribe': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({}),
  },
};
