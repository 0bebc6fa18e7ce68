/**
 * How the command of one SSH exec channel ended, observed without a race.
 *
 * RFC 4254 §6.10: the server reports the end with an `exit-status` (code) or `exit-signal`
 * (signal name without `SIG`) channel request, sent before it closes the channel; the report
 * is optional, a server may close without one. What ssh2 (1.x, `lib/client.js`,
 * `lib/utils.js` `onCHANNEL_CLOSE`) guarantees:
 * - it emits `exit` synchronously while parsing that request, and only for the first report;
 * - on CHANNEL_CLOSE it unregisters the channel (a report arriving later is dropped) and
 *   emits `close` only once the channel's stdout stream has ended, that is after every
 *   buffered byte was read, with the recorded report as arguments (`code`, or `null, signal`);
 *   when the connection drops it closes every channel the same way, without a report.
 * So `exit` always comes before `close`, but only for listeners that exist when it is
 * emitted. ssh2 parses all packets of one socket read in one synchronous loop, and the exec
 * callback runs inside it (on CHANNEL_SUCCESS). For a quick command the data, report, EOF and
 * CLOSE often arrive in that same read (always under load): a listener attached after a
 * promise hop then misses `exit`, while `close`, which waits for stdout to be read, still
 * comes, and the command looked as if it had no exit code.
 *
 * `watchChannelOutcome` must therefore be called synchronously in the exec callback. It also
 * takes the report ssh2 passes to `close` handlers, the final word once the channel closed.
 */
import type { ClientChannel } from 'ssh2';

/** How a channel's command ended, as reported by the SSH server. */
export interface ChannelExit {
  /** Exit code (`exit-status`); null when a signal ended it or nothing was reported. */
  exitCode: number | null;
  /** Signal name with the `SIG` prefix (`SIGTERM`) when `exit-signal` was reported, else null. */
  signal: string | null;
  /** Present only when neither a code nor a signal is known: why not. */
  unknownExitReason?: string;
}

/** The watched end of one exec channel (see the module comment). */
export interface ChannelOutcome {
  /**
   * Calls `listener` once with the server's report: synchronously at once when it already
   * arrived, else when it arrives. Never called when the channel closes without a report.
   * @returns a function removing the listener
   */
  onExitStatus(listener: (exit: ChannelExit) => void): () => void;
  /**
   * Calls `listener` once after the channel closed and its stdout was read to the end (so only
   * when someone reads stdout): with the report, or with `exitCode` and `signal` null and
   * `unknownExitReason` saying why none came. Called at once when that already happened.
   * @returns a function removing the listener
   */
  onClose(listener: (exit: ChannelExit) => void): () => void;
  /** Closes the channel from this side (idempotent); a missing report is then explained so. */
  close(): void;
}

/** What the watcher needs to know besides the channel. */
export interface ChannelOutcomeOptions {
  /** True once the connection carrying the channel has closed or dropped. */
  connectionClosed(): boolean;
}

/** `SIGTERM` for `TERM` or `SIGTERM` (ssh2 adds the prefix, RFC 4254 names lack it). */
function signalName(name: string): string {
  return `SIG${name.replace(/^SIG/, '')}`;
}

/** The report from `exit`/`close` arguments, or undefined when they hold none. */
function reportFrom(code: unknown, signal: unknown): ChannelExit | undefined {
  if (typeof code === 'number') return { exitCode: code, signal: null };
  if (typeof signal === 'string' && signal !== '') return { exitCode: null, signal: signalName(signal) };
  return undefined;
}

/**
 * Starts watching `channel`. Call it synchronously in ssh2's exec callback, before any
 * `await` or promise hop, or an early report is missed (see the module comment).
 * @param channel an exec channel just opened by ssh2's `Client.exec`
 * @returns the outcome: the report as soon as it arrives, and the final one once closed
 */
export function watchChannelOutcome(channel: ClientChannel, options: ChannelOutcomeOptions): ChannelOutcome {
  let reported: ChannelExit | undefined;
  let closedHere = false;
  const listeners = new Set<(exit: ChannelExit) => void>();
  const record = (exit: ChannelExit): void => {
    if (reported !== undefined) return;
    reported = exit;
    for (const listener of [...listeners]) listener(exit);
    listeners.clear();
  };
  channel.on('exit', (code: unknown, signal: unknown) => {
    const exit = reportFrom(code, signal);
    if (exit !== undefined) record(exit);
  });
  let final: ChannelExit | undefined;
  const closeListeners = new Set<(exit: ChannelExit) => void>();
  channel.once('close', (code: unknown, signal: unknown) => {
    const exit = reportFrom(code, signal);
    if (exit !== undefined) record(exit);
    if (reported !== undefined) {
      final = reported;
    } else {
      let reason: string;
      if (options.connectionClosed()) reason = 'the SSH connection closed before the server reported how the command ended';
      else if (closedHere) reason = 'the channel was closed from this side before the SSH server reported how the command ended';
      else reason = 'the SSH server closed the channel without reporting an exit status or signal (RFC 4254 §6.10)';
      final = { exitCode: null, signal: null, unknownExitReason: reason };
    }
    for (const listener of [...closeListeners]) listener(final);
    closeListeners.clear();
  });
  return {
    onExitStatus(listener) {
      if (reported !== undefined) {
        listener(reported);
        return () => undefined;
      }
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onClose(listener) {
      if (final !== undefined) {
        listener(final);
        return () => undefined;
      }
      closeListeners.add(listener);
      return () => closeListeners.delete(listener);
    },
    close() {
      closedHere = true;
      channel.close();
    },
  };
}
