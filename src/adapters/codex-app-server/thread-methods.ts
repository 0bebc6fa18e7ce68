/**
 * Codex `thread/*` requests on the runtime protocol: a thread is a conversation (its root
 * session). `thread/start` → `conversation/create`, `resume` → `conversation/subscribe`, `fork`
 * → `conversation/fork`, `read` → `conversation/get` (+ `items/list`), `list` →
 * `conversation/list`, `archive` / `unarchive`, `name/set` → `conversation/update`, `rollback`
 * and `revert` → `conversation/rewind`. Param shapes: v2 schema of codex-cli 0.171.0.
 */
import { z } from 'zod';
import { toCodexId } from '../../protocol/codex-ids.js';
import { fitConversationTitle } from '../../protocol/conversations.js';
import type { MethodResult } from '../../protocol/index.js';
import { approvalPolicyOf, REPORTED_SANDBOX, reportedApprovalPolicy, threadOf, threadOfSummary } from './entities.js';
import { openVaalaId, type CodexMethodContext, type CodexMethodHandler } from './method-context.js';
import { codexTurns, liveTurns, sessionItems } from './thread-history.js';
import { CodexErrorCodes, CodexRpcError, parseParams } from './wire.js';

const nullableString = z.string().nullable().optional();
const threadIdParams = z.object({ threadId: z.string() });

const threadStartParams = z.object({
  cwd: nullableString,
  model: nullableString,
  modelProvider: nullableString,
  approvalPolicy: z.unknown().optional(),
  sandbox: nullableString,
  developerInstructions: nullableString,
  baseInstructions: nullableString,
});

/**
 * The `provider/model` id of a Codex model name: as given when it has a provider, else the
 * catalog model whose id ends in `/name` (of `modelProvider` when given).
 * @throws CodexRpcError -32602 naming the model when the catalog has none such
 */
export async function resolveModel(method: string, context: CodexMethodContext, model: string | null | undefined, provider?: string | null): Promise<string | undefined> {
  if (!model) return undefined;
  if (model.includes('/')) return model;
  const { models } = await context.runtime.request('models/list', {});
  const found = models.find((candidate) => candidate.id.endsWith(`/${model}`) && (!provider || candidate.provider === provider));
  if (!found) throw new CodexRpcError(CodexErrorCodes.invalidParams, `${method}: params.model: no configured model named ${JSON.stringify(model)}; known: ${models.map((candidate) => candidate.id).join(', ') || 'none'}`);
  return found.id;
}

type Snapshot = MethodResult<'conversation/subscribe'> | MethodResult<'conversation/get'>;

/** The settings part of `thread/start`, `thread/resume` and `thread/fork` answers. */
function threadSettings(snapshot: Snapshot, approvalPolicy: unknown, turns?: object[]): Record<string, unknown> {
  const rootSession = snapshot.sessions.find((session) => session.id === snapshot.conversation.rootSessionId);
  const thread = threadOf({ conversation: snapshot.conversation, ...(rootSession ? { rootSession } : {}), ...(turns ? { turns } : {}) });
  return {
    thread,
    model: rootSession?.model ?? '',
    modelProvider: thread.modelProvider,
    serviceTier: null,
    cwd: thread.cwd,
    instructionSources: [],
    approvalPolicy: reportedApprovalPolicy(approvalPolicy),
    approvalsReviewer: 'user',
    sandbox: REPORTED_SANDBOX,
    reasoningEffort: null,
    disabledPluginIds: [],
  };
}

const threadStart: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/start', threadStartParams, raw);
  const model = await resolveModel('thread/start', context, params.model, params.modelProvider);
  // Without a policy, a read-only sandbox is what the client asked for; OpenVaala has no sandbox,
  // so the nearest safe reading is to ask before every call that changes something.
  const approvalPolicy = approvalPolicyOf(params.approvalPolicy ?? (params.sandbox === 'read-only' ? 'on-request' : undefined));
  const instructions = [params.baseInstructions, params.developerInstructions].filter((text): text is string => typeof text === 'string' && text !== '').join('\n\n');
  const created = await context.runtime.request('conversation/create', {
    cwd: params.cwd ?? context.cwd,
    ...(model ? { model } : {}),
    ...(approvalPolicy ? { approvalPolicy } : {}),
    ...(instructions ? { instructions } : {}),
  });
  const snapshot = await context.follow(created.conversation.id);
  const result = threadSettings(snapshot, params.approvalPolicy);
  // Codex announces the new thread after answering; the notification queues behind the answer.
  context.notify('thread/started', { thread: result.thread as Record<string, unknown> });
  return result;
};

const threadResume: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/resume', threadIdParams.extend({ approvalPolicy: z.unknown().optional(), excludeTurns: z.boolean().optional() }), raw);
  const conversationId = openVaalaId('thread/resume', 'threadId', params.threadId, 'conv');
  const snapshot = await context.follow(conversationId);
  const turns = params.excludeTurns ? [] : await codexTurns(context.runtime, snapshot.conversation, snapshot.turns);
  return threadSettings(snapshot, params.approvalPolicy, turns);
};

/**
 * Without `lastTurnId` Codex forks the whole thread: here, up to the last item stored in its
 * root session (`conversation/fork` needs a cut, as `openvaala conversations fork` gives it).
 * @throws CodexRpcError invalid params when the thread has no stored item yet (nothing to copy)
 */
async function wholeThreadCut(context: CodexMethodContext, threadId: string, conversationId: string): Promise<{ fromItemId: string }> {
  const snapshot = await context.runtime.request('conversation/get', { conversationId });
  const page = await context.runtime.request('items/list', { conversationId, sessionId: snapshot.conversation.rootSessionId, direction: 'backward', limit: 1 });
  const last = page.items[0];
  if (!last) throw new CodexRpcError(CodexErrorCodes.invalidParams, `thread/fork: params.threadId: thread ${threadId} has no turns yet, nothing to fork`);
  return { fromItemId: last.item.id };
}

const threadFork: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/fork', threadIdParams.extend({ lastTurnId: nullableString, approvalPolicy: z.unknown().optional() }), raw);
  const conversationId = openVaalaId('thread/fork', 'threadId', params.threadId, 'conv');
  const cut = params.lastTurnId ? { lastTurnId: openVaalaId('thread/fork', 'lastTurnId', params.lastTurnId, 'turn') } : await wholeThreadCut(context, params.threadId, conversationId);
  const forked = await context.runtime.request('conversation/fork', { conversationId, ...cut });
  const snapshot = await context.follow(forked.conversation.id);
  const turns = await codexTurns(context.runtime, snapshot.conversation, snapshot.turns);
  const result = threadSettings(snapshot, params.approvalPolicy, turns);
  context.notify('thread/started', { thread: { ...(result.thread as Record<string, unknown>), turns: [] } });
  return result;
};

const threadRead: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/read', threadIdParams.extend({ includeTurns: z.boolean().optional() }), raw);
  const conversationId = openVaalaId('thread/read', 'threadId', params.threadId, 'conv');
  const snapshot = await context.runtime.request('conversation/get', { conversationId });
  const rootSession = snapshot.sessions.find((session) => session.id === snapshot.conversation.rootSessionId);
  const turns = params.includeTurns ? await codexTurns(context.runtime, snapshot.conversation, snapshot.turns) : [];
  return { thread: threadOf({ conversation: snapshot.conversation, ...(rootSession ? { rootSession } : {}), turns }) };
};

const threadListParams = z.object({
  cursor: nullableString,
  limit: z.number().int().min(1).nullable().optional(),
  archived: z.boolean().nullable().optional(),
  cwd: z.union([z.string(), z.array(z.string())]).nullable().optional(),
  searchTerm: nullableString,
});

const threadList: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/list', threadListParams, raw);
  // OpenVaala filters by one working directory; with several, the first is used and the rest are filtered here.
  const cwds = params.cwd === null || params.cwd === undefined ? [] : Array.isArray(params.cwd) ? params.cwd : [params.cwd];
  const listed = await context.runtime.request('conversation/list', {
    limit: Math.min(params.limit ?? 50, 500),
    ...(params.cursor ? { cursor: params.cursor } : {}),
    ...(params.archived ? { archived: true } : {}),
    ...(cwds.length === 1 ? { cwd: cwds[0]! } : {}),
    ...(params.searchTerm ? { query: params.searchTerm } : {}),
  });
  const conversations = cwds.length > 1 ? listed.conversations.filter((summary) => cwds.includes(summary.cwd)) : listed.conversations;
  return { data: conversations.map(threadOfSummary), nextCursor: listed.nextCursor ?? null };
};

const threadArchive: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/archive', threadIdParams, raw);
  await context.runtime.request('conversation/archive', { conversationId: openVaalaId('thread/archive', 'threadId', params.threadId, 'conv') });
  context.notify('thread/archived', { threadId: params.threadId });
  return {};
};

const threadUnarchive: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/unarchive', threadIdParams, raw);
  const { conversation } = await context.runtime.request('conversation/unarchive', { conversationId: openVaalaId('thread/unarchive', 'threadId', params.threadId, 'conv') });
  context.notify('thread/unarchived', { threadId: params.threadId });
  return { thread: threadOf({ conversation }) };
};

const threadNameSet: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/name/set', threadIdParams.extend({ name: z.string() }), raw);
  const conversationId = openVaalaId('thread/name/set', 'threadId', params.threadId, 'conv');
  // Codex clients know no cap on thread names (they may name a thread after its first prompt): cut to fit rather than fail.
  const title = fitConversationTitle(params.name);
  await context.runtime.request('conversation/update', { conversationId, title });
  // A followed thread learns its new name from the runtime's `conversation/updated`, like every other client.
  if (!context.followed().includes(conversationId)) context.notify('thread/name/updated', { threadId: params.threadId, threadName: title });
  return {};
};

/**
 * Drops the turn `turnId` and every later one of the root session (`conversation/rewind` to the
 * last item before it), and answers with the thread as it is then.
 * @throws CodexRpcError -32602 when the turn is not one of the thread's, or is its first (a rewind keeps at least one item)
 */
async function rewindBefore(method: string, context: CodexMethodContext, conversationId: string, turnId: string): Promise<object> {
  const snapshot = await context.runtime.request('conversation/get', { conversationId });
  const rootSessionId = snapshot.conversation.rootSessionId;
  const items = await sessionItems(context.runtime, conversationId, rootSessionId);
  const first = items.findIndex((item) => item.turnId === turnId);
  if (first === -1) throw new CodexRpcError(CodexErrorCodes.invalidParams, `${method}: turn ${toCodexId(turnId)} has no items in thread ${toCodexId(conversationId)}`);
  if (first === 0) throw new CodexRpcError(CodexErrorCodes.invalidParams, `${method}: cannot drop the thread's first turn (start a new thread instead)`);
  await context.runtime.request('conversation/rewind', { conversationId, sessionId: rootSessionId, afterItemId: items[first - 1]!.id });
  const after = await context.runtime.request('conversation/get', { conversationId });
  const turns = await codexTurns(context.runtime, after.conversation, after.turns);
  const rootSession = after.sessions.find((session) => session.id === rootSessionId);
  return { thread: threadOf({ conversation: after.conversation, ...(rootSession ? { rootSession } : {}), turns }) };
}

/** `thread/rollback` (Codex clients before `thread/revert`): drops the last `numTurns` turns. */
const threadRollback: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/rollback', threadIdParams.extend({ numTurns: z.number().int().min(1) }), raw);
  const conversationId = openVaalaId('thread/rollback', 'threadId', params.threadId, 'conv');
  const snapshot = await context.runtime.request('conversation/get', { conversationId });
  const turns = liveTurns(snapshot.turns, snapshot.conversation.rootSessionId);
  const target = turns[turns.length - params.numTurns];
  if (!target) throw new CodexRpcError(CodexErrorCodes.invalidParams, `thread/rollback: params.numTurns: the thread has ${turns.length} turns, cannot drop ${params.numTurns}`);
  return rewindBefore('thread/rollback', context, conversationId, target.id);
};

/** `thread/revert` (codex-cli 0.171.0): drops `beforeTurnId` and every later turn. */
const threadRevert: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('thread/revert', threadIdParams.extend({ beforeTurnId: z.string() }), raw);
  const conversationId = openVaalaId('thread/revert', 'threadId', params.threadId, 'conv');
  return rewindBefore('thread/revert', context, conversationId, openVaalaId('thread/revert', 'beforeTurnId', params.beforeTurnId, 'turn'));
};

/** `thread/loaded/list`: the threads this connection follows (Codex's threads loaded in memory), as one page. */
const threadLoadedList: CodexMethodHandler = async (raw, context) => {
  parseParams('thread/loaded/list', z.object({ cursor: nullableString, limit: z.number().int().min(0).nullable().optional() }), raw);
  return Promise.resolve({ data: context.followed().map((conversationId) => toCodexId(conversationId)), nextCursor: null });
};

/** The `thread/*` handlers by method. */
export const threadMethods: Record<string, CodexMethodHandler> = {
  'thread/start': threadStart,
  'thread/resume': threadResume,
  'thread/fork': threadFork,
  'thread/read': threadRead,
  'thread/list': threadList,
  'thread/archive': threadArchive,
  'thread/unarchive': threadUnarchive,
  'thread/name/set': threadNameSet,
  'thread/rollback': threadRollback,
  'thread/revert': threadRevert,
  'thread/loaded/list': threadLoadedList,
};
