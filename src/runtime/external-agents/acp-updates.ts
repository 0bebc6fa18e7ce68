/**
 * ACP `session/update` notifications and `session/request_permission` requests as OpenVaala
 * items and approvals (ACP schema v1: agentclientprotocol.com/protocol/prompt-turn,
 * /tool-calls, /agent-plan). Message and thought chunks stream into one assistant message or
 * reasoning item until something else arrives; tool calls become `tool_call` items with
 * command or file-change details; plans become `plan` items.
 */
import path from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import type { ToolDetails } from '../../protocol/index.js';
import type { PlanStep } from '../../protocol/plans.js';
import { base64Bytes } from '../../mcp/tool-result.js';
import { unifiedDiff } from '../../tools/unified-diff.js';
import type { ApprovalAnswer } from '../approvals/broker.js';
import type { TurnContext } from '../turn-runner.js';
import type { ExternalTurnItems } from './turn-items.js';

/**
 * The text of content blocks: text as it is, a link by its address, an embedded text resource
 * (a file's contents) under a line naming it, an image, audio or binary resource by a
 * placeholder naming its type and size.
 */
export function textOfBlocks(blocks: readonly acp.ContentBlock[] | null | undefined): string {
  return (blocks ?? []).map(textOfBlock).join('');
}

function textOfBlock(block: acp.ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'resource_link':
      return block.uri;
    case 'resource': {
      const resource = block.resource;
      if ('text' in resource) return `[contents of ${resource.uri}]\n${resource.text}`;
      return `[resource ${resource.uri}, ${resource.mimeType ?? 'binary'}, ${base64Bytes(resource.blob)} bytes]`;
    }
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    default:
      return `[${(block as { type: string }).type}]`;
  }
}

/** The output text of a tool call's content: text blocks and terminals' ids. */
function outputOf(content: readonly acp.ToolCallContent[] | null | undefined): string | undefined {
  if (!content || content.length === 0) return undefined;
  return content.map((part) => (part.type === 'content' ? textOfBlocks([part.content]) : part.type === 'terminal' ? `[terminal ${part.terminalId}]` : '')).join('');
}

/** The exit code an agent reports in `rawOutput` (`exitCode` or `exit_code`), if any. */
function exitCodeOf(rawOutput: unknown): number | null | undefined {
  if (typeof rawOutput !== 'object' || rawOutput === null) return undefined;
  const value = (rawOutput as Record<string, unknown>).exitCode ?? (rawOutput as Record<string, unknown>).exit_code;
  return typeof value === 'number' && Number.isInteger(value) ? value : value === null ? null : undefined;
}

/** The command line of an `execute` call: `rawInput.command` (string or words), else the title. */
function commandOf(call: Pick<acp.ToolCallUpdate, 'rawInput' | 'title'>): string {
  const input = call.rawInput as Record<string, unknown> | undefined;
  const command = input?.command ?? input?.cmd;
  if (typeof command === 'string') return command;
  if (Array.isArray(command)) return command.map(String).join(' ');
  return call.title ?? '';
}

/** Typed details of a tool call: a command for `execute`, file changes for diffs. */
export function detailsOf(call: Pick<acp.ToolCallUpdate, 'kind' | 'rawInput' | 'title' | 'content' | 'rawOutput'>, cwd: string, output?: string): ToolDetails | undefined {
  const diffs = (call.content ?? []).filter((part): part is acp.Diff & { type: 'diff' } => part.type === 'diff');
  if (diffs.length > 0) {
    return {
      kind: 'fileChange',
      changes: diffs.map((diff) => {
        const relative = path.isAbsolute(diff.path) ? path.relative(cwd, diff.path) : diff.path;
        const before = diff.oldText ?? null;
        return { path: relative, kind: before === null ? ('add' as const) : ('update' as const), unifiedDiff: unifiedDiff(before, diff.newText, relative) };
      }),
    };
  }
  if (call.kind === 'execute') {
    const exitCode = exitCodeOf(call.rawOutput);
    return { kind: 'command', command: commandOf(call), cwd, ...(exitCode !== undefined ? { exitCode } : {}), ...(output !== undefined ? { output } : {}) };
  }
  return undefined;
}

/** Applies one `session/update` of the running turn. */
export async function applySessionUpdate(update: acp.SessionUpdate, items: ExternalTurnItems, context: TurnContext): Promise<void> {
  switch (update.sessionUpdate) {
    case 'agent_message_chunk':
    case 'agent_thought_chunk': {
      const kind = update.sessionUpdate === 'agent_message_chunk' ? 'assistant_message' : 'reasoning';
      // Chunks carry no item id: a message ends when the other kind (or anything else) starts.
      await items.finishText(kind === 'assistant_message' ? 'thought' : 'message', kind === 'assistant_message' ? 'reasoning' : 'assistant_message');
      items.appendText(kind === 'assistant_message' ? 'message' : 'thought', kind, textOfBlocks([update.content]));
      return;
    }
    case 'tool_call': {
      await items.finishTexts();
      startCall(update, items, context);
      if (update.status === 'completed' || update.status === 'failed') await finishCall(update, items, context);
      return;
    }
    case 'tool_call_update': {
      await items.finishTexts();
      if (items.isFinished(update.toolCallId)) return;
      const call = startCall(update, items, context);
      const output = outputOf(update.content);
      if (update.status === 'completed' || update.status === 'failed') await finishCall(update, items, context);
      else if (output !== undefined && output.startsWith(call.output)) items.toolOutput(update.toolCallId, output.slice(call.output.length));
      return;
    }
    case 'plan': {
      await items.finishTexts();
      const steps: PlanStep[] = update.entries.filter((entry) => entry.content.trim() !== '').map((entry) => ({ step: entry.content, status: entry.status }));
      if (steps.length > 0) await context.setPlan({ steps });
      return;
    }
    default:
      // Echoed user messages (recorded by the session), commands, modes, usage: nothing to store.
      return;
  }
}

/** Announces a tool call (or updates what is known of it). */
function startCall(call: acp.ToolCallUpdate, items: ExternalTurnItems, context: TurnContext) {
  const known = items.toolCall(call.toolCallId);
  const details = detailsOf({ ...call, kind: call.kind ?? (known?.details?.kind === 'command' ? 'execute' : undefined) }, context.cwd);
  return items.startToolCall(call.toolCallId, {
    // The agent's tool name when it gives one; a command is shown as our command tool is.
    toolName: call.name ?? (call.kind === 'execute' ? 'exec_command' : (call.kind ?? known?.toolName ?? 'tool')),
    arguments: call.rawInput ?? (call.title ? { title: call.title } : {}),
    ...(details ? { details } : {}),
  });
}

async function finishCall(call: acp.ToolCallUpdate, items: ExternalTurnItems, context: TurnContext): Promise<void> {
  const known = items.toolCall(call.toolCallId);
  const output = outputOf(call.content) ?? known?.output ?? '';
  const exitCode = exitCodeOf(call.rawOutput);
  const kind = call.kind ?? (known?.details?.kind === 'command' ? 'execute' : undefined);
  const details = detailsOf({ ...call, kind, rawInput: call.rawInput ?? known?.arguments, title: call.title ?? (known?.details?.kind === 'command' ? known.details.command : null) }, context.cwd, output);
  await items.finishToolCall(call.toolCallId, { status: call.status === 'failed' ? 'failed' : 'completed', output, ...(exitCode !== undefined ? { exitCode } : {}), ...(details ? { details } : {}) });
}

/**
 * Relays a permission request to the clients and picks the agent's option for the answer:
 * allow once → `allow_once`, for the session → `allow_always`, deny → `reject_once`
 * (else `reject_always`). `deny_interrupt` also cancels the turn. An interrupted turn answers
 * `cancelled`, as ACP requires after `session/cancel`.
 */
export async function relayPermission(request: acp.RequestPermissionRequest, items: ExternalTurnItems, context: TurnContext, cancelTurn: () => void): Promise<acp.RequestPermissionResponse> {
  await items.finishTexts();
  const call = startCall(request.toolCall, items, context);
  const option = (...kinds: acp.PermissionOptionKind[]) => kinds.map((kind) => request.options.find((candidate) => candidate.kind === kind)).find((found) => found !== undefined);
  let answer: ApprovalAnswer;
  try {
    answer = await context.requestApproval({
      callId: call.callId,
      itemId: call.itemId,
      toolName: call.toolName,
      arguments: call.arguments,
      ...(call.details ? { details: call.details } : {}),
      offersSession: option('allow_always') !== undefined,
      reason: `asked by the agent: ${request.toolCall.title ?? call.toolName}`,
    });
  } catch {
    return { outcome: { outcome: 'cancelled' } };
  }
  const allowing = answer.decision === 'allow_once' || answer.decision === 'allow_session' || answer.decision === 'allow_prefix';
  if (answer.decision === 'deny_interrupt') cancelTurn();
  const chosen = answer.decision === 'allow_session' ? option('allow_always', 'allow_once') : allowing ? option('allow_once', 'allow_always') : option('reject_once', 'reject_always');
  return chosen ? { outcome: { outcome: 'selected', optionId: chosen.optionId } } : { outcome: { outcome: 'cancelled' } };
}
