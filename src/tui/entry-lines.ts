/**
 * How each transcript entry looks: user and assistant messages (Markdown), reasoning
 * summaries (one line unless expanded), tool calls with their command, live output and end,
 * file changes as coloured diffs, plans as checklists, subagent work, approvals, errors and
 * the UI's own notices. Each entry becomes wrapped styled lines followed by a blank line.
 */
import { diffSpan } from './code-highlight.js';
import { renderMarkdown } from './markdown.js';
import { plainLines, sanitize, wrapLine, type StyledLine, type TextStyle } from './styled-text.js';
import type { TranscriptEntry } from './transcript-model.js';
import { toolCallOutcome, type Item, type ToolDetails } from '../protocol/index.js';

/** What the reader chose to see in full. */
export interface RenderToggles {
  /** Reasoning summaries in full (else their first line). */
  reasoning: boolean;
  /** Tool output and diffs in full (else their last lines). */
  output: boolean;
}

/** Output lines shown of a collapsed tool call (its last ones). */
export const COLLAPSED_OUTPUT_LINES = 8;
/** Diff lines shown of a collapsed file change (its first ones). */
export const COLLAPSED_DIFF_LINES = 24;

type ItemOf<K extends Item['kind']> = Extract<Item, { kind: K }>;

const DIM: TextStyle = { dim: true };

function gutterLines(lines: StyledLine[], width: number, gutter: string, style: TextStyle = DIM): StyledLine[] {
  const prefix = [{ text: gutter, style }];
  return lines.flatMap((line) => wrapLine([...prefix, ...line], width, prefix));
}

function textOf(content: ItemOf<'user_message'>['content']): string {
  return content.map((part) => (part.type === 'text' ? part.text : part.type === 'file' ? `[file ${part.name ?? part.path}]` : '[image]')).join('\n');
}

/** A tool call's one-line title from its details (or name and arguments). */
export function toolTitle(toolName: string, details: ToolDetails | undefined, args: unknown): StyledLine {
  const name = { text: toolName, style: { bold: true } };
  switch (details?.kind) {
    case 'command':
      return [name, { text: ' $ ', style: DIM }, { text: sanitize(details.command).replace(/\n/g, ' ⏎ ') }];
    case 'fileChange':
      return [name, { text: ` ${details.changes.map((change) => `${change.kind === 'add' ? '+' : change.kind === 'delete' ? '-' : '~'}${change.path}${change.movePath ? ` → ${change.movePath}` : ''}`).join(', ')}` }];
    case 'read':
      return [name, { text: ` ${details.path}${details.startLine ? `:${details.startLine}-${details.endLine ?? ''}` : ''}` }];
    case 'search':
      return [name, { text: ` ${details.pattern}`, style: { color: 'cyan' } }, { text: ` in ${details.path}${details.matches !== undefined ? ` · ${details.matches} matches` : ''}`, style: DIM }];
    case 'list':
      return [name, { text: ` ${details.path}${details.entries !== undefined ? ` · ${details.entries} entries` : ''}` }];
    case 'mcp':
      return [name, { text: ` (${details.server}/${details.tool})`, style: DIM }];
    case 'subagent':
      return [name, { text: ` ${details.sessionIds.join(', ')}`, style: { color: 'magenta' } }];
    default: {
      const text = args === undefined ? '' : sanitize(JSON.stringify(args) ?? '');
      return [name, { text: ` ${text.length > 200 ? `${text.slice(0, 199)}…` : text}`, style: DIM }];
    }
  }
}

function outputLines(output: string, width: number, expanded: boolean): StyledLine[] {
  const lines = plainLines(output.replace(/\n+$/, ''));
  if (lines.length === 1 && lines[0]?.length === 0) return [];
  const shown = expanded || lines.length <= COLLAPSED_OUTPUT_LINES ? lines : lines.slice(-COLLAPSED_OUTPUT_LINES);
  const hidden = lines.length - shown.length;
  return [...(hidden > 0 ? [[{ text: `│ … ${hidden} earlier lines (Ctrl+O shows all)`, style: DIM }]] : []), ...gutterLines(shown, width, '│ ')];
}

function diffLines(details: Extract<ToolDetails, { kind: 'fileChange' }>, width: number, expanded: boolean): StyledLine[] {
  const all = details.changes.flatMap((change) => change.unifiedDiff.replace(/\n$/, '').split('\n'));
  const shown = expanded || all.length <= COLLAPSED_DIFF_LINES ? all : all.slice(0, COLLAPSED_DIFF_LINES);
  const lines = shown.flatMap((line) => wrapLine([{ text: '  ' }, diffSpan(sanitize(line))], width, [{ text: '  ' }]));
  if (shown.length < all.length) lines.push([{ text: `  … ${all.length - shown.length} more diff lines (Ctrl+O shows all)`, style: DIM }]);
  return lines;
}

function toolCallLines(fields: { toolName: string; details: ToolDetails | undefined; args: unknown; output: string; end?: StyledLine; failed?: boolean }, width: number, toggles: RenderToggles): StyledLine[] {
  const running = fields.end === undefined;
  const head: StyledLine = [{ text: running ? '◌ ' : '● ', style: { color: running ? 'yellow' : fields.failed ? 'red' : 'green' } }, ...toolTitle(fields.toolName, fields.details, fields.args)];
  const lines = wrapLine(head, width, [{ text: '  ' }]);
  if (fields.details?.kind === 'fileChange') lines.push(...diffLines(fields.details, width, toggles.output));
  const shownOutput = fields.details?.kind === 'command' && fields.details.output !== undefined ? fields.details.output : fields.output;
  if (fields.details?.kind !== 'fileChange' && fields.details?.kind !== 'read') lines.push(...outputLines(shownOutput, width, toggles.output));
  if (fields.end) lines.push(fields.end);
  return lines;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function itemLines(item: Item, width: number, toggles: RenderToggles): StyledLine[] {
  switch (item.kind) {
    case 'user_message': {
      const label = item.mode === 'steer' ? 'steer › ' : '› ';
      const prefix = [{ text: label, style: { color: 'cyan' as const, bold: true } }];
      const body = plainLines(textOf(item.content), { bold: true });
      const by = item.author && item.author.clientName !== 'openvaala-tui' ? [[{ text: `  from ${item.author.clientName}`, style: DIM }]] : [];
      return [...body.flatMap((line, index) => wrapLine([...(index === 0 ? prefix : [{ text: ' '.repeat(label.length) }]), ...line], width, [{ text: ' '.repeat(label.length) }])), ...by];
    }
    case 'assistant_message':
      return [...renderMarkdown(item.text, width), ...cutShortLines(item)];
    case 'reasoning':
      return [...reasoningLines(item.summaryParts ?? [item.summary], width, toggles.reasoning), ...cutShortLines(item)];
    case 'tool_call': {
      // A command that exited non-zero or was killed is a normal result for the model, a failed call here.
      const outcome = toolCallOutcome(item);
      const succeeded = outcome.state === 'succeeded';
      const mark = outcome.state === 'interrupted' ? '■ interrupted' : succeeded ? '✓' : '✗ failed';
      const detail = outcome.detail ? `${succeeded ? ' ' : ' · '}${outcome.detail}` : '';
      const end: StyledLine = [{ text: `  ${mark}${detail} · ${seconds(item.durationMs)}`, style: { dim: succeeded, color: succeeded ? 'green' : 'red' } }];
      return toolCallLines({ toolName: item.toolName, details: item.details, args: item.arguments, output: item.isError || item.details?.kind !== 'command' ? item.output : '', end, failed: !succeeded }, width, toggles);
    }
    case 'approval': {
      const allowed = item.decision.startsWith('allow');
      return wrapLine([{ text: allowed ? '✓ ' : '✗ ', style: { color: allowed ? 'green' : 'red' } }, { text: `${item.toolName}: ${item.decision.replace('_', ' ')}${item.prefix ? ` "${item.prefix.join(' ')}"` : ''} (${item.decidedBy}${item.automatic ? ', automatic' : ''})`, style: DIM }], width);
    }
    case 'model_error':
      return wrapLine([{ text: `model error${item.httpStatus ? ` (HTTP ${item.httpStatus})` : ''}: ${sanitize(item.message)}`, style: { color: 'red' } }], width);
    case 'context_summary':
      return [[{ text: '≡ earlier conversation compacted into a summary', style: DIM }], ...(toggles.reasoning ? gutterLines(plainLines(item.text), width, '│ ') : [])];
    case 'model_change':
    case 'agent_change':
    case 'executor_change':
      return wrapLine([{ text: `${item.kind.replace('_change', '')}: ${item.from} → ${item.to}`, style: DIM }], width);
    case 'plan':
      return planLines(item.steps, item.explanation, width);
    case 'instruction':
      return wrapLine([{ text: `instructions: ${item.name} (${item.source.replace('_', '.')})`, style: DIM }], width);
    case 'hook_run':
      return wrapLine([{ text: `hook ${item.event}${item.toolName ? ` on ${item.toolName}` : ''}: ${item.command} → exit ${item.exitCode ?? '?'}${item.decision ? ` (${item.decision})` : ''}`, style: DIM }], width);
    case 'interruption':
      return wrapLine([{ text: `■ interrupted (${item.reason.replace('_', ' ')})${item.message ? `: ${item.message}` : ''}`, style: { color: 'yellow' } }], width);
    case 'agent_message':
      return gutterLines(renderMarkdown(item.text, width - 2), width, '↔ ', { color: 'magenta' });
  }
}

/**
 * The mark under an answer or reasoning that did not end whole: `failed` is one the provider's
 * stream cut off (the turn retried it, or failed), `interrupted` one the user stopped. Without
 * it, a cut-off answer followed by its retry would read as the answer said twice.
 */
function cutShortLines(item: ItemOf<'assistant_message'> | ItemOf<'reasoning'>): StyledLine[] {
  if (item.status === 'completed') return [];
  return [[{ text: item.status === 'failed' ? '  ■ cut off' : '  ■ interrupted', style: { color: 'yellow' } }]];
}

function reasoningLines(parts: string[], width: number, expanded: boolean): StyledLine[] {
  const text = parts.filter((part) => part.trim() !== '').join('\n\n');
  if (!text) return [[{ text: '∴ thinking…', style: { dim: true, italic: true } }]];
  if (expanded) return gutterLines(plainLines(text, { italic: true }), width, '∴ ');
  const first = text.split('\n').find((line) => line.trim() !== '') ?? '';
  const more = text.trim() !== first.trim();
  return wrapLine([{ text: `∴ ${first.trim()}`, style: { dim: true, italic: true } }, ...(more ? [{ text: ' (Ctrl+R shows all)', style: DIM }] : [])], width, [{ text: '  ' }]);
}

/** A plan as a checklist. */
export function planLines(steps: { step: string; status: string }[], explanation: string | undefined, width: number): StyledLine[] {
  const lines: StyledLine[] = [[{ text: 'Plan', style: { bold: true } }, ...(explanation ? [{ text: ` · ${explanation}`, style: DIM }] : [])]];
  for (const step of steps) {
    const mark = step.status === 'completed' ? '☑ ' : step.status === 'in_progress' ? '◐ ' : '☐ ';
    const style: TextStyle = step.status === 'completed' ? { dim: true } : step.status === 'in_progress' ? { color: 'yellow' } : {};
    lines.push(...wrapLine([{ text: `  ${mark}`, style }, { text: step.step, style }], width, [{ text: '    ' }]));
  }
  return lines;
}

/** The lines of a live (not yet stored) item. */
function liveLines(entry: TranscriptEntry, width: number, toggles: RenderToggles): StyledLine[] {
  const live = entry.live;
  if (!live) return [];
  const ended = typeof live.partial.ended === 'string' ? `  ■ ${live.partial.ended}` : undefined;
  switch (live.kind) {
    case 'assistant_message':
      return live.text ? renderMarkdown(live.text, width) : [[{ text: '…', style: DIM }]];
    case 'reasoning':
      return reasoningLines(live.reasoningParts, width, toggles.reasoning);
    case 'tool_call': {
      const details = live.partial.details as ToolDetails | undefined;
      return toolCallLines({ toolName: String(live.partial.toolName ?? 'tool'), details, args: live.partial.arguments, output: live.output, ...(ended ? { end: [{ text: ended, style: { color: 'yellow' } }] } : {}) }, width, toggles);
    }
    default:
      return [[{ text: `${live.kind}…`, style: DIM }]];
  }
}

/**
 * The lines of one entry at `width` cells, with the blank line that separates it from the
 * next. Items of subagent sessions are indented under a `↳` marker.
 */
export function entryLines(entry: TranscriptEntry, width: number, toggles: RenderToggles, rootSessionId: string | undefined): StyledLine[] {
  const subagent = entry.sessionId !== undefined && rootSessionId !== undefined && entry.sessionId !== rootSessionId;
  const inner = subagent ? width - 2 : width;
  let lines: StyledLine[];
  if (entry.notice) {
    const style: TextStyle = entry.notice.tone === 'error' ? { color: 'red' } : entry.notice.tone === 'warning' ? { color: 'yellow' } : { dim: true };
    lines = plainLines(entry.notice.text, style).flatMap((line) => wrapLine(line, inner));
  } else if (entry.item) lines = itemLines(entry.item, inner, toggles);
  else lines = liveLines(entry, inner, toggles);
  if (subagent) lines = lines.map((line, index) => [{ text: index === 0 ? '↳ ' : '  ', style: { color: 'magenta' as const } }, ...line]);
  return [...lines, []];
}
