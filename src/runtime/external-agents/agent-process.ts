/**
 * An external agent's child process: started with its command, arguments and environment in
 * the conversation's working directory, spoken to over stdin/stdout; the end of its stderr is
 * kept to explain a crash.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { ProcessTracker } from '../../executors/process-tracker.js';

/** How long a process may take to exit after SIGTERM before it is killed, ms. */
const TERMINATE_GRACE_MS = 2_000;
/** How much of stderr is kept to explain a crash, in characters. */
const STDERR_TAIL_CHARS = 2_000;

/** What the process is started with. */
export interface AgentProcessOptions {
  /** The program and its arguments. */
  argv: string[];
  /** Added to the server's environment. */
  env?: Record<string, string>;
  /** Working directory (the conversation's). */
  cwd: string;
  /**
   * Records the process group while it runs (`processes/<pid>.json`) and tags its environment,
   * so a server that restarts after a crash finds and stops an agent left running.
   */
  tracker?: ProcessTracker;
}

/** A running external agent process. */
export class AgentProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private stderr = '';
  private exitDescription: string | undefined;
  /** Resolves with a description of how the process ended (`exited with code 3`, `could not start: …`). */
  readonly exited: Promise<string>;

  /** Starts the process. A program that cannot be started shows as `exited` with the reason. */
  constructor(readonly options: AgentProcessOptions) {
    const [program, ...args] = options.argv;
    if (program === undefined) throw new Error('an agent process needs a command');
    // detached: stopping it stops the agent's own children (shell commands) with it.
    this.child = spawn(program, args, { cwd: options.cwd, env: { ...process.env, ...options.tracker?.environment, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const pid = this.child.pid;
    if (pid !== undefined && options.tracker) {
      const tracker = options.tracker;
      tracker.started(pid);
      this.child.once('exit', () => tracker.ended(pid));
    }
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // A write after the agent exited fails with EPIPE; the exit itself is what is reported.
    this.child.stdin.on('error', () => undefined);
    this.exited = new Promise<string>((resolve) => {
      this.child.once('error', (error) => {
        this.exitDescription ??= `could not start ${JSON.stringify(program)}: ${error.message}`;
        resolve(this.exitDescription);
      });
      this.child.once('exit', (code, signal) => {
        this.exitDescription ??= signal ? `was ended by ${signal}` : `exited with code ${code ?? 'unknown'}`;
        resolve(this.exitDescription);
      });
    });
  }

  /** Calls `listener` with the description of the end once the process has ended. */
  onExit(listener: (description: string) => void): void {
    this.exited.then(listener, () => undefined);
  }

  /** The process's stdin and stdout. */
  get stdio(): { stdin: NodeJS.WritableStream; stdout: NodeJS.ReadableStream } {
    return { stdin: this.child.stdin, stdout: this.child.stdout };
  }

  /** The process id (undefined when it could not be started). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True once the process has ended. */
  get hasExited(): boolean {
    return this.exitDescription !== undefined;
  }

  /** How it ended, with the end of its stderr (for the turn's error). */
  describeExit(): string {
    const tail = this.stderr.trim();
    return `${this.exitDescription ?? 'is running'}${tail ? `; its last output on stderr: ${tail}` : ''}`;
  }

  /** Ends the process and its process group: SIGTERM, then SIGKILL after a grace period. Resolves once it has exited. */
  async stop(): Promise<void> {
    if (this.hasExited) return;
    this.child.stdin.end();
    this.signalGroup('SIGTERM');
    const timer = setTimeout(() => this.signalGroup('SIGKILL'), TERMINATE_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  }
}
