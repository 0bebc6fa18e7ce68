/**
 * How items read as text: their transcript form (`openvaala conversations show`) and which of
 * them `openvaala exec` prints as that form, on its own terms, or not at all.
 */
import type { Item, ItemKind, ItemOf, NotificationParams, PlanStep } from '../protocol/index.js';
import { toolCallOutcome, type ToolCallOutcome } from '../protocol/tool-call-outcome.js';

/** The mark of how a tool call ended: `✓` succeeded, `✗` failed (see {@link toolCallOutcome}), `■` interrupted. */
export const OUTCOME_MARKS: Record<ToolCallOutcome['state'], string> = { succeeded: '✓', failed: '✗', interrupted: '■' };

/**
 * What follows a tool call's mark (and, in exec, its name) to say how it ended: the interruption
 * first, then what it did to the call (` interrupted: killed by SIGTERM`); else the outcome's
 * detail (` exit 3`); `''` when there is none. One rule for exec's live line and the transcript.
 */
export function outcomeWords(outcome: ToolCallOutcome): string {
  if (outcome.state === 'interrupted') return ` interrupted${outcome.detail ? `: ${outcome.detail}` : ''}`;
  return outcome.detail ? ` ${outcome.detail}` : '';
}

/**
 * What a tool call's header shows after the tool's name: the command, the files a patch
 * touches, the path, else the arguments as JSON (cut to 120 characters).
 */
export function summarizeArguments(toolName: string, args: unknown): string {
  if (args && typeof args === 'object') {
    const record = args as Record<string, unknown>;
    if (toolName === 'exec_command' && typeof record.command === 'string') return record.command;
    if (toolName === 'apply_patch' && typeof record.patch === 'string') {
      const files = [...record.patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((match) => match[1]);
      return files.join(', ');
    }
    if (typeof record.path === 'string') return record.path;
  }
  const text = JSON.stringify(args) ?? '';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** A wait in words: "500 ms", "8 s". */
export function formatDelay(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 1000)} s`;
}

/** The one-line notice of a retry, e.g. `retrying in 8 s: HTTP 429 rate limited (retry 1 of 4)`. */
export function describeRetry(retry: NotificationParams<'turn/retrying'>): string {
  const status = retry.httpStatus !== null ? `HTTP ${retry.httpStatus} ` : '';
  return `retrying in ${formatDelay(retry.delayMs)}: ${status}${retry.message} (retry ${retry.attempt} of ${retry.maxRetries})`;
}

function indent(text: string, prefix: string): string {
  return text.replace(/\n$/, '').split('\n').map((line) => `${prefix}${line}`).join('\n');
}

/** The mark of a plan step's status: `[x]` completed, `[>]` in progress, `[ ]` pending. */
export function planStepMark(status: PlanStep['status']): string {
  return status === 'completed' ? '[x]' : status === 'in_progress' ? '[>]' : '[ ]';
}

/** A plan as exec and `conversations show` print it: `plan: <explanation>`, then one line per step with its mark. */
export function formatPlan(plan: { explanation?: string | undefined; steps: PlanStep[] }): string {
  const explanation = plan.explanation?.trim();
  const steps = plan.steps.map((step) => `  ${planStepMark(step.status)} ${step.step}`);
  return [`plan${explanation ? `: ${explanation}` : ''}`, ...(steps.length > 0 ? steps : ['  (no steps)'])].join('\n');
}

/** The first line of a text, with `…` when more follows. */
export function firstLine(text: string): string {
  const lines = text.trim().split('\n');
  return `${lines[0] ?? ''}${lines.length > 1 ? ' …' : ''}`;
}

/**
 * The mark under an answer or reasoning that did not end whole (`failed`: cut off by the
 * provider's stream, then retried or the turn failed; `interrupted`): without it a cut-off
 * answer followed by its retry reads as the answer given twice.
 */
function cutShortMark(item: Item): string {
  return item.status === 'failed' ? '\n  ■ cut off' : item.status === 'interrupted' ? '\n  ■ interrupted' : '';
}

/**
 * How each kind of item reads in a transcript (`openvaala conversations show`), one entry per
 * kind of the protocol's `ItemSchema`; `undefined` when an item has nothing to show (a
 * reasoning item without a summary). `openvaala exec` uses the same form for the kinds it
 * prints as lines (see {@link execItemDisplay}).
 */
export const itemFormats: { [K in ItemKind]: (item: ItemOf<K>) => string | undefined } = {
  user_message: (item) => `› ${item.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join(' ')}`,
  assistant_message: (item) => `${item.text}${cutShortMark(item)}`,
  reasoning: (item) => (item.summary.trim() ? `∴ ${item.summary.trim()}${cutShortMark(item)}` : undefined),
  tool_call: (item) => {
    const outcome = toolCallOutcome(item);
    const status = `${OUTCOME_MARKS[outcome.state]}${outcomeWords(outcome)}`;
    // The same summary as exec shows live (the command, the files a patch touches, the path), not the raw JSON.
    const args = summarizeArguments(item.toolName, item.arguments);
    const lines = item.output.replace(/\n$/, '').split('\n');
    const shown = lines.length > 8 ? [...lines.slice(0, 6), `… ${lines.length - 7} more lines`, lines.at(-1) ?? ''] : lines;
    return `▸ ${item.toolName} ${args}\n${item.output.trim() ? `${indent(shown.join('\n'), '  │ ')}\n` : ''}  ${status}`;
  },
  agent_message: (item) => `✉ ${item.fromSessionId} → ${item.toSessionId}: ${firstLine(item.text)}`,
  approval: (item) => `  approval: ${item.decision}${item.prefix ? ` "${item.prefix.join(' ')}"` : ''} by ${item.decidedBy}${item.automatic ? ' (automatic, no one was asked)' : ''}`,
  // The model as configured (`provider/model`), not "<provider> model …", which read oddly for a provider named like a word.
  model_error: (item) => `error: model ${item.model.includes('/') ? item.model : `${item.provider}/${item.model}`}${item.httpStatus !== null ? ` (HTTP ${item.httpStatus})` : ''}: ${item.message}`,
  context_summary: () => '⋯ earlier context compacted into a summary',
  model_change: (item) => `model: ${item.from} → ${item.to}`,
  agent_change: (item) => `agent: ${item.from} → ${item.to}`,
  executor_change: (item) => `work location: ${item.from} → ${item.to}`,
  instruction: (item) => `instructions: ${item.name} (${item.source})`,
  plan: (item) => formatPlan(item),
  hook_run: (item) => hookRunLine(item),
  interruption: (item) => `■ interrupted (${item.reason})${item.message ? `: ${item.message}` : ''}`,
};

/**
 * A hook run in its transcript form: `hook <event>[ on <tool> <call>]: <command> exit <code> (<decision>)`.
 * @param call what the call the run names (`callId`) shows after its tool's name, when the
 *   transcript holds that call; else the run names the tool alone
 */
export function hookRunLine(item: ItemOf<'hook_run'>, call?: string): string {
  const on = item.toolName ? ` on ${item.toolName}${call ? ` ${firstLine(call)}` : ''}` : '';
  return `hook ${item.event}${on}: ${item.command}${item.exitCode !== null ? ` exit ${item.exitCode}` : ''}${item.decision ? ` (${item.decision})` : ''}`;
}

/** Options of {@link formatItem}. */
export interface FormatItemOptions {
  /**
   * The transcript also shows the turn's interruption (its `interruption` item, with the
   * reason): an answer or reasoning it cut short then carries no `■ interrupted` mark of its
   * own, which would say the same thing twice. A tool call keeps its outcome line.
   */
  interruptionShown?: boolean;
}

/** One item in its transcript form (see {@link itemFormats}); `undefined` when it has nothing to show. */
export function formatItem(item: Item, options: FormatItemOptions = {}): string | undefined {
  if (options.interruptionShown && item.status === 'interrupted' && (item.kind === 'assistant_message' || item.kind === 'reasoning')) {
    // The same item as it reads whole: the interruption line below it tells how it ended.
    return (itemFormats[item.kind] as (item: Item) => string | undefined)({ ...item, status: 'completed' });
  }
  return (itemFormats[item.kind] as (item: Item) => string | undefined)(item);
}

/**
 * What `openvaala exec` prints when an item of each kind completes: `streamed` — shown as it
 * arrives (answer, reasoning, tool calls) or on its own terms (errors on stderr, interruptions,
 * a compaction as a one-line notice without the summary, hook runs only when they failed or
 * changed something); `line` — its transcript form ({@link itemFormats}); `hidden` — not
 * printed (the prompt exec sent itself, approvals exec asked about on the terminal,
 * instructions, which `conversations show` lists).
 */
export const execItemDisplay: Record<ItemKind, 'streamed' | 'line' | 'hidden'> = {
  user_message: 'hidden',
  assistant_message: 'streamed',
  reasoning: 'streamed',
  tool_call: 'streamed',
  agent_message: 'line',
  approval: 'hidden',
  model_error: 'streamed',
  context_summary: 'streamed',
  model_change: 'line',
  agent_change: 'line',
  executor_change: 'line',
  instruction: 'hidden',
  plan: 'line',
  hook_run: 'streamed',
  interruption: 'streamed',
};
