/**
 * A session's waiting work (SPEC §3: a session runs one turn at a time; input during a turn
 * is queued or steering): the queue of inputs that start the next turns, the steering read
 * before the running turn's next model call, withdrawal of either while it waits
 * (`session/dequeue`), and the memory of client message ids that makes `session/input`
 * idempotent.
 */
import type { ContentPart, InputAuthor, Item, ReasoningEffort, Session } from '../protocol/index.js';
import { StateConflictError } from './state-conflict-error.js';

/** What is recorded with a user's input on its `user_message` item. */
export interface InputOrigin {
  /** Who sent it. */
  author?: InputAuthor;
  /** The client's own id of the message, echoed. */
  clientMessageId?: string;
}

/** How a `session/input` is to be taken, besides its content and mode. */
export interface InputOptions extends InputOrigin {
  /** The effort for the turn this input starts (over the model's configured one). */
  reasoningEffort?: ReasoningEffort;
  /** `provider/model` for the turn this input starts only (already checked by the caller). */
  model?: string;
  /** With `steer`: the turn it is meant for; refused unless that turn is the running one. */
  expectedTurnId?: string;
}

/** Work waiting for the session: a user input, a message from another session, or a manual compaction. */
export type PendingWork = { id: string; turnId: string } & (
  | ({ kind: 'input'; content: ContentPart[]; reasoningEffort?: ReasoningEffort; model?: string } & InputOrigin)
  | { kind: 'agent'; fromSessionId: string; text: string }
  | { kind: 'compact' }
);

/** Steering input waiting for the running turn's next model call. */
export interface SteeringInput extends InputOrigin {
  id: string;
  content: ContentPart[];
}

/** The answer `session/input` gave for an input (returned again for a repeat of its client message id). */
export interface InputOutcome {
  inputId: string;
  queued: boolean;
  turnId?: string;
}

/**
 * How many client message ids a session remembers, and how many started input ids: the most
 * recent ones, oldest forgotten first. A repeat within this window is answered from memory;
 * after it (or after a restart), from the session's recent items.
 */
export const REMEMBERED_INPUTS = 1000;

/** How many of a session's latest items are searched for an input's client message id (past the memory above, or after a restart). */
export const ITEMS_SEARCHED_FOR_REPEATS = 2000;

/**
 * The answer for a client message id already recorded on a `user_message` among the session's
 * latest items (oldest first); undefined when none (or no id).
 */
export function answeredInItems(items: readonly Item[], clientMessageId: string | undefined): InputOutcome | undefined {
  if (clientMessageId === undefined) return undefined;
  for (let index = items.length - 1; index >= Math.max(0, items.length - ITEMS_SEARCHED_FOR_REPEATS); index--) {
    const item = items[index];
    if (item?.kind === 'user_message' && item.clientMessageId === clientMessageId) return { inputId: item.inputId ?? item.id, queued: false, turnId: item.turnId };
  }
  return undefined;
}

/**
 * Checks that `turnId` is the session's running turn before acting on it.
 * @param action what the caller does, for the message (`steer`, `interrupt`)
 * @throws StateConflictError reason `no_running_turn` (no turn runs) or `turn_mismatch` (another turn runs)
 */
export function requireRunningTurn(session: Pick<Session, 'id' | 'activeTurnId'>, turnId: string, action: string): void {
  const running = session.activeTurnId;
  if (running === null) throw new StateConflictError(`cannot ${action} turn ${turnId}: no turn is running in session ${session.id}`, 'no_running_turn');
  if (running !== turnId) throw new StateConflictError(`cannot ${action} turn ${turnId}: the running turn of session ${session.id} is ${running}`, 'turn_mismatch');
}

function textOf(content: ContentPart[]): string {
  return content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join(' ');
}

/** Adds to an insertion-ordered map, forgetting the oldest entries past `limit`. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > limit) {
    const oldest = map.keys().next();
    if (oldest.done) break;
    map.delete(oldest.value);
  }
}

/** A session's waiting work. Owned by one session; every method is synchronous, so each is atomic. */
export class InputQueue {
  /** Work for the next turns, oldest first. */
  readonly pending: PendingWork[] = [];
  private steering: SteeringInput[] = [];
  /** Ids of inputs that started (or were read by) a turn: withdrawing them is a conflict, not "unknown". */
  private readonly started = new Map<string, true>();

  /** True while input waits: queued for a next turn, or steering not yet read. */
  get hasWaiting(): boolean {
    return this.pending.length > 0 || this.steering.length > 0;
  }
  /** Client message id → the answer given, or the answer being made (a repeat arriving meanwhile waits for it). */
  private readonly answers = new Map<string, Promise<InputOutcome>>();

  /** The queue as clients see it (`session.queuedInputs`). */
  describe(): Session['queuedInputs'] {
    return this.pending.map((work) => ({
      id: work.id,
      text: work.kind === 'input' ? textOf(work.content) : work.kind === 'agent' ? work.text : '(compact the conversation)',
      ...(work.kind === 'input' && work.clientMessageId !== undefined ? { clientMessageId: work.clientMessageId } : {}),
    }));
  }

  /** Takes the next work to run, marking it started. */
  next(): PendingWork | undefined {
    const work = this.pending.shift();
    if (work) remember(this.started, work.id, true, REMEMBERED_INPUTS);
    return work;
  }

  /** Adds steering for the running turn. */
  steer(input: SteeringInput): void {
    this.steering.push(input);
  }

  /** Removes and returns the steering waiting for the running turn, marking it read. */
  takeSteering(): SteeringInput[] {
    const taken = this.steering.splice(0);
    for (const input of taken) remember(this.started, input.id, true, REMEMBERED_INPUTS);
    return taken;
  }

  /** Steering the running turn did not read in time: it starts the next turn, ahead of the queue. */
  requeueLateSteering(newTurnId: () => string): void {
    const late = this.steering.splice(0);
    this.pending.unshift(...late.map((input): PendingWork => ({ id: input.id, turnId: newTurnId(), kind: 'input', content: input.content, ...originOf(input) })));
  }

  /** Empties the queue and the steering (the session closes). */
  clear(): void {
    this.pending.splice(0);
    this.steering.splice(0);
  }

  /**
   * Withdraws a waiting input (queued, or steering not yet read).
   * @returns true when it was withdrawn from the queue (the queue as clients see it changed), false for steering
   * @throws StateConflictError reason `input_started` when it already started its turn or was read
   * @throws UnknownInputError when no input of that id is known to this session
   */
  withdraw(inputId: string): boolean {
    const index = this.pending.findIndex((work) => work.id === inputId);
    if (index >= 0) {
      this.pending.splice(index, 1);
      return true;
    }
    const steeringIndex = this.steering.findIndex((input) => input.id === inputId);
    if (steeringIndex >= 0) {
      this.steering.splice(steeringIndex, 1);
      return false;
    }
    if (this.started.has(inputId)) throw new StateConflictError(`input ${inputId} has already started its turn`, 'input_started');
    throw new UnknownInputError(inputId);
  }

  /**
   * Runs `accept` once per client message id: a repeat gets the first answer (or waits for it
   * while it is being made). A failed attempt is forgotten, so the client may try again.
   * Without an id, `accept` simply runs.
   */
  async once(clientMessageId: string | undefined, accept: () => Promise<InputOutcome>): Promise<InputOutcome> {
    if (clientMessageId === undefined) return accept();
    const known = this.answers.get(clientMessageId);
    if (known) return known;
    const answer = accept();
    remember(this.answers, clientMessageId, answer, REMEMBERED_INPUTS);
    answer.catch(() => {
      if (this.answers.get(clientMessageId) === answer) this.answers.delete(clientMessageId);
    });
    return answer;
  }
}

/**
 * A session's state as written to the metadata log: queued inputs keep their ids but not their
 * text. What waits has not been through `user_prompt_submit` hooks yet, and a prompt they refuse
 * must be kept nowhere; the queue lives in memory, so clients read its text from `session/updated`.
 */
export function storedSessionState(state: Session): Session {
  if (state.queuedInputs.every((input) => input.text === '')) return state;
  return { ...state, queuedInputs: state.queuedInputs.map((input) => ({ ...input, text: '' })) };
}

/** The queued work for a user's input: the turn it will start, with the input's own model, effort and origin. */
export function inputWork(inputId: string, turnId: string, content: ContentPart[], options: InputOptions): PendingWork {
  return { id: inputId, turnId, kind: 'input', content, ...(options.reasoningEffort ? { reasoningEffort: options.reasoningEffort } : {}), ...(options.model ? { model: options.model } : {}), ...originOf(options) };
}

/** The author and client message id of an input, as optional fields. */
export function originOf(origin: InputOrigin): InputOrigin {
  return { ...(origin.author ? { author: origin.author } : {}), ...(origin.clientMessageId !== undefined ? { clientMessageId: origin.clientMessageId } : {}) };
}

/** `session/dequeue` named an input the session does not know (never sent, or forgotten long ago). */
export class UnknownInputError extends Error {
  constructor(readonly inputId: string) {
    super(`no input "${inputId}" is waiting or known in this session`);
    this.name = 'UnknownInputError';
  }
}
