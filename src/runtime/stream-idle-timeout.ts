/**
 * The idle timeout of one model stream: a stream from which nothing arrives for too long is
 * given up as dropped (and so retried), as Codex does with its `stream_idle_timeout_ms`. Without
 * it a provider that stops sending without closing the connection would hold the turn until the
 * user interrupts it.
 */
import { ModelCallError } from '../models/model-errors.js';

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * Watches one model call for silence. Activity is noted with {@link touch}, one assignment per
 * chunk (the stream's hot path); the timer only wakes at the deadline, and re-arms for what is
 * left when something arrived meanwhile.
 */
export class StreamIdleTimeout {
  private readonly controller = new AbortController();
  private lastActivity = performance.now();
  private timer: NodeJS.Timeout | undefined;

  /**
   * Starts watching at once (waiting for the answer's head counts as silence too).
   * @param timeoutMs silence allowed between two chunks, ms
   */
  constructor(private readonly timeoutMs: number) {
    this.arm(timeoutMs);
  }

  /** Aborted, with a retryable `dropped_stream` {@link ModelCallError} as its reason, once the stream was silent for the timeout. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the stream was given up for its silence. */
  get expired(): boolean {
    return this.controller.signal.aborted;
  }

  /** Notes that something arrived. */
  touch(): void {
    this.lastActivity = performance.now();
  }

  /** Stops watching (the stream ended one way or another). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => {
      const silentFor = performance.now() - this.lastActivity;
      if (silentFor < this.timeoutMs) {
        this.arm(this.timeoutMs - silentFor);
        return;
      }
      this.timer = undefined;
      const message = `the stream stalled: no data from the provider for ${formatSeconds(this.timeoutMs)} (limits.retry.streamIdleTimeoutMs)`;
      this.controller.abort(new ModelCallError(message, null, true, undefined, 0, 'dropped_stream', `no chunk for ${Math.round(silentFor)} ms`));
    }, delayMs);
    this.timer.unref();
  }
}
