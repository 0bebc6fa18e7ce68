/**
 * Long-running commands over SSH (`Executor.spawn`): an exec channel, with a PTY when `tty`
 * is asked for, whose stdin stays open for `write_stdin`.
 *
 * sshd starts every channel's command as a new session (its own process group), so the remote
 * line `exec bash -c SCRIPT` keeps that pid all the way to the command: the script prints it on
 * the first line (after a per-run nonce), changes directory, exports the variables and execs
 * `bash -c COMMAND`. Killing sends TERM (then KILL) to the group and its descendants from a
 * second channel, as for `run`.
 */
import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { ClientChannel } from 'ssh2';
import type { ProcessExit, RunningProcess, SpawnRequest } from '../executor.js';
import { shellQuote } from '../../shell-quote.js';
import type { ExecChannel } from './connection.js';
import { sendKillRound } from './remote-command.js';

/** Time between TERM and KILL, in ms. */
const KILL_GRACE_MS = 2000;
/** Longest stdout prefix searched for the start marker (login shell noise), in characters. */
const MARKER_SEARCH_LIMIT = 64 * 1024;

/** What `startRemoteProcess` needs from the executor. */
export interface RemoteProcessHost {
  /**
   * Opens an exec channel for a remote command line, with a PTY of that size when given; its
   * outcome must be watched from the moment it opened (`SshConnection.exec` does).
   */
  openChannel(commandLine: string, pty?: { columns: number; rows: number }): Promise<ExecChannel>;
  /** Runs a short helper command (the kill rounds); resolves with its stdout. */
  runHelper(commandLine: string): Promise<string>;
}

/**
 * The line sent to the remote login shell (see the module comment).
 * @throws Error naming the variable when an environment variable name is not a valid shell name
 */
export function spawnCommandLine(request: SpawnRequest, nonce: string): string {
  const exports = Object.entries(request.env ?? {}).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`environment variable name "${name}" is not valid`);
    return `export ${name}=${shellQuote(value)}`;
  });
  const script = ['printf "%s started %s\\n" "$1" "$$"', 'cd -- "$2" 2>/dev/null || { printf "cannot change to directory %s\\n" "$2"; exit 127; }', ...exports, 'exec bash -c "$3"'].join('\n');
  return `exec bash --norc --noprofile -c ${shellQuote(script)} openvaala ${shellQuote(nonce)} ${shellQuote(request.cwd)} ${shellQuote(request.command)}`;
}

/**
 * Starts `request` on the remote host and returns at once; the channel opens in the
 * background (input written before is queued). A channel that cannot be opened ends the
 * process with exit code 255 and the reason as output.
 */
export function startRemoteProcess(request: SpawnRequest, host: RemoteProcessHost): RunningProcess {
  const nonce = `openvaala-${randomBytes(8).toString('hex')}`;
  const listeners = new Set<(chunk: string) => void>();
  const emit = (chunk: string): void => {
    if (chunk !== '') for (const listener of listeners) listener(chunk);
  };
  let channel: ClientChannel | undefined;
  let pid: number | undefined;
  let ended = false;
  let killRequested = false;
  let paused = false;
  const queuedInput: string[] = [];
  const foundDescendants: number[] = [];
  let resolveExit!: (exit: ProcessExit) => void;
  const exited = new Promise<ProcessExit>((resolve) => (resolveExit = resolve));

  const killRound = (signal: 'TERM' | 'KILL'): void => {
    if (pid === undefined) return;
    sendKillRound((line) => host.runHelper(line), pid, signal, foundDescendants);
  };
  const kill = (): void => {
    if (killRequested || ended) return;
    killRequested = true;
    if (pid === undefined) {
      // Not started yet: the start marker sends the TERM round once the pid is known.
      return;
    }
    killRound('TERM');
    setTimeout(() => killRound('KILL'), KILL_GRACE_MS).unref();
  };

  const finish = (exit: ProcessExit): void => {
    if (ended) return;
    ended = true;
    resolveExit(exit);
  };

  let commandLine: string;
  try {
    commandLine = spawnCommandLine(request, nonce);
  } catch (error) {
    queueMicrotask(() => {
      emit(`${(error as Error).message}\n`);
      finish({ exitCode: 255, signal: null });
    });
    return { pid: undefined, write: () => undefined, onOutput: (listener) => (listeners.add(listener), () => listeners.delete(listener)), exited, kill: () => undefined };
  }

  const pty = request.tty ? { columns: request.columns ?? 120, rows: request.rows ?? 40 } : undefined;
  host.openChannel(commandLine, pty).then(
    ({ channel: opened, outcome }) => {
      channel = opened;
      const stdout = new StringDecoder('utf8');
      const stderr = new StringDecoder('utf8');
      let preamble = '';
      opened.on('data', (data: Buffer) => {
        const text = stdout.write(data);
        if (pid !== undefined) {
          emit(text);
          return;
        }
        preamble += text;
        const match = new RegExp(`${nonce} started (\\d+)\\r?\\n`).exec(preamble);
        if (match) {
          pid = Number(match[1]);
          emit(preamble.slice(match.index + match[0].length));
          preamble = '';
          if (killRequested) {
            killRequested = false;
            kill();
          }
        } else if (preamble.length > MARKER_SEARCH_LIMIT) {
          emit(preamble);
          preamble = '';
        }
      });
      opened.stderr.on('data', (data: Buffer) => emit(stderr.write(data)));
      outcome.onClose((exit) => {
        emit(stdout.end());
        emit(stderr.end());
        finish(exit);
      });
      for (const input of queuedInput.splice(0)) opened.write(input);
      if (paused) opened.pause();
    },
    (error: unknown) => {
      emit(`cannot start the command: ${(error as Error).message}\n`);
      finish({ exitCode: 255, signal: null });
    },
  );

  return {
    get pid() {
      return pid;
    },
    write(input) {
      if (ended) throw new Error('the process has ended; its input is closed');
      if (channel) channel.write(input);
      else queuedInput.push(input);
    },
    onOutput(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    exited,
    kill,
    resize(columns, rows) {
      if (pty === undefined || ended) return;
      pty.columns = columns;
      pty.rows = rows;
      // A channel still opening picks the size up from \`pty\`; pixel sizes are unknown (0).
      channel?.setWindow(rows, columns, 0, 0);
    },
    pause() {
      paused = true;
      channel?.pause();
    },
    resume() {
      paused = false;
      channel?.resume();
    },
  };
}
