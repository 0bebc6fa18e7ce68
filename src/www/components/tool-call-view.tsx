/**
 * A tool call, completed or in progress, from its typed details (src/protocol/tool-details.ts):
 * a command with its cwd, live output, exit code and duration; file changes as diffs; an MCP
 * call with its server and tool; subagents as nested threads; searches and reads as one line.
 * Other tools show their arguments and output.
 */
import type { ComponentChildren } from 'preact';
import type { ItemOf } from '../../protocol/items.js';
import type { ToolDetails } from '../../protocol/tool-details.js';
import { toolCallOutcome, type ToolCallOutcome } from '../../protocol/tool-call-outcome.js';
import type { LiveItem } from '../state/conversation-state.js';
import type { ReviewDraft } from '../state/review.js';
import { DiffView } from './diff-view.js';
import { formatDuration } from './format.js';

/** Removes terminal control sequences (colours, cursor moves) from command output. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*(\u0007|\u001b\\)|\u001b[()][0-9A-B]/g, '');
}

/** What a tool call shows, whether stored or in progress. */
export interface ToolCallModel {
  itemId: string;
  toolName: string;
  arguments: unknown;
  executor?: string | undefined;
  details?: ToolDetails | undefined;
  output: string;
  running: boolean;
  isError: boolean;
  exitCode?: number | null | undefined;
  durationMs?: number | undefined;
  status: string;
  /** How a finished call ended, by the rule every client shares (`toolCallOutcome`); absent while it runs. */
  outcome?: ToolCallOutcome | undefined;
}

/** The model of a stored tool call item. */
export function storedToolCall(item: ItemOf<'tool_call'>): ToolCallModel {
  return {
    itemId: item.id,
    toolName: item.toolName,
    arguments: item.arguments,
    executor: item.executor,
    details: item.details,
    output: item.details?.kind === 'command' && item.details.output !== undefined ? item.details.output : item.output,
    running: false,
    isError: item.isError,
    exitCode: item.details?.kind === 'command' ? item.details.exitCode : item.exitCode,
    durationMs: item.durationMs,
    status: item.status,
    outcome: toolCallOutcome(item),
  };
}

/** The model of a tool call in progress. */
export function liveToolCall(live: LiveItem): ToolCallModel {
  const partial = live.partial as { toolName?: string; name?: string; arguments?: unknown; executor?: string; details?: ToolDetails };
  return {
    itemId: live.itemId,
    toolName: partial.toolName ?? partial.name ?? 'tool',
    arguments: partial.arguments,
    executor: partial.executor,
    details: partial.details,
    output: live.output,
    running: true,
    isError: false,
    status: 'running',
  };
}

function summaryLine(call: ToolCallModel): string {
  const details = call.details;
  if (!details) return call.toolName;
  switch (details.kind) {
    case 'command':
      return details.command;
    case 'fileChange':
      return `${details.changes.length} file${details.changes.length === 1 ? '' : 's'}: ${details.changes.map((change) => change.path).join(', ')}`;
    case 'mcp':
      return `${details.server} · ${details.tool}`;
    case 'subagent':
      return `${call.toolName} · ${details.sessionIds.length} subagent${details.sessionIds.length === 1 ? '' : 's'}`;
    case 'search':
      return `${details.tool} ${details.pattern} in ${details.path}${details.matches !== undefined ? ` · ${details.matches} matches` : ''}`;
    case 'read':
      return `${details.path}${details.startLine ? ` lines ${details.startLine}–${details.endLine ?? ''}` : ''}${details.totalLines !== undefined ? ` of ${details.totalLines}` : ''}`;
    case 'list':
      return `${details.path}${details.entries !== undefined ? ` · ${details.entries} entries` : ''}`;
  }
}

function Status({ call }: { call: ToolCallModel }) {
  if (call.running || !call.outcome) return <span class="badge running" aria-label="running">running</span>;
  const { state, detail } = call.outcome;
  return (
    <span class={`badge ${state === 'succeeded' ? 'ok' : 'failed'}`}>
      {state === 'interrupted' ? 'interrupted' : state === 'failed' ? 'failed' : 'done'}
      {detail !== '' ? ` · ${detail}` : ''}
      {call.durationMs !== undefined ? ` · ${formatDuration(call.durationMs)}` : ''}
    </span>
  );
}

function json(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** Renders one tool call; `subagents` renders the nested threads of subagent sessions. */
export function ToolCallView({ call, review, subagents }: { call: ToolCallModel; review?: ReviewDraft | undefined; subagents?: (sessionIds: string[]) => ComponentChildren }) {
  const details = call.details;
  const open = call.running || details?.kind === 'fileChange' || details?.kind === 'subagent';
  return (
    <details class={`tool-call tool-${details?.kind ?? 'generic'}`} open={open} data-item-id={call.itemId} data-tool={call.toolName}>
      <summary>
        <span class="tool-name">{details?.kind === 'command' ? '$' : call.toolName}</span>
        <code class="tool-summary">{summaryLine(call)}</code>
        <Status call={call} />
      </summary>
      <div class="tool-body">
        {details?.kind === 'command' ? (
          <>
            <div class="muted tool-where">
              in <code>{details.cwd}</code>
              {call.executor ? ` on ${call.executor}` : ''}
              {details.signal ? ` · signal ${details.signal}` : ''}
            </div>
            <pre class="command-output" role="log" aria-label="Command output">
              {stripAnsi(call.output)}
            </pre>
          </>
        ) : details?.kind === 'fileChange' ? (
          details.changes.map((change) => <DiffView key={change.path} change={change} review={call.running ? undefined : review} />)
        ) : details?.kind === 'mcp' ? (
          <>
            <div class="muted">
              MCP server <strong>{details.server}</strong>, tool <strong>{details.tool}</strong>
            </div>
            <pre class="tool-arguments">{json(call.arguments)}</pre>
            {details.result !== undefined ? <pre class="tool-output">{json(details.result)}</pre> : call.output ? <pre class="tool-output">{call.output}</pre> : null}
          </>
        ) : details?.kind === 'subagent' ? (
          <>
            {subagents?.(details.sessionIds)}
            {call.output ? <pre class="tool-output">{call.output}</pre> : null}
          </>
        ) : (
          <>
            {call.arguments !== undefined ? <pre class="tool-arguments">{json(call.arguments)}</pre> : null}
            {call.output ? <pre class="tool-output">{stripAnsi(call.output)}</pre> : null}
          </>
        )}
      </div>
    </details>
  );
}
