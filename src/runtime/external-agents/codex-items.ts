/**
 * Codex app-server thread items and approval requests as OpenVaala items and approvals
 * (codex-app-server v2 schema: `ThreadItem`, `item/*` notifications,
 * `item/commandExecution/requestApproval`, `item/fileChange/requestApproval`). Agent messages
 * and reasoning stream as deltas; command executions, file changes, MCP and client tool calls,
 * web searches and image views become `tool_call` items (with command, file-change or MCP
 * details, and the output each produced); `turn/plan/updated` becomes a `plan` item.
 */
import path from 'node:path';
import type { FileChange, ToolDetails } from '../../protocol/index.js';
import type { PlanStep } from '../../protocol/plans.js';
import { isRecord } from '../../config/yaml-file.js';
import { toToolResult, type McpCallResult } from '../../mcp/tool-result.js';
import { unifiedDiff } from '../../tools/unified-diff.js';
import type { TurnContext } from '../turn-runner.js';
import type { ExternalTurnItems } from './turn-items.js';

/** The fields of Codex thread items read here (the rest is ignored). */
export interface CodexItem {
  type: string;
  id: string;
  text?: string;
  summary?: string[];
  content?: string[];
  command?: string;
  cwd?: string;
  status?: string;
  aggregatedOutput?: string | null;
  exitCode?: number | null;
  durationMs?: number | null;
  changes?: { path: string; kind: { type: 'add' | 'delete' | 'update'; move_path?: string | null }; diff: string }[];
  server?: string;
  tool?: string;
  arguments?: unknown;
  /** `mcpToolCall`: the server's result, or the failure. */
  result?: { content?: unknown[]; structuredContent?: unknown } | null;
  error?: { message?: string } | null;
  /** `dynamicToolCall`: the client tool's output and whether it succeeded. */
  contentItems?: { type: string; text?: string; imageUrl?: string }[] | null;
  success?: boolean | null;
  namespace?: string | null;
  /** `webSearch`: what was searched. */
  query?: string;
  /** `imageView`: the image looked at. */
  path?: string;
}

/** Codex's file changes as unified diffs relative to `cwd` (an added file's `diff` is its content). */
function fileChanges(changes: NonNullable<CodexItem['changes']>, cwd: string): FileChange[] {
  return changes.map((change) => {
    const relative = path.isAbsolute(change.path) ? path.relative(cwd, change.path) : change.path;
    const movePath = change.kind.move_path ? (path.isAbsolute(change.kind.move_path) ? path.relative(cwd, change.kind.move_path) : change.kind.move_path) : undefined;
    if (change.kind.type === 'add') return { path: relative, kind: 'add', unifiedDiff: unifiedDiff(null, change.diff, relative) };
    if (change.kind.type === 'delete') return { path: relative, kind: 'delete', unifiedDiff: unifiedDiff(change.diff, null, relative) };
    return { path: relative, kind: movePath ? 'move' : 'update', ...(movePath ? { movePath } : {}), unifiedDiff: change.diff };
  });
}

/** The tool call an item stands for: name, arguments and details; undefined for items that are not tool calls. */
function toolCallOf(item: CodexItem, cwd: string): { toolName: string; arguments: unknown; details?: ToolDetails } | undefined {
  if (item.type === 'commandExecution') {
    const command = item.command ?? '';
    const done = item.status !== undefined && item.status !== 'inProgress';
    return {
      toolName: 'exec_command',
      arguments: { command },
      details: {
        kind: 'command',
        command,
        cwd: item.cwd ?? cwd,
        ...(done ? { exitCode: item.exitCode ?? null, output: item.aggregatedOutput ?? '', ...(item.durationMs != null ? { durationMs: item.durationMs } : {}) } : {}),
      },
    };
  }
  if (item.type === 'fileChange') {
    const changes = fileChanges(item.changes ?? [], cwd);
    return { toolName: 'apply_patch', arguments: { changes: changes.map((change) => change.path) }, details: { kind: 'fileChange', changes } };
  }
  if (item.type === 'mcpToolCall') return { toolName: `mcp__${item.server ?? 'server'}__${item.tool ?? 'tool'}`, arguments: item.arguments ?? {}, details: { kind: 'mcp', server: item.server ?? '', tool: item.tool ?? '' } };
  if (item.type === 'dynamicToolCall') return { toolName: item.namespace ? `${item.namespace}__${item.tool ?? 'tool'}` : (item.tool ?? 'tool'), arguments: item.arguments ?? {} };
  if (item.type === 'webSearch') return { toolName: 'web_search', arguments: { query: item.query ?? '' } };
  if (item.type === 'imageView') return { toolName: 'view_image', arguments: { path: item.path ?? '' } };
  return undefined;
}

/** Items that end without a status: done when they complete. */
const STATUSLESS = new Set(['webSearch', 'imageView']);

/**
 * What a finished tool item produced, as the call's output: the command's output, an MCP
 * result's text (images and other blocks as placeholders, `toToolResult`) or its error, a
 * client tool's texts and image placeholders, what was searched or viewed.
 */
function outputOf(item: CodexItem): { output?: string; failed?: boolean } {
  if (item.type === 'mcpToolCall') {
    if (item.error?.message) return { output: item.error.message, failed: true };
    if (item.result) {
      const result = toToolResult({ content: (item.result.content ?? []) as NonNullable<McpCallResult['content']>, ...(isRecord(item.result.structuredContent) ? { structuredContent: item.result.structuredContent } : {}) });
      return { output: result.output };
    }
  }
  if (item.type === 'dynamicToolCall' && item.contentItems) {
    const output = item.contentItems.map((part) => (part.type === 'inputText' ? (part.text ?? '') : part.type === 'inputImage' ? `[image ${part.imageUrl?.startsWith('data:') ? (/^data:([^;,]+)/.exec(part.imageUrl)?.[1] ?? 'data') : (part.imageUrl ?? '')}]` : `[${part.type}]`)).join('\n');
    return { output, failed: item.success === false };
  }
  if (item.type === 'webSearch') return { output: `searched the web for: ${item.query ?? ''}` };
  if (item.type === 'imageView') return { output: `viewed the image ${item.path ?? ''}` };
  return { ...(item.aggregatedOutput != null ? { output: item.aggregatedOutput } : {}) };
}

/** `item/started`: announces a message, reasoning or tool call. */
export function itemStarted(item: CodexItem, items: ExternalTurnItems, context: TurnContext): void {
  if (item.type === 'agentMessage') items.appendText(item.id, 'assistant_message', item.text ?? '');
  else if (item.type === 'reasoning') items.appendText(item.id, 'reasoning', '');
  else {
    const call = toolCallOf(item, context.cwd);
    if (call) items.startToolCall(item.id, call);
  }
}

/** `item/completed`: stores the item (a user message is the session's own, recorded already). */
export async function itemCompleted(item: CodexItem, items: ExternalTurnItems, context: TurnContext): Promise<void> {
  if (item.type === 'agentMessage') return items.finishText(item.id, 'assistant_message', item.text ?? '');
  // Codex gives the summary in parts and, where the model sends it, the raw reasoning as `content`.
  if (item.type === 'reasoning') return items.finishReasoning(item.id, item.summary ?? [], item.content && item.content.length > 0 ? item.content.join('\n\n') : undefined);
  const call = toolCallOf(item, context.cwd);
  if (!call) return;
  items.startToolCall(item.id, call);
  const produced = outputOf(item);
  const completed = item.status === 'completed' || (item.status === undefined && STATUSLESS.has(item.type));
  const status = completed && !produced.failed ? 'completed' : 'failed';
  const declined = item.status === 'declined';
  const output = produced.output ?? (declined ? 'the user declined this call' : undefined);
  await items.finishToolCall(item.id, {
    status,
    ...(output != null ? { output } : {}),
    ...(item.type === 'commandExecution' ? { exitCode: item.exitCode ?? null } : {}),
    ...(call.details ? { details: call.details } : {}),
    ...(item.durationMs != null ? { durationMs: item.durationMs } : {}),
  });
}

/** A delta notification (`item/agentMessage/delta`, reasoning text, command output); false when the method is not one. */
export function applyDelta(method: string, params: { itemId: string; delta: string; summaryIndex?: number }, items: ExternalTurnItems): boolean {
  switch (method) {
    case 'item/agentMessage/delta':
      items.appendText(params.itemId, 'assistant_message', params.delta);
      return true;
    case 'item/reasoning/summaryTextDelta':
      items.appendText(params.itemId, 'reasoning', params.delta, typeof params.summaryIndex === 'number' ? params.summaryIndex : 0);
      return true;
    case 'item/reasoning/textDelta':
      items.appendRawReasoning(params.itemId, params.delta);
      return true;
    case 'item/commandExecution/outputDelta':
      items.toolOutput(params.itemId, params.delta);
      return true;
    default:
      return false;
  }
}

/** `turn/plan/updated` steps as plan steps (`inProgress` → `in_progress`). */
export function planSteps(plan: { step: string; status: string }[]): PlanStep[] {
  return plan.filter((entry) => entry.step.trim() !== '').map((entry) => ({ step: entry.step, status: entry.status === 'inProgress' ? 'in_progress' : entry.status === 'completed' ? 'completed' : 'pending' }));
}
