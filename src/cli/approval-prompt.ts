/**
 * The questions `openvaala exec` asks on the terminal: approvals and `request_user_input`.
 * Without a terminal an approval is denied and a question declined (a one-shot run has no one
 * to ask, and waiting would hang). Ctrl-C at a question denies the call (or cancels the
 * question) and tells the caller, which interrupts the turn.
 *
 * Questions are asked one at a time, in the order they came: the calls of one step may all
 * need approval, and two line editors reading the same terminal would both take the first
 * answer typed. While a question is on the terminal the rest of exec's output is held (see
 * {@link QuestionOutput}), so nothing is written into the question or the answer being typed.
 */
import { createInterface } from 'node:readline/promises';
import type { ApprovalRequest, ToolDetails, UserInputRequest } from '../protocol/index.js';
import type { ServerRequestResult } from '../client/runtime-client.js';
import { terminalText } from '../tools/terminal-text.js';
import type { OutputStreams } from './exec-output.js';
import { originalStream } from './terminal-streams.js';

/** An answer to `approval/request`. */
export type ApprovalAnswer = ServerRequestResult<'approval/request'>;
/** An answer to `input/request`. */
export type InputAnswer = ServerRequestResult<'input/request'>;

/** What a call will do, as a person reads it before deciding: the command and its directory, or the diffs. */
function describeDetails(details: ToolDetails | undefined): string {
  if (details?.kind === 'command') return `\n  $ ${details.command}\n  in ${details.cwd}`;
  if (details?.kind === 'fileChange') return `\n${details.changes.map((change) => change.unifiedDiff).join('')}`;
  return '';
}

/**
 * What the prompt asks of the rest of exec's output while a question is on the terminal: to
 * end any line left open and keep its writes back (`hold`), then to write them (`release`).
 */
export interface QuestionOutput {
  hold(): void;
  release(): void;
}

/** The answer a question gets when Ctrl-C (or the end of exec) cancels it, asked or waiting. */
const CANCELLED_APPROVAL: ApprovalAnswer = { decision: 'deny', message: 'the user pressed Ctrl-C and interrupted the turn' };
const CANCELLED_INPUT: InputAnswer = { declined: 'the user pressed Ctrl-C and interrupted the turn' };

/**
 * How exec decides a call that needs approval (`--approvals`): `ask` on the terminal (denied
 * when there is none), or `allow` / `deny` every such call without asking. A call the policy
 * allows or denies by itself never reaches the prompt, so neither choice widens or narrows it.
 */
export type ApprovalMode = 'ask' | 'allow' | 'deny';

/** Asks approval questions one at a time on the terminal. */
export class ApprovalPrompt {
  private active: AbortController | undefined;
  private interruptListener: (() => void) | undefined;
  /** The end of the last question asked or waiting: the next one starts after it. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Counts {@link cancel} calls: a question waiting when it was called is not asked. */
  private cancellations = 0;
  /** The approval on the terminal now, and what to say if it is answered elsewhere meanwhile. */
  private asking: { approvalId: string; withdrawn?: string } | undefined;
  /** Approvals waiting their turn, and those of them answered elsewhere (not to be asked). */
  private readonly waiting = new Set<string>();
  private readonly withdrawn = new Set<string>();

  /**
   * @param streams where questions are written (stderr; the line editor gets the stream under a terminal-safe one)
   * @param input the terminal read for answers
   * @param output the rest of exec's output, held while a question is asked (none: nothing is held)
   * @param mode how calls that need approval are decided (`--approvals`; default `ask`)
   */
  constructor(
    private readonly streams: OutputStreams,
    private readonly input: NodeJS.ReadStream = process.stdin,
    private readonly output: QuestionOutput = { hold: () => undefined, release: () => undefined },
    private readonly mode: ApprovalMode = 'ask',
  ) {}

  /** Called when Ctrl-C is pressed at a question (the terminal's raw mode turns it into a key, not a signal). */
  onInterrupt(listener: () => void): void {
    this.interruptListener = listener;
  }

  /** Ends the question being asked, if any, and those waiting their turn: they are answered `deny` (or declined). */
  cancel(): void {
    this.cancellations++;
    this.active?.abort();
  }

  /**
   * Runs `ask` after every question asked before it, with the rest of the output held; a
   * question cancelled while it waited gets `cancelled` without being asked.
   */
  private inTurn<T>(ask: () => Promise<T>, cancelled: T): Promise<T> {
    const cancellations = this.cancellations;
    const answer = this.queue.then(async () => {
      if (this.cancellations !== cancellations) return cancelled;
      this.output.hold();
      try {
        return await ask();
      } finally {
        this.output.release();
      }
    });
    this.queue = answer.catch(() => undefined);
    return answer;
  }

  /**
   * An approval was decided elsewhere (another client, or the turn's interruption:
   * `approval/resolved`): it is taken off the terminal if it is being asked, with `note` said
   * in its place, and not asked if it is waiting. Any other id is ignored.
   */
  withdraw(approvalId: string, note: string): void {
    if (this.asking?.approvalId === approvalId) {
      this.asking.withdrawn = note;
      this.active?.abort();
    } else if (this.waiting.delete(approvalId)) this.withdrawn.add(approvalId);
  }

  /** Asks about one call, after any question asked before it, and returns the answer. */
  ask(request: ApprovalRequest): Promise<ApprovalAnswer> {
    this.waiting.add(request.approvalId);
    return this.inTurn(() => {
      this.waiting.delete(request.approvalId);
      // The server dropped its request when it was decided elsewhere: this answer goes nowhere.
      if (this.withdrawn.delete(request.approvalId)) return Promise.resolve(CANCELLED_APPROVAL);
      return this.askNow(request);
    }, CANCELLED_APPROVAL);
  }

  private async askNow(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const summary = `${request.toolName} ${JSON.stringify(request.arguments)}${describeDetails(request.details)}`;
    if (this.mode !== 'ask') {
      this.streams.stderr.write(terminalText(`${this.mode === 'allow' ? 'allowed' : 'denied'} by --approvals ${this.mode}: ${summary} (${request.reason})`) + '\n');
      return this.mode === 'allow' ? { decision: 'allow_once', automatic: true, message: '--approvals allow' } : { decision: 'deny', automatic: true, message: '--approvals deny' };
    }
    if (!this.input.isTTY) {
      this.streams.stderr.write(`approval needed for ${summary} (${request.reason}): denied, as exec has no terminal to ask on\n`);
      return { decision: 'deny', automatic: true, message: 'it needs approval and this run of openvaala exec has no terminal to ask on, so it was not run' };
    }
    const controller = new AbortController();
    this.active = controller;
    const asking: { approvalId: string; withdrawn?: string } = { approvalId: request.approvalId };
    this.asking = asking;
    // The line editor writes its own cursor escapes, so it gets the stream as it is; its prompts are made safe here.
    const prompt = createInterface({ input: this.input, output: originalStream(this.streams.stderr) });
    prompt.on('SIGINT', () => {
      controller.abort();
      this.interruptListener?.();
    });
    const prefix = request.proposedPrefix;
    const choices = [
      '[y]es once',
      '[a]lways: this exact call, for this session',
      ...(prefix ? [`[p]refix: commands starting with "${prefix.join(' ')}", for this session`] : []),
      '[n]o',
      '[x] no, and interrupt the turn',
    ];
    const letters = `y, a${prefix ? ', p' : ''}, n or x`;
    try {
      let question = terminalText(`Allow ${summary}? (${request.reason})\n  ${choices.join(', ')} (a letter, then Enter): `);
      // A slip of the finger (an empty line, another letter) is asked again, never taken as an answer.
      for (;;) {
        const answer = (await prompt.question(question, { signal: controller.signal })).trim().toLowerCase();
        if (answer === 'y' || answer === 'yes') return { decision: 'allow_once' };
        if (answer === 'a' || answer === 'always') return { decision: 'allow_session' };
        if (prefix && (answer === 'p' || answer === 'prefix')) return { decision: 'allow_prefix', prefix };
        // No message: the runtime already tells the model that the user denied the call.
        if (answer === 'n' || answer === 'no') return { decision: 'deny' };
        if (answer === 'x') return { decision: 'deny_interrupt' };
        question = `  answer ${letters}: `;
      }
    } catch {
      this.streams.stderr.write(`\n${asking.withdrawn === undefined ? 'denied (Ctrl-C)' : terminalText(asking.withdrawn)}\n`);
      return CANCELLED_APPROVAL;
    } finally {
      if (this.active === controller) this.active = undefined;
      if (this.asking === asking) this.asking = undefined;
      prompt.close();
    }
  }

  /**
   * Asks a `request_user_input` question, after any question asked before it: numbered choices
   * (the number or the text answers) and, when allowed, free text. An answer outside the
   * choices of a question that takes no free text is asked again.
   */
  askQuestion(request: UserInputRequest): Promise<InputAnswer> {
    return this.inTurn(() => this.askQuestionNow(request), CANCELLED_INPUT);
  }

  private async askQuestionNow(request: UserInputRequest): Promise<InputAnswer> {
    if (!this.input.isTTY) {
      this.streams.stderr.write(`question from the agent: ${request.question}\nnot answered, as exec has no terminal to ask on\n`);
      return { declined: 'exec runs without a terminal, so no user can answer' };
    }
    const controller = new AbortController();
    this.active = controller;
    // The line editor writes its own cursor escapes, so it gets the stream as it is; its prompts are made safe here.
    const prompt = createInterface({ input: this.input, output: originalStream(this.streams.stderr) });
    prompt.on('SIGINT', () => {
      controller.abort();
      this.interruptListener?.();
    });
    const choices = request.choices ?? [];
    const menu = choices.map((choice, index) => `  ${index + 1}. ${choice}`).join('\n');
    const hint = choices.length === 0 ? 'your answer' : request.allowFreeText ? 'a number or your own answer' : 'a number';
    try {
      this.streams.stderr.write(`${request.question}\n${menu ? `${menu}\n` : ''}`);
      for (;;) {
        const typed = (await prompt.question(`${hint}: `, { signal: controller.signal })).trim();
        const chosen = /^\d+$/.test(typed) ? choices[Number(typed) - 1] : undefined;
        if (chosen !== undefined) return { answer: chosen };
        if (request.allowFreeText || choices.includes(typed)) return { answer: typed };
        this.streams.stderr.write(`answer with a number from 1 to ${choices.length}\n`);
      }
    } catch {
      this.streams.stderr.write('\nnot answered (Ctrl-C)\n');
      return CANCELLED_INPUT;
    } finally {
      if (this.active === controller) this.active = undefined;
      prompt.close();
    }
  }
}
