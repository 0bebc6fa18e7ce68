/**
 * OpenVaala items as Codex `ThreadItem`s (docs/protocol.md, "Mapping to Codex app-server",
 * item kinds): user and assistant messages, reasoning, tool calls by their typed details
 * (command → `commandExecution`, file changes → `fileChange` with unified diffs, MCP →
 * `mcpToolCall`, subagents → `collabAgentToolCall`, any other tool → `dynamicToolCall`),
 * plans, compaction summaries. Kinds with no Codex counterpart map to nothing (`undefined`).
 */
import path from 'node:path';
import { toCodexId } from '../../protocol/codex-ids.js';
import type { ContentPart, Item, ItemOf } from '../../protocol/index.js';
import type { SubagentState, ToolDetails } from '../../protocol/tool-details.js';
import { toolCallOutcome } from '../../protocol/tool-call-outcome.js';
import { shellQuote } from '../../shell-quote.js';

/** A Codex `ThreadItem` (its `type` and the fields of that variant). */
export type CodexThreadItem = { type: string; id: string } & Record<string, unknown>;

/** Where an item belongs: the Codex id of its session's thread (for subagent calls) and the conversation's working directory (file paths are absolute in Codex). */
export interface ItemPlace {
  sessionThreadId: string;
  cwd: string;
}

/**
 * A change's diff as Codex writes it (`FileUpdateChange.diff`): the new file's content for an
 * added file, the old content for a deleted one, the hunks (from the first `@@`, without the
 * `---` / `+++` header) for an update.
 */
export function codexDiffOf(kind: 'add' | 'delete' | 'update' | 'move', unifiedDiff: string): string {
  const lines = unifiedDiff.split('\n');
  const firstHunk = lines.findIndex((line) => line.startsWith('@@'));
  if (firstHunk === -1) return kind === 'add' || kind === 'delete' ? '' : unifiedDiff;
  const hunks = lines.slice(firstHunk);
  if (kind !== 'add' && kind !== 'delete') return hunks.join('\n');
  const sign = kind === 'add' ? '+' : '-';
  const content = hunks.filter((line) => line.startsWith(sign)).map((line) => line.slice(1));
  // "\ No newline at end of file" says the last line has no newline.
  return content.length === 0 ? '' : `${content.join('\n')}${hunks.some((line) => line.startsWith('\\')) ? '' : '\n'}`;
}

/**
 * A command line as Codex shows it: the program that runs it (the executors run each command
 * with `bash -c`), as Codex writes its own `bash -lc '…'`; clients unwrap it for display, and
 * `commandActions` carries the command itself.
 */
export function codexCommandOf(command: string): string {
  return `bash -c ${shellQuote(command)}`;
}

/** A change's path as Codex gives it: absolute (the runtime's are relative to the workspace root, which is the conversation's working directory). */
function absolutePath(cwd: string, file: string): string {
  return path.posix.isAbsolute(file) ? file : path.posix.join(cwd, file);
}

/** OpenVaala user content as Codex `UserInput`s (a file part becomes a `mention` of its path). */
export function userInputsOf(content: readonly ContentPart[]): Record<string, unknown>[] {
  return content.map((part) => {
    if (part.type === 'text') return { type: 'text', text: part.text, text_elements: [] };
    if (part.type === 'image') return { type: 'image', url: part.url };
    return { type: 'mention', name: part.name ?? part.path, path: part.path };
  });
}

/** A subagent's state as Codex's `CollabAgentStatus` (a failed last turn is `errored`, a closed agent `shutdown`). */
const CODEX_AGENT_STATUS: Record<SubagentState['status'], string> = { running: 'running', completed: 'completed', failed: 'errored', interrupted: 'interrupted', closed: 'shutdown' };

/** Codex's `agentsStates`: each subagent's state by its thread id. */
function agentsStatesOf(states: readonly SubagentState[] | undefined): Record<string, { status: string; message: null }> {
  return Object.fromEntries((states ?? []).map((state) => [toCodexId(state.sessionId), { status: CODEX_AGENT_STATUS[state.status], message: null }]));
}

function subagentTool(toolName: string): string {
  if (toolName === 'spawn_agent') return 'spawnAgent';
  if (toolName === 'wait_agent') return 'wait';
  if (toolName === 'close_agent') return 'closeAgent';
  return 'sendInput';
}

/**
 * Status of a finished tool call in Codex terms: a denied call (not run) is `declined` where
 * the variant has it; a command that exited non-zero or was killed, or a wait on a subagent
 * whose turn failed, is `failed`, as Codex reports them (`toolCallOutcome`).
 */
function finishedStatus(item: ItemOf<'tool_call'>, declinable: boolean): string {
  if (declinable && item.status !== 'completed' && item.output.includes(': not run: ')) return 'declined';
  return toolCallOutcome(item).state === 'succeeded' ? 'completed' : 'failed';
}

/**
 * A tool call as a Codex item. With `finished` undefined the call is in progress (from
 * `item/started`'s partial: `toolName`, `arguments`, `details` as far as known).
 */
function toolCallItem(id: string, toolName: string, args: unknown, details: ToolDetails | undefined, finished: ItemOf<'tool_call'> | undefined, place: ItemPlace): CodexThreadItem {
  if (details?.kind === 'command' || (!details && toolName === 'exec_command')) {
    const command = details?.kind === 'command' ? details.command : String((args as { command?: unknown } | undefined)?.command ?? '');
    return {
      type: 'commandExecution',
      id,
      command: codexCommandOf(command),
      cwd: details?.kind === 'command' ? details.cwd : '',
      processId: null,
      source: 'agent',
      status: finished ? finishedStatus(finished, true) : 'inProgress',
      commandActions: [{ type: 'unknown', command }],
      aggregatedOutput: finished ? (details?.kind === 'command' ? (details.output ?? finished.output) : finished.output) : null,
      exitCode: finished ? (details?.kind === 'command' ? (details.exitCode ?? null) : (finished.exitCode ?? null)) : null,
      durationMs: finished ? Math.round(finished.durationMs) : null,
    };
  }
  if (details?.kind === 'fileChange') {
    return {
      type: 'fileChange',
      id,
      changes: details.changes.map((change) => ({
        path: absolutePath(place.cwd, change.path),
        kind: change.kind === 'add' ? { type: 'add' } : change.kind === 'delete' ? { type: 'delete' } : { type: 'update', move_path: change.movePath ? absolutePath(place.cwd, change.movePath) : null },
        diff: codexDiffOf(change.kind, change.unifiedDiff),
      })),
      status: finished ? finishedStatus(finished, true) : 'inProgress',
    };
  }
  if (details?.kind === 'mcp') {
    const result = details.result as { content?: unknown[]; structuredContent?: unknown } | undefined;
    return {
      type: 'mcpToolCall',
      id,
      server: details.server,
      tool: details.tool,
      arguments: args ?? null,
      status: finished ? finishedStatus(finished, false) : 'inProgress',
      result: finished && !finished.isError ? { content: Array.isArray(result?.content) ? result.content : [{ type: 'text', text: finished.output }], structuredContent: result?.structuredContent ?? null } : null,
      error: finished?.isError ? { message: finished.output } : null,
      durationMs: finished ? Math.round(finished.durationMs) : null,
    };
  }
  if (details?.kind === 'subagent') {
    return {
      type: 'collabAgentToolCall',
      id,
      tool: subagentTool(toolName),
      status: finished ? (finished.status === 'interrupted' ? 'interrupted' : finishedStatus(finished, false)) : 'inProgress',
      senderThreadId: place.sessionThreadId,
      receiverThreadIds: details.sessionIds.map((sessionId) => toCodexId(sessionId)),
      agentsStates: agentsStatesOf(details.states),
    };
  }
  return {
    type: 'dynamicToolCall',
    id,
    tool: toolName,
    arguments: args ?? null,
    status: finished ? finishedStatus(finished, false) : 'inProgress',
    contentItems: finished ? [{ type: 'inputText', text: finished.output }] : null,
    success: finished ? !finished.isError : null,
    durationMs: finished ? Math.round(finished.durationMs) : null,
  };
}

/** The plan's steps as the text of a Codex `plan` item (one line per step, with its status). */
function planText(item: ItemOf<'plan'>): string {
  const marks = { pending: '[ ]', in_progress: '[~]', completed: '[x]' } as const;
  const lines = item.steps.map((step) => `${marks[step.status]} ${step.step}`);
  return [item.explanation, ...lines].filter((line) => line !== undefined && line !== '').join('\n');
}

/**
 * A stored item as a Codex `ThreadItem`, or undefined for kinds Codex has no item for
 * (approval, model/agent/executor changes, instructions, hook runs, interruptions, model
 * errors: the notification translator says what becomes of each).
 * @param place the item's session thread and working directory
 */
export function threadItemOf(item: Item, place: ItemPlace): CodexThreadItem | undefined {
  const id = toCodexId(item.id);
  switch (item.kind) {
    case 'user_message':
      return { type: 'userMessage', id, clientId: item.clientMessageId ?? null, content: userInputsOf(item.content) };
    case 'assistant_message':
      return { type: 'agentMessage', id, text: item.text, phase: null };
    case 'reasoning':
      return { type: 'reasoning', id, summary: item.summaryParts ?? (item.summary === '' ? [] : [item.summary]), content: item.rawText ? [item.rawText] : [] };
    case 'tool_call':
      return toolCallItem(id, item.toolName, item.arguments, item.details, item, place);
    case 'plan':
      return { type: 'plan', id, text: planText(item) };
    case 'context_summary':
      return { type: 'contextCompaction', id };
    default:
      return undefined;
  }
}

/**
 * The Codex item an `item/started` announces, from the runtime's kind and partial fields, or
 * undefined for kinds that are announced only when complete.
 */
export function startedThreadItemOf(itemId: string, kind: string, partial: Record<string, unknown>, place: ItemPlace): CodexThreadItem | undefined {
  const id = toCodexId(itemId);
  if (kind === 'assistant_message') return { type: 'agentMessage', id, text: '', phase: null };
  if (kind === 'reasoning') return { type: 'reasoning', id, summary: [], content: [] };
  if (kind === 'context_summary') return { type: 'contextCompaction', id };
  if (kind === 'tool_call') return toolCallItem(id, String(partial.toolName ?? ''), partial.arguments, partial.details as ToolDetails | undefined, undefined, place);
  return undefined;
}
