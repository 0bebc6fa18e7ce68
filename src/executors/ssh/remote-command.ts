/**
 * Running one command over an SSH exec channel with the same rules as the local executor:
 * its own process group (so a timeout or abort kills everything it started), output capped
 * and streamed, and a result within about half a second of the command's exit even when a
 * background job (`sleep 30 &`) still holds the output open.
 *
 * The remote login shell is sent a small bash supervisor. It changes to the working
 * directory, exports the extra variables, then starts `setsid bash -c COMMAND` in the
 * background: that bash is a fresh session and process group whose id is its pid, which it
 * prints on the first line of stdout (with a per-run nonce) before it execs the command. The
 * supervisor waits for it only, so sshd reports the exit status as soon as the command exits
 * (later output from leftovers is dropped after a short drain), and re-raises a fatal signal
 * on itself so that sshd reports `exit-signal`. Killing sends TERM (then KILL) to the group
 * and to its descendants that left it, from a second exec channel.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { CommandRequest, CommandResult } from '../executor.js';
import { OutputCollector } from '../output-collector.js';
import { shellQuote } from '../../shell-quote.js';
import type { ChannelExit, ChannelOutcome } from './channel-outcome.js';
import type { ExecChannel } from './connection.js';

/** After the command exits, how long to keep reading buffered output, in ms (restarts on data). */
const DRAIN_IDLE_MS = 100;
/** Upper bound of the drain after exit, in ms: a background job must not hold the result. */
const DRAIN_LIMIT_MS = 500;
/** Time between TERM and KILL, in ms. */
const KILL_GRACE_MS = 2000;
/** After KILL, how long to wait for the exit before giving up on the channel, in ms. */
const GIVE_UP_AFTER_KILL_MS = 3000;
/** Longest stdout prefix searched for the start marker (shell start-up noise), in bytes. */
const MARKER_SEARCH_LIMIT = 64 * 1024;
/** Longest delay `setTimeout` honours, in ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;


/**
 * The line sent to the remote login shell for `request` (see the module comment).
 * @throws Error naming the variable when an environment variable name is not a valid shell name
 */
export function supervisorCommand(request: CommandRequest, nonce: string): string {
  const exports = Object.entries(request.env ?? {}).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`environment variable name "${name}" is not valid`);
    return `export ${name}=${shellQuote(value)}`;
  });
  const supervisor = [
    'cd -- "$2" 2>/dev/null || { printf "%s nocwd\\n" "$1"; exit 127; }',
    ...exports,
    'starter=\'printf "%s started %s\\n" "$1" "$$"; exec bash -c "$2"\'',
    'if command -v setsid >/dev/null 2>&1; then setsid bash --norc --noprofile -c "$starter" openvaala "$1" "$3" </dev/null &',
    'else bash --norc --noprofile -c "$starter" openvaala "$1" "$3" </dev/null & fi',
    'child=$!',
    'wait "$child"; status=$?',
    'if [ "$status" -gt 128 ]; then name=$(kill -l "$status" 2>/dev/null); if [ -n "$name" ]; then trap - "$name"; kill -s "$name" $$; fi; fi',
    'exit "$status"',
  ].join('\n');
  // --norc: bash run by sshd reads ~/.bashrc again otherwise (the login shell already did).
  return `exec bash --norc --noprofile -c ${shellQuote(supervisor)} openvaala ${shellQuote(nonce)} ${shellQuote(request.cwd)} ${shellQuote(request.command)}`;
}

/**
 * The line that sends `signal` to process group `pid`, to `pid` itself and to its descendants
 * (found with `ps`, when there is one), plus the `extraPids` found by an earlier round. It
 * prints the descendants it found, so a later KILL round reaches those that were re-parented.
 */
export function killCommand(pid: number, signal: 'TERM' | 'KILL', extraPids: number[]): string {
  const findDescendants =
    `ps -e -o pid= -o ppid= 2>/dev/null | awk -v root=${pid} '{ parent[$1] = $2 } ` +
    'END { for (p in parent) { q = p; n = 0; while ((q in parent) && q != root && q > 1 && n < 4096) { q = parent[q]; n++ } if (q == root && p != root) print p } }\'';
  return `found=$(${findDescendants}); kill -s ${signal} -- -${pid} ${pid} $found ${extraPids.join(' ')} 2>/dev/null; echo $found`;
}

/**
 * Sends one kill round (`killCommand`) over a helper channel, remembering the descendants it
 * reports in `found` so the next round reaches them even after they were re-parented.
 * Failures are ignored: the connection may already be gone, and then so is the process.
 */
export function sendKillRound(runHelper: (commandLine: string) => Promise<string>, pid: number, signal: 'TERM' | 'KILL', found: number[]): void {
  runHelper(killCommand(pid, signal, found))
    .then((output) => {
      for (const word of output.split(/\s+/)) if (/^\d+$/.test(word)) found.push(Number(word));
    })
    .catch(() => undefined);
}

/** A command running over SSH. */
export interface RunningRemoteCommand {
  /** Settles when the command ended; rejects when it could not start or the connection dropped. */
  readonly result: Promise<CommandResult & { omittedBytes: number }>;
  /** Kills the command's process group (TERM, then KILL after a grace period). */
  kill(): void;
}

/** An exec channel (with its outcome watched since it opened) and a way to hear that its connection dropped. */
export interface OpenedChannel extends ExecChannel {
  /** Registers a callback for the channel's connection dropping; returns the unregister function. */
  onConnectionClosed(listener: () => void): () => void;
}

/** What `startRemoteCommand` needs from the executor. */
export interface RemoteCommandHost {
  /** Executor name and target, for messages. */
  describe: string;
  /** Opens an exec channel running a command line for the remote login shell. */
  openChannel(commandLine: string): Promise<OpenedChannel>;
  /** Runs a short helper command (the kill rounds) on the same host; resolves with its stdout. */
  runHelper(commandLine: string): Promise<string>;
}

/**
 * Starts `request` on the remote host.
 * @param request the command, with its absolute cwd on the remote host
 * @param host channel factory and helpers of the executor
 */
export function startRemoteCommand(request: CommandRequest, host: RemoteCommandHost): RunningRemoteCommand {
  const startedAt = performance.now();
  const nonce = `openvaala-${randomBytes(8).toString('hex')}`;
  const collector = new OutputCollector(request.maxOutputBytes, request.onOutput);
  let pid: number | undefined;
  let outcome: ChannelOutcome | undefined;
  let settled = false;
  let timedOut = false;
  let aborted = false;
  let killRequested = false;
  let giveUpTimer: NodeJS.Timeout | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  let exitedAt: number | undefined;
  let exitCode: number | null = null;
  let exitSignal: string | null = null;
  let unknownExitReason: string | undefined;
  let resolveResult!: (result: CommandResult & { omittedBytes: number }) => void;
  let rejectResult!: (error: Error) => void;
  const result = new Promise<CommandResult & { omittedBytes: number }>((resolve, reject) => {
    resolveResult = resolve;
    rejectResult = reject;
  });
  let cleanUp = (): void => undefined;

  const finish = (failure?: Error): void => {
    if (settled) return;
    settled = true;
    cleanUp();
    if (failure !== undefined) {
      rejectResult(failure);
      return;
    }
    resolveResult({
      exitCode,
      signal: exitSignal,
      ...(exitCode === null && exitSignal === null && unknownExitReason !== undefined ? { unknownExitReason } : {}),
      ...collector.result(),
      timedOut,
      aborted,
      durationMs: Math.round((exitedAt ?? performance.now()) - startedAt),
    });
  };

  const foundDescendants: number[] = [];
  const killRound = (signal: 'TERM' | 'KILL'): void => {
    // Not started yet: the start marker triggers the TERM round once the pid is known.
    if (pid === undefined) return;
    sendKillRound((line) => host.runHelper(line), pid, signal, foundDescendants);
  };
  const kill = (): void => {
    if (killRequested || settled) return;
    killRequested = true;
    killRound('TERM');
    // KILL goes out after the grace period even when the command already ended: a descendant
    // that trapped TERM must not survive. unref: it must not keep the process alive.
    const killTimer = setTimeout(() => killRound('KILL'), KILL_GRACE_MS);
    killTimer.unref();
    giveUpTimer = setTimeout(() => {
      unknownExitReason = `the command did not end within ${KILL_GRACE_MS + GIVE_UP_AFTER_KILL_MS} ms of being killed; its channel was closed`;
      outcome?.close();
      finish();
    }, KILL_GRACE_MS + GIVE_UP_AFTER_KILL_MS);
  };

  if (request.signal?.aborted) {
    aborted = true;
    finish();
    return { result, kill: () => undefined };
  }
  const timeoutTimer = setTimeout(() => {
    timedOut = true;
    kill();
  }, Math.min(request.timeoutMs, MAX_TIMER_MS));
  const onAbort = (): void => {
    aborted = true;
    kill();
  };
  request.signal?.addEventListener('abort', onAbort, { once: true });
  let stopWatchingConnection = (): void => undefined;
  cleanUp = (): void => {
    clearTimeout(timeoutTimer);
    if (drainTimer) clearTimeout(drainTimer);
    if (giveUpTimer) clearTimeout(giveUpTimer);
    request.signal?.removeEventListener('abort', onAbort);
    stopWatchingConnection();
    outcome?.close();
  };

  let commandLine: string;
  try {
    commandLine = supervisorCommand(request, nonce);
  } catch (error) {
    finish(error as Error);
    return { result, kill };
  }

  host.openChannel(commandLine).then(
    (opened) => {
      if (settled) {
        opened.outcome.close();
        return;
      }
      outcome = opened.outcome;
      stopWatchingConnection = opened.onConnectionClosed(() => {
        // After the exit status arrived the command is over; only its late output is lost.
        if (exitedAt !== undefined) finish();
        else finish(new Error(`the connection to ${host.describe} was lost while the command was running; it may still be running there`));
      });
      attach(opened);
    },
    (error: unknown) => finish(error as Error),
  );

  function attach({ channel: opened, outcome: watched }: ExecChannel): void {
    opened.end();
    const stdoutDecoder = new StringDecoder('utf8');
    const stderrDecoder = new StringDecoder('utf8');
    let beforeMarker = '';
    let markerSeen = false;
    const restartDrain = (): void => {
      if (exitedAt === undefined) return;
      if (drainTimer) clearTimeout(drainTimer);
      const wait = Math.min(DRAIN_IDLE_MS, Math.max(0, exitedAt + DRAIN_LIMIT_MS - performance.now()));
      drainTimer = setTimeout(() => finish(), wait);
    };
    const onStdout = (text: string): void => {
      if (markerSeen) {
        collector.add(text);
        return;
      }
      beforeMarker += text;
      const started = new RegExp(`(?:^|\\n)${nonce} (started (\\d+)|nocwd)\\n`).exec(beforeMarker);
      if (started !== null) {
        markerSeen = true;
        if (started[1] === 'nocwd') {
          finish(new Error(`cannot run command in "${request.cwd}" on ${host.describe}: no such directory`));
          return;
        }
        pid = Number(started[2]);
        if (killRequested) killRound('TERM');
        collector.add(beforeMarker.slice(started.index + started[0].length));
      } else if (beforeMarker.length > MARKER_SEARCH_LIMIT) {
        markerSeen = true;
        collector.add(beforeMarker);
      }
    };
    opened.on('data', (data: Buffer) => {
      if (settled) return;
      onStdout(stdoutDecoder.write(data));
      restartDrain();
    });
    opened.stderr.on('data', (data: Buffer) => {
      if (settled) return;
      collector.add(stderrDecoder.write(data));
      restartDrain();
    });
    const takeExit = (exit: ChannelExit): void => {
      exitCode = exit.exitCode;
      exitSignal = exit.signal;
      unknownExitReason = exit.unknownExitReason;
    };
    // Called at once when the status came in the same read as the exec reply.
    watched.onExitStatus((exit) => {
      exitedAt = performance.now();
      takeExit(exit);
      restartDrain();
    });
    watched.onClose((exit) => {
      if (settled) return;
      onStdout(stdoutDecoder.end());
      collector.add(stderrDecoder.end());
      if (exitedAt === undefined) exitedAt = performance.now();
      takeExit(exit);
      finish();
    });
  }

  return { result, kill };
}
