/**
 * The parts of the screen below the transcript, as styled lines: the composer with its
 * cursor, completions, the approval prompt (the command or diff, and the server's options),
 * the agent's question, queued inputs, and the status line with the context meter.
 */
import { diffSpan } from './code-highlight.js';
import { planLines, toolTitle } from './entry-lines.js';
import { sanitize, truncateLine, wrapLine, type StyledLine, type TextStyle } from './styled-text.js';
import type { TranscriptModel } from './transcript-model.js';
import type { ApprovalRequest, UserInputRequest } from '../protocol/index.js';

const DIM: TextStyle = { dim: true };

/** The composer: `› ` then the text wrapped to the width, the cursor as an inverse cell. */
export function composerLines(text: string, cursor: number, width: number, maxLines: number, placeholder: string, label = '› '): StyledLine[] {
  const gutter = { text: label, style: { color: 'cyan' as const, bold: true } };
  const blankGutter = { text: ' '.repeat(label.length) };
  if (text === '') return [[gutter, { text: ' ', style: { inverse: true } }, { text: placeholder, style: DIM }]];
  const rows: StyledLine[] = [];
  let cursorRow = 0;
  const sourceLines = text.split('\n');
  let offset = 0;
  sourceLines.forEach((line, lineIndex) => {
    const end = offset + line.length;
    const spans: StyledLine = [];
    if (cursor >= offset && cursor <= end) {
      const at = cursor - offset;
      const characters = [...line.slice(at)];
      spans.push({ text: line.slice(0, at) }, { text: characters[0] ?? ' ', style: { inverse: true } }, { text: characters.slice(1).join('') });
    } else spans.push({ text: line });
    const wrapped = wrapLine([lineIndex === 0 ? gutter : blankGutter, ...spans.filter((span) => span.text !== '')], width, [blankGutter]);
    if (cursor >= offset && cursor <= end) cursorRow = rows.length + wrapped.findIndex((row) => row.some((span) => span.style?.inverse));
    rows.push(...wrapped);
    offset = end + 1;
  });
  if (rows.length <= maxLines) return rows;
  // Keep the cursor's row in view.
  const start = Math.min(Math.max(0, cursorRow - maxLines + 1), rows.length - maxLines);
  return rows.slice(start, start + maxLines);
}

/** Suggestions for the word being completed; the selected one inverse. */
export function completionLines(suggestions: { label: string; detail?: string }[], selected: number, width: number): StyledLine[] {
  return suggestions.map((suggestion, index) =>
    truncateLine([{ text: `  ${suggestion.label}`, style: index === selected ? { inverse: true } : { color: 'cyan' } }, ...(suggestion.detail ? [{ text: `  ${suggestion.detail}`, style: DIM }] : [])], width),
  );
}

/** The approval prompt: what the call does, why it asks, and the server's options numbered. */
export function approvalLines(request: ApprovalRequest, selected: number, width: number, maxLines: number, waiting: number): StyledLine[] {
  const head: StyledLine[] = [
    [{ text: '─'.repeat(width), style: { color: 'yellow' } }],
    ...wrapLine([{ text: 'Approval needed ', style: { bold: true, color: 'yellow' } }, ...toolTitle(request.toolName, request.details, request.arguments)], width, [{ text: '  ' }]),
  ];
  const body: StyledLine[] = [];
  const details = request.details;
  if (details?.kind === 'command') body.push([{ text: `  in ${details.cwd}`, style: DIM }]);
  if (details?.kind === 'fileChange') for (const change of details.changes) for (const line of change.unifiedDiff.replace(/\n$/, '').split('\n')) body.push(...wrapLine([{ text: '  ' }, diffSpan(sanitize(line))], width, [{ text: '  ' }]));
  body.push(...wrapLine([{ text: `  ${request.reason}${waiting > 1 ? ` · ${waiting - 1} more waiting` : ''}`, style: DIM }], width));
  const options = request.options.map((option, index) => truncateLine([{ text: `  ${index + 1}. ${option.label}`, style: index === selected ? { inverse: true } : {} }], width));
  const hint: StyledLine = [{ text: '  ↑↓ or number, Enter to answer · Esc: deny and interrupt', style: DIM }];
  const room = Math.max(1, maxLines - head.length - options.length - 1);
  const shownBody = body.length <= room ? body : [...body.slice(0, room - 1), [{ text: `  … ${body.length - room + 1} more lines`, style: DIM }]];
  return [...head, ...shownBody, ...options, hint];
}

/** A question of the agent: the question, numbered choices, and the answer being typed. */
export function questionLines(request: UserInputRequest, answer: StyledLine[], selected: number, width: number): StyledLine[] {
  const choices = request.choices ?? [];
  return [
    [{ text: '─'.repeat(width), style: { color: 'magenta' } }],
    ...wrapLine([{ text: 'Question ', style: { bold: true, color: 'magenta' } }, { text: sanitize(request.question) }], width, [{ text: '  ' }]),
    ...choices.map((choice, index) => truncateLine([{ text: `  ${index + 1}. ${sanitize(choice)}`, style: index === selected ? { inverse: true } : {} }], width)),
    ...(request.allowFreeText || choices.length === 0 ? answer : []),
    [{ text: `  ${choices.length > 0 ? '↑↓ or number to choose, ' : ''}${request.allowFreeText || choices.length === 0 ? 'type an answer, ' : ''}Enter to send`, style: DIM }],
  ];
}

/** Inputs waiting for the next turn. */
export function queuedLines(model: TranscriptModel, width: number): StyledLine[] {
  const queued = model.rootSession?.queuedInputs ?? [];
  return queued.slice(-3).map((input) => truncateLine([{ text: '⧗ queued: ', style: { color: 'yellow' } }, { text: sanitize(input.text).replace(/\n/g, ' ') }], width));
}

/** The current plan while a turn runs, compact. */
export function activePlanLines(model: TranscriptModel, width: number, maxLines: number): StyledLine[] {
  const plan = model.rootSession?.plan;
  if (!plan || !model.running || plan.steps.every((step) => step.status === 'completed')) return [];
  return planLines(plan.steps, undefined, width).slice(0, maxLines);
}

function compact(count: number): string {
  return count >= 1000 ? `${(count / 1000).toFixed(count >= 10_000 ? 0 : 1)}k` : String(count);
}

/** The status line: conversation, model, agent, context meter, usage, running state. */
export function statusLine(model: TranscriptModel, fallback: { model?: string; agent?: string }, spinner: string, width: number): StyledLine {
  const session = model.rootSession;
  const parts: StyledLine = [];
  const title = model.conversation ? model.conversation.title || model.conversation.id : 'new conversation';
  parts.push({ text: ` ${title} `, style: { inverse: true } });
  const modelName = session?.model ?? fallback.model ?? 'default model';
  parts.push({ text: ` ${modelName}`, style: { color: 'cyan' } }, { text: ` · ${session?.agent ?? fallback.agent ?? 'default agent'}`, style: DIM });
  const usage = model.usage;
  if (usage) {
    const percent = usage.contextWindow ? Math.round((usage.contextTokens / usage.contextWindow) * 100) : undefined;
    const filled = percent === undefined ? 0 : Math.min(10, Math.round(percent / 10));
    const color = percent !== undefined && percent >= 80 ? 'red' : percent !== undefined && percent >= 60 ? 'yellow' : 'green';
    parts.push({ text: ' · ctx ', style: DIM });
    if (percent !== undefined) parts.push({ text: '▰'.repeat(filled), style: { color } }, { text: '▱'.repeat(10 - filled), style: DIM });
    parts.push({ text: ` ${compact(usage.contextTokens)}${usage.contextWindow ? `/${compact(usage.contextWindow)}` : ''}${percent !== undefined ? ` ${percent}%` : ''}`, style: DIM });
    parts.push({ text: ` · ↑${compact(usage.inputTokens)} ↓${compact(usage.outputTokens)}${usage.costUsd !== undefined ? ` $${usage.costUsd.toFixed(3)}` : ''}`, style: DIM });
  }
  const subagents = model.subagents;
  const runningSubagents = subagents.filter((subagent) => subagent.status === 'running').length;
  if (subagents.length > 0) parts.push({ text: ` · ${subagents.length} subagent${subagents.length === 1 ? '' : 's'}${runningSubagents ? ` (${runningSubagents} running)` : ''}`, style: { color: 'magenta' } });
  if (model.running) parts.push({ text: ` · ${spinner} working`, style: { color: 'yellow' } });
  return truncateLine(parts, width);
}

/** One line of key hints for the current state. */
export function hintLine(running: boolean, scrolled: boolean, width: number): StyledLine {
  const hints = running
    ? 'Enter queue · Ctrl+S steer · Esc interrupt · PgUp/PgDn · Ctrl+C leave (work goes on)'
    : 'Enter send · Ctrl+J newline · @ files · / commands · PgUp/PgDn · /help';
  return truncateLine([{ text: scrolled ? '↑ scrolled · End to follow · ' : '', style: { color: 'yellow' } }, { text: hints, style: DIM }], width);
}
