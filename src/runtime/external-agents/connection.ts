/**
 * What the pool of external agents needs from one protocol (ACP, Codex app-server): a
 * connection to a started agent process that runs turns, and the way to open one.
 */
import type { AgentDefinition } from '../../config/agents.js';
import type { Logger } from '../../logger.js';
import type { AgentOutcome } from '../agent.js';
import type { TurnContext } from '../turn-runner.js';
import type { AgentProcess } from './agent-process.js';

/** How long an agent has to end a turn after it was asked to stop, before its process is ended, ms. */
export const CANCEL_GRACE_MS = 5_000;

/** A live connection to an external agent process, with its own session or thread. */
export interface ExternalAgentConnection {
  /**
   * Runs one turn. Settles when the agent ends the turn, and also when the process exits
   * (rejecting then); rejects with `RecordWriteError` when an item cannot be written.
   */
  runTurn(context: TurnContext): Promise<AgentOutcome>;
  /** The agent's id of its session or thread, to resume it after a restart. */
  readonly resumeId: string;
}

/** What a connection is opened with. */
export interface ConnectionOptions {
  process: AgentProcess;
  /** The agent's name in agents.yaml (assistant messages are attributed to it). */
  agentName: string;
  definition: AgentDefinition;
  /** Absolute working directory of the conversation. */
  cwd: string;
  /** The agent's session or thread of an earlier process of this session, to resume when the agent can. */
  resumeId?: string;
  logger?: Pick<Logger, 'warn'>;
}

/** Opens a connection: the protocol's handshake and a new (or resumed) session. */
export type ConnectionOpener = (options: ConnectionOptions) => Promise<ExternalAgentConnection>;
