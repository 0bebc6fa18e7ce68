/**
 * The clients that run a conversation's commands (protocol `conversation/serveCommands`): an
 * editor attached to the conversation runs `exec_command` in its own terminal, so the person
 * sees the command live. Tools see only `ClientCommandAccess`; this registry picks the client
 * when a command starts, and owns the command's timeout and abort: both end in
 * `client/terminal/kill`, after which the client's answer to `client/terminal/run` says how the
 * command ended.
 */
import { randomUUID } from 'node:crypto';
import type { CommandResult } from '../executors/executor.js';
import { truncateMiddle } from '../executors/output-truncation.js';
import type { ClientCommandAccess, ClientCommandRequest } from '../tools/tool.js';
import { AttachedClients } from './attached-clients.js';

/** How long a killed command's client may take to report its end before the call gives up, ms. */
export const CLIENT_KILL_GRACE_MS = 5_000;

/** How a client says a command ended (`client/terminal/run` result). */
export interface ClientCommandEnd {
  exitCode: number | null;
  signal: string | null;
  output: string;
  truncated: boolean;
}

/** One client running commands, as its connection offers it. */
export interface ClientCommandServer {
  /**
   * Asks the client to run a command and waits for its end (`client/terminal/run`).
   * @throws Error with the client's message
   */
  run(request: { sessionId: string; itemId: string; runId: string; command: string; cwd: string; env: Record<string, string>; timeoutMs: number; outputByteLimit: number }): Promise<ClientCommandEnd>;
  /** Asks the client to kill a run (`client/terminal/kill`). @throws Error with the client's message */
  kill(request: { sessionId: string; runId: string }): Promise<void>;
}

/** The clients running one conversation's commands, latest first. */
export class ClientCommandServers extends AttachedClients<ClientCommandServer> {
  /**
   * What one tool call of a session uses: its command goes to the latest client, and the answer
   * is "not served" (undefined) when none runs commands.
   */
  accessFor(sessionId: string, itemId: string): ClientCommandAccess {
    return {
      run: async (request) => {
        const server = this.servers[0];
        return server ? runOnClient(server, sessionId, itemId, request) : undefined;
      },
    };
  }
}

/**
 * Runs one command through a client: kills it (`client/terminal/kill`) when `timeoutMs` has
 * passed or the signal aborts, and waits at most `CLIENT_KILL_GRACE_MS` after that for the
 * client to report its end, so a client that never answers cannot hold the turn.
 * @throws Error with the client's message, or saying the client did not answer after the kill
 */
async function runOnClient(server: ClientCommandServer, sessionId: string, itemId: string, request: ClientCommandRequest): Promise<CommandResult> {
  const startedAt = performance.now();
  const elapsed = () => Math.round(performance.now() - startedAt);
  if (request.signal.aborted) return { exitCode: null, signal: null, output: '', truncated: false, timedOut: false, aborted: true, durationMs: 0 };
  const runId = `run-${randomUUID()}`;
  let timedOut = false;
  let aborted = false;
  let giveUp: (() => void) | undefined;
  const gaveUp = new Promise<undefined>((resolve) => (giveUp = () => resolve(undefined)));
  let graceTimer: NodeJS.Timeout | undefined;
  const kill = () => {
    if (graceTimer) return;
    graceTimer = setTimeout(() => giveUp?.(), CLIENT_KILL_GRACE_MS);
    // A failed kill leaves the grace period to end the call.
    server.kill({ sessionId, runId }).catch(() => undefined);
  };
  const timeout = setTimeout(() => {
    timedOut = true;
    kill();
  }, request.timeoutMs);
  const onAbort = () => {
    aborted = true;
    kill();
  };
  request.signal.addEventListener('abort', onAbort, { once: true });
  const answer = server.run({ sessionId, itemId, runId, command: request.command, cwd: request.cwd, env: request.env, timeoutMs: request.timeoutMs, outputByteLimit: request.maxOutputBytes });
  // Once given up on, a late rejection has nobody to tell.
  answer.catch(() => undefined);
  try {
    const end = await Promise.race([answer, gaveUp]);
    if (end === undefined) throw new Error(`the client did not answer client/terminal/run within ${CLIENT_KILL_GRACE_MS} ms of client/terminal/kill; the command may still be running there`);
    // The client should keep to the limit; its output is cut here too, head and tail kept.
    const cut = truncateMiddle(end.output, request.maxOutputBytes);
    return { exitCode: end.exitCode, signal: end.signal, output: cut.text, truncated: end.truncated || cut.text !== end.output, timedOut, aborted, durationMs: elapsed() };
  } finally {
    clearTimeout(timeout);
    clearTimeout(graceTimer);
    request.signal.removeEventListener('abort', onAbort);
  }
}
