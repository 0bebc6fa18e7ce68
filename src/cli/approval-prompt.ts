/**
 * The questions `openvaala exec` asks on the terminal: approvals and `request_user_input`.
 * Without a terminal an approval is denied and a question declined (a one-shot run has no one
 * to ask, and waiting would hang). Ctrl-C at a question denies the call (or cancels the
 * question) and tells the caller, which interrupts the turn.
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

/** Asks approval questions one at a time on the terminal. */
export class ApprovalPrompt {
  private active: AbortController | undefined;
  private interruptListener: (() => void) | undefined;

  constructor(
    private readonly streams: OutputStreams,
    private readonly input: NodeJS.ReadStream = process.stdin,
  ) {}

  /** Called when Ctrl-C is pressed at a question (the terminal's raw mode turns it into a key, not a signal). */
  onInterrupt(listener: () => void): void {
    this.interruptListener = listener;
  }

  /** Ends the question being asked, if any: it is answered `deny`. */
  cancel(): void {
    this.active?.abort();
  }

  /** Asks about one call and returns the answer. */
  async ask(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const summary = `${request.toolName} ${JSON.stringify(request.arguments)}${describeDetails(request.details)}`;
    if (!this.input.isTTY) {
      this.streams.stderr.write(`approval needed for ${summary} (${request.reason}): denied, as exec has no terminal to ask on\n`);
      return { decision: 'deny', automatic: true, message: 'it needs approval and this run of openvaala exec has no terminal to ask on, so it was not run' };
    }
    const controller = new AbortController();
    this.active = controller;
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
    try {
      const answer = (await prompt.question(terminalText(`Allow ${summary}? (${request.reason})\n  ${choices.join(', ')} (a letter, then Enter): `), { signal: controller.signal })).trim().toLowerCase();
      if (answer === 'y' || answer === 'yes') return { decision: 'allow_once' };
      if (answer === 'a' || answer === 'always') return { decision: 'allow_session' };
      if (prefix && (answer === 'p' || answer === 'prefix')) return { decision: 'allow_prefix', prefix };
      // No message: the runtime already tells the model that the user denied the call.
      if (answer === 'x') return { decision: 'deny_interrupt' };
      return { decision: 'deny' };
    } catch {
      this.streams.stderr.write('\ndenied (Ctrl-C)\n');
      return { decision: 'deny', message: 'the user pressed Ctrl-C and interrupted the turn' };
    } finally {
      if (this.active === controller) this.active = undefined;
      prompt.close();
    }
  }

  /**
   * Asks a `request_user_input` question: numbered choices (the number or the text answers)
   * and, when allowed, free text. An answer outside the choices of a question that takes no
   * free text is asked again.
   */
  async askQuestion(request: UserInputRequest): Promise<InputAnswer> {
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
      return { declined: 'the user pressed Ctrl-C and interrupted the turn' };
    } finally {
      if (this.active === controller) this.active = undefined;
      prompt.close();
    }
  }
}
