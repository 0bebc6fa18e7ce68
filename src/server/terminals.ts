/**
 * Interactive terminals of one client connection (`terminal/*`, docs/protocol.md
 * "Terminals"): a PTY on a conversation's executor, started with `Executor.spawn({ tty })` so
 * the executor's own confinement applies (the bwrap sandbox for a sandboxed local executor;
 * a PTY channel over SSH). A terminal belongs to the connection that opened it: its id means
 * nothing on another connection, and closing the connection kills it.
 */
import { newId } from '../ids.js';
import type { Executor, ProcessExit, RunningProcess } from '../executors/executor.js';
import type { NotificationParams } from '../protocol/index.js';

/** Terminals one connection may have open at once. */
export const MAX_TERMINALS_PER_CONNECTION = 8;
/**
 * What runs when `terminal/create` names no command: an interactive bash that reads no startup
 * files, so the prompt and the environment are the same on every executor.
 */
export const DEFAULT_TERMINAL_COMMAND = 'exec bash --noprofile --norc -i';

/** After a terminal's program ended, how long its remaining output may take to be read, ms. */
const EXIT_DRAIN_LIMIT_MS = 2000;
/** Output is taken as all read once none came for this long, ms. */
const EXIT_QUIET_MS = 50;

/**
 * Ids of every terminal open in this process, whichever connection owns it: naming another
 * connection's terminal is `forbidden` (-32003), naming none is `not found` (-32004).
 */
const openTerminalIds = new Set<string>();

/** Why a terminal cannot be opened or used; the handler turns it into a protocol error. */
export class TerminalError extends Error {
  /**
   * @param reason `not_found` (no such terminal open), `forbidden` (open, but owned by another
   *   connection), `limit` (too many open), `unsupported` (the executor has no PTY)
   * @param terminalId the terminal named, when one was
   */
  constructor(
    readonly reason: 'not_found' | 'forbidden' | 'limit' | 'unsupported',
    message: string,
    readonly terminalId?: string,
  ) {
    super(message);
    this.name = 'TerminalError';
  }
}

/** What a terminal needs to start. */
export interface TerminalRequest {
  executor: Executor;
  /** Absolute working directory on the executor (already checked to be inside the workspace). */
  cwd: string;
  /** The workspace root, made writable by a sandboxed executor. */
  workspaceRoot: string;
  /** Shell command line; default `DEFAULT_TERMINAL_COMMAND`. */
  command?: string;
  columns: number;
  rows: number;
}

interface OpenTerminal {
  process: RunningProcess;
  seq: number;
  /** True while output reading is paused for the connection's send buffer. */
  paused: boolean;
  /** True once the program has ended (its remaining output is being read). */
  exited: boolean;
}

/**
 * Redacts one stream of text across its chunks, so that a secret value split between two
 * chunks is still caught (SPEC §9: secrets redacted wherever they would appear).
 */
export interface TextStreamRedaction {
  /** The part of `chunk` (with what was held before) that may go out now, redacted; the rest is held. */
  push(chunk: string): string;
  /** What is still held at the end of the stream, redacted. */
  end(): string;
}

/** The terminals of one connection. */
export class ConnectionTerminals {
  private readonly open = new Map<string, OpenTerminal>();
  private closed = false;

  /**
   * @param ready resolves when the connection's send buffer can take more (undefined when it
   *   can now): a terminal stops reading its program's output while it waits
   * @param send delivers a `terminal/output` notification through the connection's send queue
   * @param limit most terminals open at once (default `MAX_TERMINALS_PER_CONNECTION`)
   * @param newRedaction makes the redaction of one terminal's output (platform secrets); default none
   */
  constructor(
    private readonly send: (params: NotificationParams<'terminal/output'>) => void,
    private readonly ready: () => Promise<void> | undefined,
    private readonly limit = MAX_TERMINALS_PER_CONNECTION,
    private readonly newRedaction?: () => TextStreamRedaction,
  ) {}

  /** Terminals open now. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Starts a terminal; its output and then its exit go out as `terminal/output`.
   * @returns the terminal id (`term_…`)
   * @throws TerminalError `unsupported` when the executor cannot run a PTY (virtual), `limit`
   *   when this connection has `limit` terminals open; Error from the executor (closed, no
   *   node-pty, bubblewrap missing)
   */
  create(request: TerminalRequest): string {
    const { executor } = request;
    if (executor.kind === 'virtual' || executor.spawn === undefined) {
      throw new TerminalError('unsupported', `executor "${executor.name}" (${executor.kind}) has no terminals: it runs commands in memory, without a PTY`);
    }
    if (this.closed || this.open.size >= this.limit) {
      throw new TerminalError('limit', `this connection already has ${this.open.size} terminals open (the limit is ${this.limit}); close one first`);
    }
    const terminalId = newId('term');
    const process = executor.spawn({
      command: request.command ?? DEFAULT_TERMINAL_COMMAND,
      cwd: request.cwd,
      workspaceRoot: request.workspaceRoot,
      tty: true,
      columns: request.columns,
      rows: request.rows,
    });
    const terminal: OpenTerminal = { process, seq: 0, paused: false, exited: false };
    this.open.set(terminalId, terminal);
    openTerminalIds.add(terminalId);
    let lastOutputAt = Date.now();
    // Redacted before numbering, so held-back text never leaves a gap in `seq`.
    const redaction = this.newRedaction?.();
    const unsubscribe = process.onOutput((output) => {
      lastOutputAt = Date.now();
      const data = redaction ? redaction.push(output) : output;
      if (data !== '') this.send({ terminalId, seq: ++terminal.seq, data });
      // Backpressure: a client that reads slowly slows the program down, rather than being
      // closed as lagging once 4 MiB of its output have piled up in the send buffer.
      const waiting = terminal.paused || terminal.exited ? undefined : this.ready();
      if (waiting && process.pause && process.resume) {
        terminal.paused = true;
        process.pause();
        const resume = (): void => {
          terminal.paused = false;
          process.resume?.();
        };
        // `ready` never rejects (a closed connection releases its waiters); both paths resume.
        waiting.then(resume, resume);
      }
    });
    const ended = async (exit: ProcessExit): Promise<void> => {
      // The exit can be known before the last output was read (always so while paused): what
      // is left in the terminal's buffer is read first, so the exit is the last thing sent.
      terminal.exited = true;
      if (terminal.paused) process.resume?.();
      // Quiet is counted from the exit too: a program quiet for long before it ended may still
      // have its last output unread when its end is seen (a loop held up, a PTY read late).
      lastOutputAt = Math.max(lastOutputAt, Date.now());
      const deadline = Date.now() + EXIT_DRAIN_LIMIT_MS;
      while (Date.now() < deadline && Date.now() - lastOutputAt < EXIT_QUIET_MS) await new Promise((resolve) => setTimeout(resolve, EXIT_QUIET_MS));
      unsubscribe();
      this.open.delete(terminalId);
      openTerminalIds.delete(terminalId);
      const rest = redaction?.end();
      if (rest) this.send({ terminalId, seq: ++terminal.seq, data: rest });
      this.send({ terminalId, seq: ++terminal.seq, exited: true, exitCode: exit.exitCode, signal: exit.signal });
    };
    // `exited` never rejects; the second handler is there so nothing can float.
    process.exited.then(ended, () => ended({ exitCode: null, signal: null })).catch(() => undefined);
    return terminalId;
  }

  private get(terminalId: string): OpenTerminal {
    const terminal = this.open.get(terminalId);
    if (!terminal && openTerminalIds.has(terminalId)) throw new TerminalError('forbidden', `terminal "${terminalId}" belongs to another connection`, terminalId);
    if (!terminal) throw new TerminalError('not_found', `terminal "${terminalId}" is not open`);
    return terminal;
  }

  /** Types into a terminal. @throws TerminalError `not_found`; Error when its process has ended */
  input(terminalId: string, data: string): void {
    this.get(terminalId).process.write(data);
  }

  /** Changes a terminal's size. @throws TerminalError `not_found` */
  resize(terminalId: string, columns: number, rows: number): void {
    this.get(terminalId).process.resize?.(columns, rows);
  }

  /**
   * Kills a terminal's process group; the exit is reported by the last `terminal/output`.
   * @throws TerminalError `not_found`
   */
  close(terminalId: string): void {
    this.get(terminalId).process.kill();
  }

  /** Kills every terminal and refuses new ones (the connection is gone). */
  closeAll(): void {
    this.closed = true;
    for (const terminal of this.open.values()) terminal.process.kill();
  }
}
