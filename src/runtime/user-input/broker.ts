/**
 * Holds the `request_user_input` questions of one conversation while they wait for the user
 * (SPEC §5: the tool reaches clients like an approval — `input/requested` to every
 * subscriber, `input/request` to those that answer it; the first answer wins and everyone
 * gets `input/resolved`).
 */
import { newId } from '../../ids.js';
import type { UserInputRequest } from '../../protocol/index.js';
import type { UserAnswer } from '../../tools/tool.js';

/** How a question ended, as announced in `input/resolved`. */
export interface UserInputResolution {
  outcome: 'answered' | 'cancelled';
  /** The answer, when `answered`. */
  answer?: string;
  /** `client:<name>` of the connection that answered or declined, or `interruption`. */
  decidedBy: string;
}

/** An answer that the question does not accept (not one of its choices, free text not allowed). */
export class InvalidUserAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidUserAnswerError';
  }
}

/** Events the broker announces. */
export interface UserInputBrokerEvents {
  requested(request: UserInputRequest): void;
  resolved(request: UserInputRequest, resolution: UserInputResolution): void;
}

interface Waiting {
  request: UserInputRequest;
  settle: (answer: UserAnswer, resolution: UserInputResolution) => void;
}

/**
 * Checks an answer against its question.
 * @throws InvalidUserAnswerError when free text is not allowed and the answer is not one of the choices
 */
export function checkUserAnswer(request: Pick<UserInputRequest, 'choices' | 'allowFreeText'>, answer: string): void {
  if (request.allowFreeText) return;
  const choices = request.choices ?? [];
  if (!choices.includes(answer)) throw new InvalidUserAnswerError(`the answer must be one of the choices (${choices.map((choice) => JSON.stringify(choice)).join(', ')}); this question takes no free text`);
}

/** The waiting questions of a conversation. */
export class UserInputBroker {
  private readonly waiting = new Map<string, Waiting>();

  constructor(private readonly events: UserInputBrokerEvents) {}

  /**
   * Announces a question and waits for the first answer or refusal.
   * @throws the abort reason when `signal` aborts first (the turn was interrupted); the
   *   question is then resolved `cancelled` by `interruption`
   */
  request(details: Omit<UserInputRequest, 'requestId' | 'requestedAt'>, signal: AbortSignal): Promise<UserAnswer> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const request: UserInputRequest = { ...details, requestId: newId('input'), requestedAt: Date.now() };
    return new Promise<UserAnswer>((resolve, reject) => {
      const onAbort = () => {
        if (this.waiting.delete(request.requestId)) this.events.resolved(request, { outcome: 'cancelled', decidedBy: 'interruption' });
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(request.requestId, {
        request,
        settle: (answer, resolution) => {
          signal.removeEventListener('abort', onAbort);
          this.waiting.delete(request.requestId);
          resolve(answer);
          this.events.resolved(request, resolution);
        },
      });
      this.events.requested(request);
    });
  }

  /**
   * Answers a question; the first answer wins.
   * @returns false when the question is unknown or already ended
   * @throws InvalidUserAnswerError when the question does not accept the answer (it keeps waiting)
   */
  respond(requestId: string, answer: string, decidedBy: string): boolean {
    const waiting = this.waiting.get(requestId);
    if (!waiting) return false;
    checkUserAnswer(waiting.request, answer);
    waiting.settle({ answered: true, answer }, { outcome: 'answered', answer, decidedBy });
    return true;
  }

  /**
   * Ends a question without an answer: a client said no user can answer it.
   * @returns false when the question is unknown or already ended
   */
  decline(requestId: string, reason: string, decidedBy: string): boolean {
    const waiting = this.waiting.get(requestId);
    if (!waiting) return false;
    waiting.settle({ answered: false, reason }, { outcome: 'cancelled', decidedBy });
    return true;
  }

  /** The questions still waiting, oldest first (of one session when given). */
  list(sessionId?: string): UserInputRequest[] {
    return [...this.waiting.values()].map((entry) => entry.request).filter((request) => sessionId === undefined || request.sessionId === sessionId);
  }
}
