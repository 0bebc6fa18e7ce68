/**
 * The ends of turns, as the runtime announces them (`turn/completed`), for the `session/prompt`
 * requests waiting for them. A turn may end before its prompt asks (the end is kept), and
 * several prompts may wait for one turn (a prompt that answered the turn's question).
 */
import * as acp from '@agentclientprotocol/sdk';
import type { Turn } from '../../protocol/index.js';

/** Ended turns and the prompts waiting for them, for one runtime connection. */
export class TurnEnds {
  private readonly ended = new Map<string, Turn>();
  private readonly waiting = new Map<string, { resolve: (turn: Turn) => void; reject: (error: Error) => void }[]>();
  private closedWith: Error | undefined;

  /** Records a turn's end and resolves those waiting for it. */
  turnEnded(turn: Turn): void {
    this.ended.set(turn.id, turn);
    const waiters = this.waiting.get(turn.id) ?? [];
    this.waiting.delete(turn.id);
    for (const waiter of waiters) waiter.resolve(turn);
  }

  /** The runtime connection closed: every wait, now and later, fails with an ACP internal error naming why. */
  closed(error: Error): void {
    this.closedWith = error;
    for (const waiters of this.waiting.values()) for (const waiter of waiters) waiter.reject(this.closedError());
    this.waiting.clear();
  }

  /**
   * Resolves with the turn once it has ended.
   * @throws acp.RequestError (internal error) when the runtime connection closes first
   */
  wait(turnId: string): Promise<Turn> {
    const done = this.ended.get(turnId);
    if (done) return Promise.resolve(done);
    if (this.closedWith) return Promise.reject(this.closedError());
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(turnId) ?? [];
      waiters.push({ resolve, reject });
      this.waiting.set(turnId, waiters);
    });
  }

  private closedError(): acp.RequestError {
    return acp.RequestError.internalError(undefined, `the runtime server closed the connection before the turn ended: ${this.closedWith?.message ?? 'unknown reason'}`);
  }
}
