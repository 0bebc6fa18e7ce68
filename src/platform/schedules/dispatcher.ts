/**
 * What the scheduler needs from the runtime: deliver a prompt into a conversation and learn how
 * the turn it started ended. Kept small so the scheduler never depends on the runtime itself.
 */

/** How a turn ended. */
export interface TurnOutcome {
  status: 'completed' | 'failed' | 'interrupted';
  /** Why it failed, when it did. */
  error?: string;
}

/** Delivers scheduled prompts into conversations. */
export interface ScheduleDispatcher {
  /**
   * Sends `prompt` into the conversation as a new user message (a new turn, or queued input
   * when a turn is running). Must be idempotent by `inputKey`: a second delivery with the same
   * key returns the first delivery's turn and starts nothing (this is what keeps a run from
   * happening twice when a process dies right after delivering).
   * @returns the turn the prompt started or was queued for
   * @throws Error when the prompt cannot be delivered (conversation missing, storage error)
   */
  deliver(conversationId: string, prompt: string, inputKey: string): Promise<{ turnId: string }>;
  /** Resolves when the turn has ended (immediately when it already has). */
  waitForTurn(conversationId: string, turnId: string): Promise<TurnOutcome>;
}
