/**
 * Programs with separate byte pipes over SSH (`Executor.spawnPiped`): one exec channel whose
 * stdin, stdout and stderr are the program's own, so a protocol spoken over stdio (an MCP
 * server) runs on the remote host unchanged.
 *
 * sshd starts the channel's command as a new session (its own process group); the remote line
 * `exec bash -c SCRIPT` keeps that pid up to the program. The script reports the pid on
 * **stderr** (after a per-run nonce), so stdout carries nothing but the program's output;
 * the marker line is taken out of stderr before anyone sees it. Killing sends TERM (then KILL)
 * to the group and its descendants from a second channel, as for `run`.
 */
import { randomBytes } from 'node:crypto';
import type { ClientChannel } from 'ssh2';
import type { PipedProcess, PipedSpawnRequest, ProcessExit } from '../executor.js';
import { shellQuote } from '../../shell-quote.js';
import { sendKillRound } from './remote-command.js';
import type { ChannelOutcome } from './channel-outcome.js';
import type { RemoteProcessHost } from './remote-process.js';

/** Time between TERM and KILL, in ms. */
const KILL_GRACE_MS = 2000;
/** Longest stderr prefix searched for the start marker (login noise), in bytes. */
const MARKER_SEARCH_LIMIT = 64 * 1024;
/** Exit code reported when the program could not be started (the channel did not open, or `cd` failed). */
const START_FAILURE_EXIT_CODE = 255;

/**
 * The line sent to the remote login shell: prints the marker and pid on stderr, changes to
 * `cwd` when one is given, exports the variables and execs the program with its arguments.
 * @throws Error naming the variable when an environment variable name is not a valid shell name
 */
export function pipedCommandLine(request: PipedSpawnRequest, nonce: string): string {
  const exports = Object.entries(request.env ?? {}).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`environment variable name "${name}" is not valid`);
    return `export ${name}=${shellQuote(value)}`;
  });
  const program = ['exec', request.command, ...request.args].map(shellQuote).join(' ');
  const script = [
    'printf "%s started %s\\n" "$1" "$$" >&2',
    // Not 127, which the shell gives a command it cannot find: callers tell the two apart by the status alone.
    ...(request.cwd !== undefined ? [`cd -- "$2" 2>/dev/null || { printf "cannot change to directory %s\\n" "$2" >&2; exit ${START_FAILURE_EXIT_CODE}; }`] : []),
    ...exports,
    'exec bash -c "$3"',
  ].join('\n');
  return `exec bash --norc --noprofile -c ${shellQuote(script)} openvaala ${shellQuote(nonce)} ${shellQuote(request.cwd ?? '.')} ${shellQuote(program)}`;
}

/** Listeners of one byte stream. */
class ByteListeners {
  private readonly listeners = new Set<(chunk: Buffer) => void>();

  add(listener: (chunk: Buffer) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(chunk: Buffer): void {
    if (chunk.length > 0) for (const listener of this.listeners) listener(chunk);
  }
}

/**
 * Starts `request` on the remote host and returns at once; the channel opens in the
 * background (input written before is queued). A channel that cannot be opened ends the
 * process with exit code 255 and the reason on stderr.
 */
export function startRemotePipedProcess(request: PipedSpawnRequest, host: RemoteProcessHost): PipedProcess {
  const nonce = `openvaala-${randomBytes(8).toString('hex')}`;
  const stdout = new ByteListeners();
  const stderr = new ByteListeners();
  let channel: ClientChannel | undefined;
  let outcome: ChannelOutcome | undefined;
  let pid: number | undefined;
  let ended = false;
  let inputEnded = false;
  let killRequested = false;
  const queuedInput: (string | Uint8Array)[] = [];
  const foundDescendants: number[] = [];
  let resolveExit!: (exit: ProcessExit) => void;
  const exited = new Promise<ProcessExit>((resolve) => (resolveExit = resolve));
  const finish = (exit: ProcessExit): void => {
    if (ended) return;
    ended = true;
    resolveExit(exit);
  };

  const killRound = (signal: 'TERM' | 'KILL'): void => {
    if (pid !== undefined) sendKillRound((line) => host.runHelper(line), pid, signal, foundDescendants);
  };
  const kill = (): void => {
    if (ended) return;
    if (pid === undefined) {
      // Not started yet: the marker sends the kill once the pid is known; a channel that is
      // open without a marker yet is closed, which ends the remote session.
      killRequested = true;
      outcome?.close();
      return;
    }
    killRound('TERM');
    setTimeout(() => killRound('KILL'), KILL_GRACE_MS).unref();
  };

  let commandLine: string;
  try {
    commandLine = pipedCommandLine(request, nonce);
  } catch (error) {
    queueMicrotask(() => {
      stderr.emit(Buffer.from(`${(error as Error).message}\n`));
      finish({ exitCode: START_FAILURE_EXIT_CODE, signal: null });
    });
    return { pid: undefined, write: () => undefined, endInput: () => undefined, onStdout: (listener) => stdout.add(listener), onStderr: (listener) => stderr.add(listener), exited, kill: () => undefined };
  }

  host.openChannel(commandLine).then(
    (opened) => {
      channel = opened.channel;
      outcome = opened.outcome;
      let preamble = Buffer.alloc(0);
      channel.on('data', (data: Buffer) => stdout.emit(data));
      channel.stderr.on('data', (data: Buffer) => {
        if (pid !== undefined) return stderr.emit(data);
        preamble = Buffer.concat([preamble, data]);
        const text = preamble.toString('latin1');
        const match = new RegExp(`${nonce} started (\\d+)\\r?\\n`).exec(text);
        if (match) {
          pid = Number(match[1]);
          stderr.emit(Buffer.concat([preamble.subarray(0, match.index), preamble.subarray(match.index + match[0].length)]));
          preamble = Buffer.alloc(0);
          if (killRequested) kill();
        } else if (preamble.length > MARKER_SEARCH_LIMIT) {
          stderr.emit(preamble);
          preamble = Buffer.alloc(0);
        }
      });
      opened.outcome.onClose((exit) => {
        if (pid === undefined) stderr.emit(preamble);
        finish(exit);
      });
      for (const input of queuedInput.splice(0)) channel.write(input);
      if (inputEnded) channel.end();
      if (killRequested) opened.outcome.close();
    },
    (error: unknown) => {
      stderr.emit(Buffer.from(`cannot start the program: ${(error as Error).message}\n`));
      finish({ exitCode: START_FAILURE_EXIT_CODE, signal: null });
    },
  );

  return {
    get pid() {
      return pid;
    },
    write(data) {
      if (ended || inputEnded) throw new Error('the process has ended or its input is closed');
      if (channel) channel.write(data);
      else queuedInput.push(data);
    },
    endInput() {
      if (inputEnded) return;
      inputEnded = true;
      channel?.end();
    },
    onStdout: (listener) => stdout.add(listener),
    onStderr: (listener) => stderr.add(listener),
    exited,
    kill,
  };
}
