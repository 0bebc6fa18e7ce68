/**
 * OpenVaala tool calls as Agent Client Protocol tool calls
 * (https://agentclientprotocol.com/protocol/v1/tool-calls): the kind an editor picks its icon
 * by, a title, the files followed (`locations`), and the content shown — file changes as diffs,
 * otherwise the tool's output as text. Built from the typed `details` of `tool_call` items
 * (`src/protocol/tool-details.ts`).
 */
import path from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { toolCallOutcome, type FileChange, type ItemOf, type ToolDetails } from '../../protocol/index.js';

/** What is known of a call: its tool, arguments and details (at start, in an approval request, or completed). */
export interface ToolCallFacts {
  toolName: string;
  arguments: unknown;
  details?: ToolDetails | undefined;
}

/** The ACP tool kind of a call: from its details when it has them, else from its tool's name. */
export function toolKind(facts: ToolCallFacts): acp.ToolKind {
  switch (facts.details?.kind) {
    case 'command':
      return 'execute';
    case 'fileChange':
      return facts.details.changes.length > 0 && facts.details.changes.every((change) => change.kind === 'delete') ? 'delete' : facts.details.changes.every((change) => change.kind === 'move') && facts.details.changes.length > 0 ? 'move' : 'edit';
    case 'read':
    case 'list':
      return 'read';
    case 'search':
      return 'search';
    case 'mcp':
    case 'subagent':
      return 'other';
    default:
      break;
  }
  const name = facts.toolName;
  if (name === 'exec_command' || name === 'write_stdin' || name === 'kill_command') return 'execute';
  if (name === 'apply_patch') return 'edit';
  if (name === 'read_file' || name === 'list_dir') return 'read';
  if (name === 'glob' || name === 'grep') return 'search';
  if (name === 'update_plan') return 'think';
  if (/fetch|web/i.test(name)) return 'fetch';
  return 'other';
}

/** A short title for the call, as an editor shows it in the thread. */
export function toolTitle(facts: ToolCallFacts): string {
  const details = facts.details;
  switch (details?.kind) {
    case 'command':
      return details.command;
    case 'fileChange':
      return details.changes.length === 0 ? 'Edit files' : `Edit ${details.changes.map((change) => change.movePath ?? change.path).join(', ')}`;
    case 'read':
      return details.startLine !== undefined && details.endLine !== undefined ? `Read ${details.path} (lines ${details.startLine}–${details.endLine})` : `Read ${details.path}`;
    case 'list':
      return `List ${details.path}`;
    case 'search':
      return `${details.tool} ${details.pattern} in ${details.path}`;
    case 'mcp':
      return `${details.server}: ${details.tool}`;
    case 'subagent':
      return `${facts.toolName} (${details.sessionIds.length} ${details.sessionIds.length === 1 ? 'session' : 'sessions'})`;
    default:
      return facts.toolName;
  }
}

/** The absolute path of a change's file (`FileChange.path` is relative to the workspace root). */
function absolute(root: string, file: string): string {
  return path.posix.isAbsolute(file) ? file : path.posix.join(root, file);
}

/** The files a call reads or changes, for an editor's follow-along. */
export function toolLocations(facts: ToolCallFacts, root: string): acp.ToolCallLocation[] {
  const details = facts.details;
  switch (details?.kind) {
    case 'fileChange':
      return details.changes.map((change) => ({ path: absolute(root, change.movePath ?? change.path) }));
    case 'read':
      return [{ path: details.path, ...(details.startLine !== undefined ? { line: details.startLine } : {}) }];
    case 'list':
    case 'search':
      return [{ path: details.path }];
    default:
      return [];
  }
}

/**
 * A change's unified diff as the old and new text ACP's `diff` content carries: the lines of
 * each hunk with their context, hunks one after another. ACP asks for whole files; the hunks
 * are what the change is known by, and an editor shows them as the same diff.
 */
export function diffTexts(change: FileChange): { oldText: string | null; newText: string } {
  const oldLines: string[] = [];
  const newLines: string[] = [];
  let inHunk = false;
  for (const line of change.unifiedDiff.split('\n')) {
    if (line.startsWith('@@')) {
      inHunk = true;
      continue;
    }
    if (!inHunk || line.startsWith('\\')) continue;
    const marker = line[0];
    const text = line.slice(1);
    if (marker === ' ') {
      oldLines.push(text);
      newLines.push(text);
    } else if (marker === '-') oldLines.push(text);
    else if (marker === '+') newLines.push(text);
  }
  return { oldText: change.kind === 'add' ? null : oldLines.join('\n'), newText: change.kind === 'delete' ? '' : newLines.join('\n') };
}

/** The diffs of a call's file changes, as ACP tool call content. */
export function diffContent(facts: ToolCallFacts, root: string): acp.ToolCallContent[] {
  if (facts.details?.kind !== 'fileChange') return [];
  return facts.details.changes.map((change) => ({ type: 'diff', path: absolute(root, change.movePath ?? change.path), ...diffTexts(change) }));
}

/**
 * The ACP status of a completed call: `failed` when the tool failed or the command it ran
 * exited non-zero or was killed (`toolCallOutcome`), as agents reporting a shell call's
 * non-zero exit as an error do.
 */
export function completedStatus(item: ItemOf<'tool_call'>): acp.ToolCallStatus {
  return toolCallOutcome(item).state === 'succeeded' ? 'completed' : 'failed';
}

/** What a completed call shows: its diffs for file changes, else its output as text. */
export function completedContent(item: ItemOf<'tool_call'>, root: string): acp.ToolCallContent[] {
  const diffs = diffContent(item, root);
  if (diffs.length > 0 && !item.isError) return diffs;
  const output = item.details?.kind === 'command' && item.details.output !== undefined ? item.details.output : item.output;
  return [...diffs, ...(output ? [{ type: 'content' as const, content: { type: 'text' as const, text: output } }] : [])];
}

/** The `tool_call` update announcing a call (live, at its `item/started`, or replayed from its completed item). */
export function toolCallStart(itemId: string, facts: ToolCallFacts, root: string, status: acp.ToolCallStatus): acp.SessionUpdate {
  const locations = toolLocations(facts, root);
  const content = diffContent(facts, root);
  return {
    sessionUpdate: 'tool_call',
    toolCallId: itemId,
    title: toolTitle(facts),
    kind: toolKind(facts),
    status,
    rawInput: facts.arguments,
    ...(locations.length > 0 ? { locations } : {}),
    ...(content.length > 0 ? { content } : {}),
  };
}

/**
 * The `tool_call_update` finishing a call from its completed item. `terminalShown`: the call ran
 * in an editor terminal embedded in it, which keeps showing the output, so the content is left
 * as it is (ACP leaves fields a `tool_call_update` omits unchanged).
 */
export function toolCallEnd(item: ItemOf<'tool_call'>, root: string, terminalShown = false): acp.SessionUpdate {
  const locations = toolLocations(item, root);
  return {
    sessionUpdate: 'tool_call_update',
    toolCallId: item.id,
    status: completedStatus(item),
    title: toolTitle(item),
    kind: toolKind(item),
    ...(terminalShown ? {} : { content: completedContent(item, root) }),
    ...(locations.length > 0 ? { locations } : {}),
    rawOutput: { output: item.output, isError: item.isError, ...(item.exitCode !== undefined ? { exitCode: item.exitCode } : {}) },
  };
}
