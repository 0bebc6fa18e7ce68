/**
 * How `openvaala exec` shows a turn: the answer streamed as it is written, reasoning summaries
 * as they arrive, tool calls with their output live (the first lines, then the last ones when
 * the call ends), retries with their wait, errors on stderr — or, with `--json`, one event per
 * line.
 */
import type { AnyNotification, Item, ItemKind, ItemOf, NotificationParams, PlanStep } from '../protocol/index.js';

/** Where the renderer writes. */
export interface OutputStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Lines of a tool call's output shown live, as they arrive. */
const LIVE_LINES = 12;
/** Lines shown from the end of an output when more than {@link LIVE_LINES} were hidden. */
const TAIL_LINES = 4;

function summarizeArguments(toolName: string, args: unknown): string {
  if (args && typeof args === 'object') {
    const record = args as Record<string, unknown>;
    if (toolName === 'exec_command' && typeof record.command === 'string') return record.command;
    if (toolName === 'apply_patch' && typeof record.patch === 'string') {
      const files = [...record.patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((match) => match[1]);
      return files.join(', ');
    }
    if (typeof record.path === 'string') return record.path;
  }
  const text = JSON.stringify(args);
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
function firstLine(text: string): string {
  const lines = text.trim().split('\n');
  return `${lines[0] ?? ''}${lines.length > 1 ? ' …' : ''}`;
}

/**
 * How each kind of item reads in a transcript (`openvaala conversations show`), one entry per
 * kind of the protocol's `ItemSchema`; `undefined` when an item has nothing to show (a
 * reasoning item without a summary). `openvaala exec` uses the same form for the kinds it
 * prints as lines (see {@link execItemDisplay}).
 */
export const itemFormats: { [K in ItemKind]: (item: ItemOf<K>) => string | undefined } = {
  user_message: (item) => `› ${item.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join(' ')}`,
  assistant_message: (item) => item.text,
  reasoning: (item) => (item.summary.trim() ? `∴ ${item.summary.trim()}` : undefined),
  tool_call: (item) => {
    const status = item.status === 'interrupted' ? '■ interrupted' : item.isError ? '✗' : '✓';
    // The same summary as exec shows live (the command, the files a patch touches, the path), not the raw JSON.
    const args = summarizeArguments(item.toolName, item.arguments);
    const lines = item.output.replace(/\n$/, '').split('\n');
    const shown = lines.length > 8 ? [...lines.slice(0, 6), `… ${lines.length - 7} more lines`, lines.at(-1) ?? ''] : lines;
    return `▸ ${item.toolName} ${args}\n${item.output.trim() ? `${indent(shown.join('\n'), '  │ ')}\n` : ''}  ${status}${item.exitCode !== undefined && item.exitCode !== null ? ` exit ${item.exitCode}` : ''}`;
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
  hook_run: (item) => `hook ${item.event}: ${item.command}${item.exitCode !== null ? ` exit ${item.exitCode}` : ''}${item.decision ? ` (${item.decision})` : ''}`,
  interruption: (item) => `■ interrupted (${item.reason})${item.message ? `: ${item.message}` : ''}`,
};

/** One item in its transcript form (see {@link itemFormats}); `undefined` when it has nothing to show. */
export function formatItem(item: Item): string | undefined {
  return (itemFormats[item.kind] as (item: Item) => string | undefined)(item);
}

/**
 * What `openvaala exec` prints when an item of each kind completes: `streamed` — shown as it
 * arrives (answer, reasoning, tool calls) or on its own terms (errors on stderr, interruptions);
 * `line` — its transcript form ({@link itemFormats}); `hidden` — not printed (the prompt exec
 * sent itself, approvals exec asked about on the terminal, instructions, which
 * `conversations show` lists).
 */
export const execItemDisplay: Record<ItemKind, 'streamed' | 'line' | 'hidden'> = {
  user_message: 'hidden',
  assistant_message: 'streamed',
  reasoning: 'streamed',
  tool_call: 'streamed',
  agent_message: 'line',
  approval: 'hidden',
  model_error: 'streamed',
  context_summary: 'line',
  model_change: 'line',
  agent_change: 'line',
  executor_change: 'line',
  instruction: 'hidden',
  plan: 'line',
  hook_run: 'hidden',
  interruption: 'streamed',
};

/** Output of one tool call while it runs. */
interface LiveOutput {
  /** What its header showed after the tool's name (the command, the files, the path). */
  label: string;
  /** Text after the last newline, not shown yet. */
  partial: string;
  shown: number;
  hidden: number;
  /** Whether another call ran at the same time: its closing line then names it. */
  concurrent: boolean;
}

/**
 * Renders the events of one turn in human form. Text deltas go straight to stdout so the
 * answer appears as it is written; each tool call gets a header, its output as it comes and a
 * closing line with how it ended.
 */
export class HumanRenderer {
  private midLine = false;
  private readonly live = new Map<string, LiveOutput>();
  private readonly reasoningStreamed = new Set<string>();
  /** True while the last thing written is streamed reasoning. */
  private reasoningOpen = false;

  constructor(private readonly streams: OutputStreams) {}

  /** Handles one event. */
  render(event: AnyNotification): void {
    switch (event.method) {
      case 'item/started':
        if (event.params.kind === 'tool_call') {
          const partial = event.params.partial as { toolName?: string; arguments?: unknown };
          const label = summarizeArguments(partial.toolName ?? '', partial.arguments);
          this.line(`▸ ${partial.toolName} ${label}`);
          const concurrent = this.live.size > 0;
          for (const other of this.live.values()) other.concurrent = true;
          this.live.set(event.params.itemId, { label, partial: '', shown: 0, hidden: 0, concurrent });
        }
        break;
      case 'item/delta':
        this.delta(event.params.itemId, event.params.delta);
        break;
      case 'item/completed':
        this.completed(event.params.item);
        break;
      case 'turn/retrying':
        this.endLine();
        this.streams.stderr.write(`${describeRetry(event.params)}\n`);
        break;
      case 'turn/warning':
        this.endLine();
        this.streams.stderr.write(`warning: ${event.params.message}\n`);
        break;
      default:
        break;
    }
  }

  private delta(itemId: string, delta: { text?: string; reasoning?: string; reasoningRaw?: string; output?: string }): void {
    if (delta.text) {
      // The answer starts on its own line after streamed reasoning.
      if (this.reasoningOpen) this.endLine();
      this.reasoningOpen = false;
      this.streams.stdout.write(delta.text);
      this.midLine = !delta.text.endsWith('\n');
    }
    // Raw reasoning (Chat Completions servers) is shown like a summary: it is all the provider gives.
    const reasoning = delta.reasoning ?? delta.reasoningRaw;
    if (reasoning) {
      if (!this.reasoningStreamed.has(itemId)) {
        this.endLine();
        this.streams.stdout.write('∴ ');
        this.reasoningStreamed.add(itemId);
      }
      this.streams.stdout.write(reasoning.replace(/\n/g, '\n  '));
      this.midLine = true;
      this.reasoningOpen = true;
    }
    const live = this.live.get(itemId);
    if (delta.output && live) {
      const lines = (live.partial + delta.output).split('\n');
      live.partial = lines.pop() ?? '';
      for (const line of lines) this.outputLine(live, line);
    }
  }

  /**
   * One line of a call's live output. While several calls run, their lines would interleave
   * with nothing to tell whose they are: none is shown live then, and each call's output is
   * shown (first and last lines) when it ends, above a closing line that names it.
   */
  private outputLine(live: LiveOutput, line: string): void {
    if (live.shown < LIVE_LINES && this.live.size === 1) {
      this.line(`  │ ${line}`);
      live.shown++;
    } else live.hidden++;
  }

  private completed(item: Item): void {
    if (item.kind === 'assistant_message' && this.midLine) {
      this.endLine();
    } else if (item.kind === 'reasoning') {
      if (!this.reasoningStreamed.delete(item.id) && item.summary.trim()) this.line(`∴ ${item.summary.trim().replace(/\n/g, '\n  ')}`);
      else this.endLine();
    } else if (item.kind === 'tool_call') {
      this.toolCallEnded(item);
    } else if (item.kind === 'model_error') {
      this.endLine();
      this.streams.stderr.write(`${itemFormats.model_error(item)}${item.retries ? ` (after ${item.retries} retries)` : ''}\n`);
    } else if (item.kind === 'interruption') {
      this.line(formatItem(item) ?? '');
    } else if (execItemDisplay[item.kind] === 'line') {
      const text = formatItem(item);
      if (text !== undefined) this.line(text);
    }
  }

  private toolCallEnded(item: Extract<Item, { kind: 'tool_call' }>): void {
    const live = this.live.get(item.id) ?? { label: '', partial: '', shown: 0, hidden: 0, concurrent: false };
    this.live.delete(item.id);
    const lines = item.output.replace(/\n$/, '').split('\n');
    if (item.output.trim() === '') {
      // Nothing to show.
    } else if (live.shown === 0) {
      // No live output (a tool that does not stream, or output only in the result): a head and a tail.
      const head = lines.length > LIVE_LINES + TAIL_LINES ? lines.slice(0, LIVE_LINES) : lines;
      for (const line of head) this.line(`  │ ${line}`);
      if (head.length < lines.length) {
        this.line(`  │ … ${lines.length - head.length - TAIL_LINES} lines not shown`);
        for (const line of lines.slice(-TAIL_LINES)) this.line(`  │ ${line}`);
      }
    } else {
      if (live.partial) this.outputLine(live, live.partial);
      // The result may end with lines the stream did not carry (an exit-code line).
      const unseen = Math.max(0, lines.length - live.shown - live.hidden);
      const hidden = live.hidden + unseen;
      if (hidden > TAIL_LINES) this.line(`  │ … ${hidden - TAIL_LINES} lines not shown`);
      const tail = Math.min(hidden, TAIL_LINES);
      if (tail > 0) for (const line of lines.slice(-tail)) this.line(`  │ ${line}`);
    }
    const exit = item.exitCode !== undefined && item.exitCode !== null ? ` exit ${item.exitCode}` : '';
    // A call cut short by an interruption is never shown as a success, whatever its output said.
    const status = item.status === 'interrupted' ? '■' : item.isError ? '✗' : '✓';
    const note = item.status === 'interrupted' ? ' interrupted' : '';
    const name = live.concurrent && live.label ? `${item.toolName} ${live.label}` : item.toolName;
    this.line(`  ${status} ${name}${exit}${note} (${item.durationMs} ms)`);
  }

  /** Ends a line left open by streamed text. */
  endLine(): void {
    if (this.midLine) this.streams.stdout.write('\n');
    this.midLine = false;
    this.reasoningOpen = false;
  }

  private line(text: string): void {
    this.endLine();
    this.streams.stdout.write(`${text}\n`);
  }
}

/** Renders events as JSON Lines (`--json`): one `{ method, params }` object per line. */
export class JsonRenderer {
  constructor(private readonly streams: OutputStreams) {}

  /** Handles one event. */
  render(event: AnyNotification): void {
    this.streams.stdout.write(`${JSON.stringify(event)}\n`);
  }

  /** Nothing to end in JSON Lines. */
  endLine(): void {}
}
