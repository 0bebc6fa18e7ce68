/**
 * Which events of a conversation are `openvaala exec`'s own. Exec subscribes to the whole
 * conversation, and a conversation continued with `--resume` may be busy: turns queued before
 * exec's prompt (another client's, another exec's) run first, and their events reach every
 * subscriber. Exec prints only the turn its prompt started — known once `session/input`
 * answers with its id, so events that arrive before are kept back until then.
 *
 * Exec's own are: the events of that turn; while it runs, the events of the other sessions of
 * the conversation (its subagents, which work for it) and those that belong to no turn
 * (conversation and session state). Nothing before the turn starts is exec's: the stream of
 * `--json` starts with the turn's `turn/started` and ends with its `turn/completed`.
 */
import type { AnyNotification } from '../protocol/index.js';

/** The session and turn an event is about, where it says. */
export interface EventPlace {
  sessionId?: string;
  turnId?: string;
}

/** Where an event belongs, from the fields notifications carry (`turnId`, or a turn, item or approval with one). */
export function eventPlace(event: AnyNotification): EventPlace {
  const params = (event.params ?? {}) as {
    sessionId?: unknown;
    turnId?: unknown;
    turn?: { id?: unknown; sessionId?: unknown };
    item?: { turnId?: unknown; sessionId?: unknown };
    approval?: { turnId?: unknown; sessionId?: unknown };
    request?: { turnId?: unknown; sessionId?: unknown };
  };
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const place: EventPlace = {};
  const sessionId = text(params.sessionId) ?? text(params.turn?.sessionId) ?? text(params.item?.sessionId) ?? text(params.approval?.sessionId) ?? text(params.request?.sessionId);
  const turnId = text(params.turnId) ?? text(params.turn?.id) ?? text(params.item?.turnId) ?? text(params.approval?.turnId) ?? text(params.request?.turnId);
  if (sessionId !== undefined) place.sessionId = sessionId;
  if (turnId !== undefined) place.turnId = turnId;
  return place;
}

/** Picks exec's own events out of a conversation's (see the module comment). */
export class OwnTurnEvents {
  private turnId: string | undefined;
  /** Events received before the turn's id was known. */
  private held: AnyNotification[] = [];
  /** From the turn's start to its end. */
  private running = false;

  /** @param sessionId the session exec sent its prompt to */
  constructor(private readonly sessionId: string) {}

  /**
   * Takes one event of the conversation.
   * @returns the events to show now: this one if it is exec's, none while the turn's id is unknown
   */
  receive(event: AnyNotification): AnyNotification[] {
    if (this.turnId === undefined) {
      this.held.push(event);
      return [];
    }
    return this.owns(event) ? [event] : [];
  }

  /**
   * The turn exec's prompt started is known (`session/input` answered).
   * @returns the events received meanwhile that are exec's, in their order
   */
  start(turnId: string): AnyNotification[] {
    this.turnId = turnId;
    const held = this.held;
    this.held = [];
    return held.filter((event) => this.owns(event));
  }

  /**
   * Whether exec should answer a question (an approval, a question of the agent) of
   * `place`: one of its turn, or of a subagent while its turn runs. Another turn's question is
   * left to the clients of that turn.
   */
  asksFor(place: EventPlace): boolean {
    if (place.sessionId === this.sessionId) return place.turnId === this.turnId;
    return this.running;
  }

  private owns(event: AnyNotification): boolean {
    const place = eventPlace(event);
    if (place.turnId === this.turnId && (place.sessionId === undefined || place.sessionId === this.sessionId)) {
      // Its first event is its turn/started; if that was missed (an older server), the first event that names it.
      this.running = event.method !== 'turn/completed';
      return true;
    }
    if (place.sessionId === this.sessionId && place.turnId !== undefined) return false;
    return this.running;
  }
}
