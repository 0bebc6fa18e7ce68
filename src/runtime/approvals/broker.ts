/**
 * Holds the approval requests of one conversation while they wait for a person (SPEC §5:
 * `approval/request` goes to every attached client; the first answer wins, the others are
 * told with `approval/resolved`; with no client attached the call simply waits).
 */
import { newId } from '../../ids.js';
import type { ApprovalDecision, ApprovalRequest } from '../../protocol/index.js';
import { commandMatchesPrefix, shellCommandOf } from './command-prefix.js';

/** The answer to one request. */
export interface ApprovalAnswer {
  decision: ApprovalDecision;
  /** Who answered (`client:<name>`). */
  decidedBy: string;
  /** A message for the model (with `deny`). */
  message?: string;
  /** With `allow_prefix`: the words allowed (default: the request's proposed prefix). */
  prefix?: string[];
  /** True when the client answered by its own rule, without asking a person (see `approval/respond`). */
  automatic?: boolean;
}

/** An answer that cannot apply to its request (e.g. `allow_prefix` for a call that runs no shell command). */
export class InvalidApprovalAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidApprovalAnswerError';
  }
}

/**
 * Checks an answer against its request and fills in the prefix of `allow_prefix`.
 * @throws InvalidApprovalAnswerError when `allow_prefix` has no prefix to allow, or the prefix
 *   does not match the call's own command
 */
function completeAnswer(request: ApprovalRequest, answer: ApprovalAnswer): ApprovalAnswer {
  if (answer.decision !== 'allow_prefix') {
    const { prefix: _ignored, ...rest } = answer;
    return rest;
  }
  const command = shellCommandOf(request.toolName, request.arguments);
  const prefix = answer.prefix ?? request.proposedPrefix;
  if (command === undefined || !prefix) {
    throw new InvalidApprovalAnswerError(`allow_prefix applies to a call that runs one simple shell command; ${request.toolName} call ${request.callId} has no command prefix to allow`);
  }
  if (!commandMatchesPrefix(command, prefix)) {
    throw new InvalidApprovalAnswerError(`prefix ${JSON.stringify(prefix)} does not match the words of the command being approved (${JSON.stringify(command)})`);
  }
  return { ...answer, prefix };
}

interface Waiting {
  request: ApprovalRequest;
  resolve: (answer: ApprovalAnswer) => void;
}

/** Events the broker announces. */
export interface ApprovalBrokerEvents {
  requested(request: ApprovalRequest): void;
  resolved(request: ApprovalRequest, answer: ApprovalAnswer): void;
}

/** The waiting approval requests of a conversation. */
export class ApprovalBroker {
  private readonly waiting = new Map<string, Waiting>();

  constructor(private readonly events: ApprovalBrokerEvents) {}

  /**
   * Announces a request and waits for the first answer.
   * @throws the abort reason when `signal` aborts first (the turn was interrupted)
   */
  request(details: Omit<ApprovalRequest, 'approvalId' | 'requestedAt'>, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const request: ApprovalRequest = { ...details, approvalId: newId('appr'), requestedAt: Date.now() };
    return new Promise<ApprovalAnswer>((resolve, reject) => {
      const onAbort = () => {
        if (this.waiting.delete(request.approvalId)) {
          this.events.resolved(request, { decision: 'deny', decidedBy: 'interruption', message: 'the turn was interrupted' });
        }
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(request.approvalId, {
        request,
        resolve: (answer) => {
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      });
      this.events.requested(request);
    });
  }

  /**
   * Answers a request. The first answer wins.
   * @returns false when the request is unknown or was already answered
   * @throws InvalidApprovalAnswerError when the answer cannot apply (the request keeps waiting)
   */
  respond(approvalId: string, given: ApprovalAnswer): boolean {
    const waiting = this.waiting.get(approvalId);
    if (!waiting) return false;
    const answer = completeAnswer(waiting.request, given);
    this.waiting.delete(approvalId);
    waiting.resolve(answer);
    this.events.resolved(waiting.request, answer);
    return true;
  }

  /** The requests still waiting, oldest first. */
  list(sessionId?: string): ApprovalRequest[] {
    return [...this.waiting.values()].map((entry) => entry.request).filter((request) => sessionId === undefined || request.sessionId === sessionId);
  }
}
