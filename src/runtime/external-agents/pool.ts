/**
 * The external agent processes of one conversation (SPEC §10 "External agents as a
 * conversation's agent"): one process per session whose agent is `kind: acp` or
 * `codex-app-server`, started by its first turn and kept across turns; a process that exits
 * during a turn fails that turn (with its exit and stderr as the error) and is started again
 * by the next; one idle for the agent's `idleTimeoutMs` is stopped; all are stopped when the
 * conversation closes (deleted, server stopping).
 */
import type { ProcessTracker } from '../../executors/process-tracker.js';
import { isExternalAgent, type AgentDefinition } from '../../config/agents.js';
import type { Logger } from '../../logger.js';
import { ZERO_USAGE, type AgentOutcome } from '../agent.js';
import { describeError, RecordWriteError } from '../session-turn.js';
import type { TurnContext } from '../turn-runner.js';
import { AgentProcess } from './agent-process.js';
import type { ConnectionOpener, ExternalAgentConnection } from './connection.js';

/** Default of `idleTimeoutMs`: a process without a turn for this long is stopped, ms. */
export const DEFAULT_IDLE_TIMEOUT_MS = 600_000;

/**
 * The openers by agent kind, each imported on its first use: the ACP one loads the ACP SDK and
 * its zod schemas, which a server whose conversations never use such an agent does not need.
 */
const OPENERS: Record<'acp' | 'codex-app-server', ConnectionOpener> = {
  acp: async (options) => (await import('./acp-connection.js')).openAcpConnection(options),
  'codex-app-server': async (options) => (await import('./codex-connection.js')).openCodexConnection(options),
};

/** One session's agent process. */
interface Running {
  /** The definition it was started with (a changed definition starts a new process). */
  key: string;
  process: AgentProcess;
  connection: Promise<ExternalAgentConnection>;
  idleTimer?: NodeJS.Timeout;
}

/** The argv of an agent: its command, `app-server` for Codex, then its args. */
export function agentArgv(definition: AgentDefinition & { command: string[] }): string[] {
  return [...definition.command, ...(definition.kind === 'codex-app-server' ? ['app-server'] : []), ...(definition.args ?? [])];
}

/** The external agent processes of one conversation. */
export class ExternalAgentPool {
  private readonly running = new Map<string, Running>();
  /** Per session, the agent's session or thread id, to resume it in a restarted process. */
  private readonly resumeIds = new Map<string, string>();
  private closed = false;

  /**
   * @param cwd the conversation's working directory (read when a process starts)
   * @param logger the server log
   * @param processes how agent processes are recorded and what environment they get besides their definition's
   */
  constructor(
    private readonly cwd: () => string,
    private readonly logger?: Pick<Logger, 'warn'>,
    private readonly processes: {
      /** Records each agent process group, so a restarted server can stop one a crash left running. */
      tracker?: ProcessTracker;
      /** Variables added to each agent's environment before its definition's own `env` (e.g. a project's `CODEX_HOME`). */
      environment?: () => Record<string, string> | undefined;
    } = {},
  ) {}

  /** Number of agent processes running (for tests and status). */
  get size(): number {
    return this.running.size;
  }

  /** The pid of a session's agent process, when one runs. */
  pidOf(sessionId: string): number | undefined {
    return this.running.get(sessionId)?.process.pid;
  }

  /**
   * Runs one turn of `sessionId` on its agent process (starting it when none runs).
   * Never rejects except with `RecordWriteError`: a process that cannot start, breaks the
   * protocol or exits during the turn ends the turn `failed` with the reason.
   */
  async runTurn(sessionId: string, agentName: string, definition: AgentDefinition, context: TurnContext): Promise<AgentOutcome> {
    if (!isExternalAgent(definition)) throw new Error(`agent "${agentName}" is run by the built-in loop, not by an external process`);
    if (this.closed) return failed(`the conversation is closing`);
    const running = await this.processFor(sessionId, agentName, definition);
    if (running.idleTimer) clearTimeout(running.idleTimer);
    try {
      const connection = await running.connection;
      this.resumeIds.set(sessionId, connection.resumeId);
      return await connection.runTurn(context);
    } catch (error) {
      if (error instanceof RecordWriteError) throw error;
      // The error that matters is the process's end when it ended (a broken pipe follows from it).
      await Promise.race([running.process.exited, new Promise((resolve) => setTimeout(resolve, 500))]);
      const reason = running.process.hasExited ? `the agent process of "${agentName}" ${running.process.describeExit()}` : `agent "${agentName}" failed: ${describeError(error)}`;
      return failed(reason);
    } finally {
      if (running.process.hasExited || this.closed) {
        if (this.running.get(sessionId) === running) this.running.delete(sessionId);
      } else {
        this.armIdleTimer(sessionId, running, definition.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
      }
    }
  }

  /** Stops a session's agent process, if one runs (the session closed). */
  async stop(sessionId: string): Promise<void> {
    const running = this.running.get(sessionId);
    if (!running) return;
    this.running.delete(sessionId);
    if (running.idleTimer) clearTimeout(running.idleTimer);
    await running.process.stop();
  }

  /** Stops every agent process and starts no more (the conversation is closing). */
  async stopAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.running.keys()].map((sessionId) => this.stop(sessionId)));
  }

  /** The running process of the session for this definition, started when there is none (or it ran another definition). */
  private async processFor(sessionId: string, agentName: string, definition: AgentDefinition & { kind: 'acp' | 'codex-app-server'; command: string[] }): Promise<Running> {
    const key = JSON.stringify([agentName, definition]);
    const current = this.running.get(sessionId);
    if (current && current.key === key && !current.process.hasExited) return current;
    if (current) await this.stop(sessionId);
    const cwd = this.cwd();
    const env = { ...this.processes.environment?.(), ...definition.env };
    const process = new AgentProcess({ argv: agentArgv(definition), cwd, env, ...(this.processes.tracker ? { tracker: this.processes.tracker } : {}) });
    const resumeId = this.resumeIds.get(sessionId);
    const connection = OPENERS[definition.kind]({ process, agentName, definition, cwd, ...(resumeId !== undefined ? { resumeId } : {}), ...(this.logger ? { logger: this.logger } : {}) });
    // Awaited by runTurn; a failure there is the turn's.
    connection.catch(() => undefined);
    const running: Running = { key, process, connection };
    this.running.set(sessionId, running);
    // A process that exits between turns is simply started again by the next turn.
    process.onExit(() => {
      if (this.running.get(sessionId) === running && running.idleTimer) {
        clearTimeout(running.idleTimer);
        this.running.delete(sessionId);
      }
    });
    return running;
  }

  private armIdleTimer(sessionId: string, running: Running, timeoutMs: number): void {
    if (running.idleTimer) clearTimeout(running.idleTimer);
    running.idleTimer = setTimeout(() => {
      if (this.running.get(sessionId) !== running) return;
      this.stop(sessionId).catch((error: unknown) => this.logger?.warn({ sessionId, error: describeError(error) }, 'stopping an idle agent process failed'));
    }, timeoutMs);
    // An idle agent does not keep the server's process alive.
    running.idleTimer.unref();
  }
}

function failed(error: string): AgentOutcome {
  return { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'model_error', error };
}
