/**
 * The approval question `openvaala exec` asks on the terminal. Without a terminal the call is
 * denied (a one-shot run has no one to ask, and waiting would hang). Ctrl-C at the question
 * denies the call and tells the caller, which interrupts the turn.
 */
import { createInterface } from 'node:readline/promises';
import type { ApprovalRequest } from '../protocol/index.js';
import type { ServerRequestResult } from '../client/runtime-client.js';
import type { OutputStreams } from './exec-output.js';

/** An answer to `approval/request`. */
export type ApprovalAnswer = ServerRequestResult<'approval/request'>;

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
    const summary = `${request.toolName} ${JSON.stringify(request.arguments)}`;
    if (!this.input.isTTY) {
      this.streams.stderr.write(`approval needed for ${summary} (${request.reason}): denied, as exec has no terminal to ask on\n`);
      return { decision: 'deny', message: 'the call needs approval and this run cannot ask anyone; it was not run' };
    }
    const controller = new AbortController();
    this.active = controller;
    const prompt = createInterface({ input: this.input, output: this.streams.stderr });
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
    ];
    try {
      const answer = (await prompt.question(`Allow ${summary}? (${request.reason})\n  ${choices.join(', ')}: `, { signal: controller.signal })).trim().toLowerCase();
      if (answer === 'y' || answer === 'yes') return { decision: 'allow_once' };
      if (answer === 'a' || answer === 'always') return { decision: 'allow_session' };
      if (prefix && (answer === 'p' || answer === 'prefix')) return { decision: 'allow_prefix', prefix };
      return { decision: 'deny', message: 'the user said no' };
    } catch {
      this.streams.stderr.write('\ndenied (Ctrl-C)\n');
      return { decision: 'deny', message: 'the user pressed Ctrl-C and interrupted the turn' };
    } finally {
      if (this.active === controller) this.active = undefined;
      prompt.close();
    }
  }
}
