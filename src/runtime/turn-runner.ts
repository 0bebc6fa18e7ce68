/**
 * The seam between a session's turn and whoever runs it (SPEC §3 "Turn → Agent", §10
 * "External agents as a conversation's agent"). The session records the turn's start, the
 * user's message and the turn's end; a `TurnRunner` does the work in between: the built-in
 * agent loop (`loop-turn-runner.ts`) or an external agent process (`external-agents/`). Both
 * reach the conversation only through the small `TurnContext` below, so items they report are
 * stored, listed, searched and streamed like any other.
 */
import type { ContentPart, Item, ItemDelta, ToolDetails } from '../protocol/index.js';
import type { PlanUpdate } from '../tools/update-plan.js';
import type { AgentOutcome } from './agent.js';
import type { ApprovalAnswer } from './approvals/broker.js';

/** A permission an external agent asks for, relayed to the clients as `approval/request`. */
export interface RelayedApproval {
  /** The agent's id of the call (ACP `toolCallId`, Codex `itemId`). */
  callId: string;
  /** The `tool_call` item being asked about (its `item/started` was sent before). */
  itemId: string;
  toolName: string;
  arguments: unknown;
  details?: ToolDetails;
  /** Which answers the agent can take: `allow_session` only when it offers "always allow". */
  offersSession: boolean;
  /** Why it is asked (shown to people). */
  reason: string;
}

/** What a turn runner may do to its session while the turn runs. */
export interface TurnContext {
  readonly sessionId: string;
  readonly turnId: string;
  /** The input of the turn (already recorded as the `user_message` item). */
  readonly input: ContentPart[];
  /** Absolute working directory of the conversation's default executor. */
  readonly cwd: string;
  /** Aborted when the turn is interrupted (`session/interrupt`) or the server stops. */
  readonly signal: AbortSignal;
  /** Persists a completed item and tells clients (`item/completed`); rejects when it cannot be written. */
  record(item: Item): Promise<void>;
  /** Tells clients an item began (`item/started`). */
  itemStarted(itemId: string, kind: Item['kind'], partial: Record<string, unknown>): void;
  /** Streams progress of an item in progress (`item/delta`). */
  itemDelta(itemId: string, delta: ItemDelta): void;
  /**
   * Asks the attached clients (`approval/request` with options) and waits for the first
   * answer; the decision is recorded as an `approval` item before this resolves.
   * @throws the abort reason when the turn is interrupted while waiting
   */
  requestApproval(request: RelayedApproval): Promise<ApprovalAnswer>;
  /** Records a plan as a `plan` item and announces it (`plan/updated`). */
  setPlan(plan: PlanUpdate): Promise<void>;
}

/** Runs the work of one turn; resolves with how it ended (rejects only when a record cannot be written). */
export interface TurnRunner {
  runTurn(context: TurnContext): Promise<AgentOutcome>;
}
