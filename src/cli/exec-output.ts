/**
 * How `openvaala exec` shows a turn: the answer streamed as it is written, reasoning summaries
 * as they arrive, tool calls with their output live (the first lines, then the last ones when
 * the call ends), retries with their wait, errors on stderr — or, with `--json`, one event per
 * line. Only the answer of exec's own session streams as the answer: a compaction summary, a
 * subagent's answer and hook output are said in one line each, when at all.
 */
import type { AnyNotification, Item, NotificationParams } from '../protocol/index.js';
import { toolCallOutcome } from '../protocol/tool-call-outcome.js';
import { describeHookRun, hookUpdatedArguments } from './exec-hook-runs.js';
import { describeRetry, execItemDisplay, firstLine, formatItem, itemFormats, OUTCOME_MARKS, outcomeWords, summarizeArguments } from './exec-item-formats.js';

export { describeRetry, execItemDisplay, formatDelay, formatItem, formatPlan, itemFormats, planStepMark } from './exec-item-formats.js';

/** Where the renderer writes. */
export interface OutputStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Lines of a tool call's output shown live, as they arrive. */
const LIVE_LINES = 12;
/** Lines shown from the end of an output when more than {@link LIVE_LINES} were hidden. */
const TAIL_LINES = 4;

/** Output of one tool call while it runs. */
interface LiveOutput {
  toolName: string;
  /** The model's id of the call, which the `hook_run` items of its hooks name. */
  callId?: string;
  /** The arguments the model gave, as its header showed them. */
  arguments: unknown;
  sessionId: string;
  /** What its header showed after the tool's name (the command, the files, the path). */
  label: string;
  /** What a hook's line said the call runs instead, when a hook rewrote it. */
  announced?: string;
  /** Text after the last newline, not shown yet. */
  partial: string;
  shown: number;
  hidden: number;
  /** Whether another call ran at the same time: its closing line then names it. */
  concurrent: boolean;
}

/** Options of a {@link HumanRenderer}. */
export interface HumanRendererOptions {
  /**
   * The session exec sent its prompt to: only its assistant messages stream as the answer (and
   * its reasoning as reasoning); another session's (a subagent's) answer is one labelled line.
   * Without it, every session's answer streams.
   */
  sessionId?: string;
}

/**
 * Renders the events of one turn in human form. Text deltas of the answer go straight to stdout
 * so it appears as it is written; each tool call gets a header, its output as it comes and a
 * closing line with how it ended.
 */
export class HumanRenderer {
  private midLine = false;
  private readonly live = new Map<string, LiveOutput>();
  private readonly reasoningStreamed = new Set<string>();
  /** True while the last thing written is streamed reasoning. */
  private reasoningOpen = false;
  /** Model errors of exec's own session already printed: the turn's end does not repeat them. */
  private readonly errorsShown = new Set<string>();
  private readonly sessionId: string | undefined;

  /**
   * @param streams where the turn is written
   * @param options which session's answer is exec's own
   */
  constructor(
    private readonly streams: OutputStreams,
    options: HumanRendererOptions = {},
  ) {
    this.sessionId = options.sessionId;
  }

  /** Whether `message` was printed already as an error of exec's own session (a failed model call). */
  hasShownError(message: string): boolean {
    return this.errorsShown.has(message);
  }

  /** Handles one event. */
  render(event: AnyNotification): void {
    switch (event.method) {
      case 'item/started':
        if (event.params.kind === 'tool_call') {
          const partial = event.params.partial as { toolName?: string; callId?: string; arguments?: unknown };
          const toolName = partial.toolName ?? '';
          const label = summarizeArguments(toolName, partial.arguments);
          this.line(`▸ ${partial.toolName} ${label}`);
          const concurrent = this.live.size > 0;
          for (const other of this.live.values()) other.concurrent = true;
          this.live.set(event.params.itemId, { toolName, ...(partial.callId !== undefined ? { callId: partial.callId } : {}), arguments: partial.arguments, sessionId: event.params.sessionId, label, partial: '', shown: 0, hidden: 0, concurrent });
        }
        break;
      case 'item/delta':
        this.delta(event.params);
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

  /** Whether `sessionId` is exec's own session (every session is, when none was given). */
  private own(sessionId: string): boolean {
    return this.sessionId === undefined || sessionId === this.sessionId;
  }

  private delta({ itemId, kind, sessionId, delta }: NotificationParams<'item/delta'>): void {
    // Other kinds stream text too (a compaction's summary): it is not the answer, and is said in one line when it completes.
    if (delta.text && kind === 'assistant_message' && this.own(sessionId)) {
      // The answer starts on its own line after streamed reasoning.
      if (this.reasoningOpen) this.endLine();
      this.reasoningOpen = false;
      this.streams.stdout.write(delta.text);
      this.midLine = !delta.text.endsWith('\n');
    }
    // Raw reasoning (Chat Completions servers) is shown like a summary: it is all the provider gives.
    const reasoning = delta.reasoning ?? delta.reasoningRaw;
    if (reasoning && this.own(sessionId)) {
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
    if (item.kind === 'assistant_message') {
      if (this.own(item.sessionId)) {
        this.endLine();
        this.cutOff(item, 'answer');
      }
      // A subagent's answer goes to the session that asked for it; here it only says what came back.
      else if (item.text.trim()) this.line(`subagent ${item.sessionId}: ${firstLine(item.text)}`);
    } else if (item.kind === 'reasoning') {
      // A subagent's thinking would read as exec's own: it is left to `conversations show`.
      if (!this.own(item.sessionId)) return;
      if (!this.reasoningStreamed.delete(item.id) && item.summary.trim()) this.line(`∴ ${item.summary.trim().replace(/\n/g, '\n  ')}`);
      else this.endLine();
      this.cutOff(item, 'reasoning');
    } else if (item.kind === 'tool_call') {
      this.toolCallEnded(item);
    } else if (item.kind === 'model_error') {
      this.endLine();
      // A subagent's failure is not exec's turn failing: it is named.
      const whose = this.own(item.sessionId) ? '' : `subagent ${item.sessionId}: `;
      // The message says how many attempts were made when there were retries.
      this.streams.stderr.write(`${whose}${itemFormats.model_error(item)}\n`);
      if (!whose) this.errorsShown.add(item.message);
    } else if (item.kind === 'context_summary') {
      // The summary is the model's notes for itself, often long: its size says enough here.
      this.line(`${itemFormats.context_summary(item)} (${item.text.length} characters)`);
    } else if (item.kind === 'hook_run') {
      this.hookRun(item);
    } else if (item.kind === 'interruption') {
      this.line(formatItem(item) ?? '');
    } else if (execItemDisplay[item.kind] === 'line') {
      const text = formatItem(item);
      if (text !== undefined) this.line(text);
    }
  }

  /**
   * Says on stderr that the text just streamed was cut off (a `failed` item: the provider's
   * stream broke off; the retry or error line that follows says why): stdout cannot take it
   * back, and the retried answer after it would otherwise read as the answer written twice.
   */
  private cutOff(item: Item, what: 'answer' | 'reasoning'): void {
    if (item.status === 'failed') this.streams.stderr.write(`✗ ${what} cut off\n`);
  }

  /**
   * A hook run, when it failed or changed something, naming the call it ran for (the run's
   * `callId`). A run that names no call (logs of earlier versions) and rewrote a call's
   * arguments is taken for the session's call when only one is running.
   */
  private hookRun(item: Extract<Item, { kind: 'hook_run' }>): void {
    const updated = hookUpdatedArguments(item);
    const running = [...this.live.values()].filter((live) => live.sessionId === item.sessionId);
    const call = item.callId !== undefined ? running.find((live) => live.callId === item.callId) : updated && running.length === 1 ? running[0] : undefined;
    const rewritten = call && updated ? summarizeArguments(call.toolName, updated) : undefined;
    const notice = describeHookRun(item, { ...(call ? { label: call.label } : {}), ...(rewritten !== undefined ? { rewritten } : {}) });
    if (!notice) return;
    if (notice.kind === 'warning') {
      this.endLine();
      this.streams.stderr.write(`${notice.text}\n`);
    } else this.line(notice.text);
    if (call && rewritten !== undefined) call.announced = rewritten;
  }

  private toolCallEnded(item: Extract<Item, { kind: 'tool_call' }>): void {
    const live = this.live.get(item.id) ?? { toolName: item.toolName, arguments: item.arguments, sessionId: item.sessionId, label: '', partial: '', shown: 0, hidden: 0, concurrent: false };
    this.live.delete(item.id);
    // The item holds the arguments that ran; a pre_tool_use hook may have replaced those its header showed.
    const rewritten = item.arguments !== undefined && live.arguments !== undefined && JSON.stringify(item.arguments) !== JSON.stringify(live.arguments);
    const ran = rewritten ? summarizeArguments(item.toolName, item.arguments) : live.label;
    if (rewritten && live.announced !== ran) this.line(`  ↻ rewritten by a hook: ${ran}`);
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
    // A call cut short by an interruption is never shown as a success, whatever its output said;
    // nor is a command that exited non-zero or was killed, which the model reads as a normal result.
    const outcome = toolCallOutcome(item);
    // A rewritten call is always named: its header shows what the model asked for, not what ran.
    const name = (rewritten || live.concurrent) && ran ? `${item.toolName} ${ran}` : item.toolName;
    this.line(`  ${OUTCOME_MARKS[outcome.state]} ${name}${outcomeWords(outcome)} (${item.durationMs} ms)`);
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
