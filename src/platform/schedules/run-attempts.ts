/**
 * Delivery of one run with retries (docs/platform.md, "Scheduled tasks"): each attempt is
 * recorded before the prompt is delivered, with an input key derived from the run and the
 * attempt number, so a re-delivery after a crash is recognised by the runtime and not taken
 * twice. A failed attempt is retried after a delay that doubles from `initialDelayMs` up to
 * `maxDelayMs`; no retry starts later than `deadlineMs` after the occurrence.
 */
import type { ScheduleDispatcher } from './dispatcher.js';
import type { RetryPolicy, StoredRun } from './task-types.js';

/** The key a delivery of attempt `attempt` of a run is sent with (`clientMessageId` of the user message). */
export function inputKeyOf(run: StoredRun, attempt: number): string {
  return `schedule:${run.id}#${attempt}`;
}

/**
 * Delay before retry number `retry` (1 for the first), ms: `initialDelayMs * 2^(retry-1)`,
 * at most `maxDelayMs`.
 */
export function retryDelay(policy: RetryPolicy, retry: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(retry - 1, 40));
}

/**
 * When the next attempt of a run whose attempt `attempts` just failed starts, ms since the
 * epoch; undefined when that would be past the retry deadline.
 */
export function nextRetryAt(policy: RetryPolicy, run: StoredRun, now: number): number | undefined {
  const at = now + retryDelay(policy, run.attempts);
  return at <= run.occurrenceAt + policy.deadlineMs ? at : undefined;
}

/** What an attempt leads to. */
export type AttemptResult = { status: 'completed' } | { status: 'interrupted' } | { status: 'failed'; error: string };

/** Hooks of an attempt. */
export interface AttemptHooks {
  /** Called after the attempt is recorded and before the prompt is delivered. */
  beforeDelivery?: (run: StoredRun) => Promise<void>;
  /** Wraps the wait for the turn's end (the scheduler uses it to tell waiting from working). */
  waitForTurn?: <T>(waiting: Promise<T>) => Promise<T>;
}

/**
 * Makes one delivery attempt: records the attempt (status `claimed`, `attempts` counted) unless
 * `resume` says the recorded attempt is being re-sent, delivers, records `dispatched` with the
 * turn, and waits for the turn.
 * @param save persists the run; called before the delivery and after it
 */
export async function attemptRun(run: StoredRun, prompt: string, dispatcher: ScheduleDispatcher, save: (run: StoredRun) => Promise<void>, resume: boolean, hooks: AttemptHooks = {}): Promise<AttemptResult> {
  if (!resume || run.attempts === 0) {
    run.attempts += 1;
    run.status = 'claimed';
    delete run.retryAt;
    await save(run);
  }
  if (hooks.beforeDelivery) await hooks.beforeDelivery(run);
  let turnId: string;
  try {
    ({ turnId } = await dispatcher.deliver(run.conversationId, prompt, inputKeyOf(run, run.attempts)));
  } catch (error) {
    return { status: 'failed', error: `delivery failed: ${(error as Error).message}` };
  }
  run.status = 'dispatched';
  run.turnId = turnId;
  await save(run);
  const waiting = dispatcher.waitForTurn(run.conversationId, turnId);
  const outcome = await (hooks.waitForTurn ? hooks.waitForTurn(waiting) : waiting);
  if (outcome.status === 'completed') return { status: 'completed' };
  if (outcome.status === 'interrupted') return { status: 'interrupted' };
  return { status: 'failed', error: `turn ${turnId} failed${outcome.error ? `: ${outcome.error}` : ''}` };
}
