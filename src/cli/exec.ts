/**
 * `openvaala exec [PROMPT]` (SPEC §2): a one-shot run. Finds or starts the local server,
 * creates a conversation in the working directory (or continues one with `--resume`), sends
 * the prompt (or stdin), streams the turn and exits with the turn's outcome. Only the turn the
 * prompt started is shown (and only its questions are answered): a conversation continued while
 * busy runs other turns first, whose output is for their own clients (see `exec-turn-events.ts`).
 *
 * Ctrl-C (or SIGTERM, SIGHUP): the first interrupts the turn (recorded as interrupted on the
 * server) and, once it has ended, prints how to resume; a second leaves at once, leaving the
 * server to finish the interruption. At an approval prompt, Ctrl-C denies the call and
 * interrupts the turn.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { RuntimeClient, RuntimeClientError } from '../client/runtime-client.js';
import { resolvePaths } from '../config/paths.js';
import { ErrorCodes } from '../protocol/error-codes.js';
import type { AnyNotification, Turn } from '../protocol/index.js';
import { ApprovalPrompt, type ApprovalMode } from './approval-prompt.js';
import { HumanRenderer, JsonRenderer, type OutputStreams } from './exec-output.js';
import { describeTurnEnd, execExitCodeOf } from './exec-turn-end.js';
import { OwnTurnEvents } from './exec-turn-events.js';
import { resolveConversationId } from './conversation-reference.js';
import { ensureServer } from './server-discovery.js';
import { configurationReloadWarning, missingServerEnvironment } from './server-environment.js';
import { UsageError } from './usage-error.js';
import { titleOf } from '../client/conversation-title.js';
import { resumeCommand, serverDirectories } from '../client/resume-command.js';

export { titleOf };

export { UsageError };

import { withDataDirectoryShown } from './data-directory-text.js';
import { formatLogDamage } from './log-damage-output.js';
import { humanStreams } from './terminal-streams.js';
import { HeldOutput } from './held-output.js';
import { ExecExitCode } from './exit-codes.js';

export { ExecExitCode };

/** Signals that stop exec like Ctrl-C: the first interrupts the turn, a second leaves at once. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Options of `openvaala exec`. */
export interface ExecOptions {
  prompt: string;
  cwd: string;
  model?: string;
  agent?: string;
  executor?: string;
  json: boolean;
  configDir?: string;
  dataDir?: string;
  /** A conversation id, or `last` (the most recently updated conversation), to continue. */
  resume?: string;
  /** How calls that need approval are decided (`--approvals`): asked on the terminal (default), or all allowed or denied. */
  approvals?: ApprovalMode;
}



/**
 * Runs one prompt to the end of its turn.
 * @returns the exit code (see `execExitCodeOf`): 0 finished, 1 failed or its answer may be
 *   incomplete (cut at the output limit, stopped by the content filter), 2 interrupted, 130 left
 *   with a second Ctrl-C
 * @throws UsageError for a working directory that cannot be used or an unknown conversation
 */
export async function runExec(options: ExecOptions, streams: OutputStreams): Promise<number> {
  streams = humanStreams(streams, options);
  const cwd = path.resolve(options.cwd);
  // Only a local working directory can be checked here; the server checks every executor's.
  if (!options.resume && (options.executor ?? 'local') === 'local') {
    const stat = statSync(cwd, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) throw new UsageError(`--cwd ${cwd} ${stat ? 'is not a directory' : 'does not exist'} on executor "local" (this machine)`);
  }
  const paths = resolvePaths({ ...(options.configDir ? { configDir: options.configDir } : {}), ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  const server = await ensureServer(paths, { requireConfigDir: options.configDir !== undefined });
  const directories = serverDirectories(server, paths);
  const resumeHint = (conversationId: string) => `continue it with: ${resumeCommand('exec', conversationId, directories)}`;
  const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'openvaala-exec', capabilities: { approvals: true, userInput: true, deltas: true } });
  // The turn's output waits while a question is on the terminal; the question itself and the notices about leaving do not.
  const held = new HeldOutput(streams);
  // Made once the session is known: only its answer streams as the answer.
  let renderer: HumanRenderer | JsonRenderer | undefined;
  const approvals = new ApprovalPrompt(streams, process.stdin, {
    hold: () => {
      renderer?.endLine();
      held.hold();
    },
    release: () => held.release(),
  }, options.approvals);
  let conversationId: string | undefined;
  let interrupts = 0;
  let interruptTurn: (() => void) | undefined;
  const onSigint = () => {
    interrupts++;
    renderer?.endLine();
    if (interrupts > 1 || !conversationId || !interruptTurn) {
      streams.stderr.write(`left at once${conversationId ? `; the server finishes interrupting the turn. ${resumeHint(conversationId)}` : ''}\n`);
      process.exit(ExecExitCode.leftAtOnce);
    }
    streams.stderr.write('interrupting the turn (Ctrl-C again to leave at once)\n');
    approvals.cancel();
    interruptTurn();
  };
  // `timeout`, a closed terminal or a service manager stop exec as Ctrl-C does: the turn is interrupted, not left running unseen.
  for (const signal of STOP_SIGNALS) process.on(signal, onSigint);
  approvals.onInterrupt(onSigint);
  // Asked alongside the set-up requests; said before the turn's output.
  const reloadWarning = configurationReloadWarning(client);
  try {
    let sessionId: string;
    if (options.resume) {
      conversationId = await resolveConversationId(client, options.resume);
      const snapshot = await client.request('conversation/get', { conversationId });
      // Lines of its logs the server skipped are said once, before the new turn's output.
      streams.stderr.write(formatLogDamage(snapshot.damage, paths.dataDir));
      sessionId = snapshot.conversation.rootSessionId;
      // Its tools run there: a directory gone from this machine fails every one of them.
      for (const location of snapshot.conversation.workLocation) {
        if (location.executor === 'local' && !statSync(location.cwd, { throwIfNoEntry: false })?.isDirectory()) {
          streams.stderr.write(`warning: the conversation's working directory ${location.cwd} is not a directory on this machine any more; its tools on executor "local" fail until it is back\n`);
        }
      }
      const model = options.model ?? snapshot.sessions.find((session) => session.id === sessionId)?.model;
      const missing = await missingServerEnvironment(client, server, paths.configDir, model);
      if (missing) throw new Error(missing);
      if (options.model) await client.request('session/setModel', { conversationId, model: options.model });
      // As with the model: the agent given applies from this turn on.
      if (options.agent) await client.request('session/setAgent', { conversationId, agent: options.agent });
    } else {
      const missing = await missingServerEnvironment(client, server, paths.configDir, options.model);
      if (missing) throw new Error(missing);
      const created = await client
        .request('conversation/create', {
          cwd,
          title: titleOf(options.prompt),
          ...(options.model ? { model: options.model } : {}),
          ...(options.agent ? { agent: options.agent } : {}),
          ...(options.executor ? { executor: options.executor } : {}),
        })
        .catch((error: unknown) => {
          // A working directory or model the server refuses is a mistake in the call.
          if (error instanceof RuntimeClientError && (error.code === ErrorCodes.invalidParams || error.code === ErrorCodes.notFound)) throw new UsageError(error.message);
          throw error;
        });
      conversationId = created.conversation.id;
      sessionId = created.session.id;
    }
    const id = conversationId;
    // Only this run's own prompt is stopped: in a busy conversation the running turn may be
    // another client's, and this prompt may still wait in the queue behind it.
    const sent: { ownInput?: { inputId: string; turnId: string } } = {};
    let withdrawn!: (turn: Turn) => void;
    const withdrawal = new Promise<Turn>((resolve) => (withdrawn = resolve));
    const couldNotInterrupt = (error: unknown) => {
      // The turn goes on on the server; say so rather than wait silently for its end.
      streams.stderr.write(`could not interrupt the turn (${(error as Error).message}); Ctrl-C again to leave at once. ${resumeHint(id)}\n`);
    };
    interruptTurn = () => {
      if (!sent.ownInput) {
        // The prompt was not taken yet: nothing of this run is running to interrupt.
        streams.stderr.write('left before the prompt was sent\n');
        process.exit(ExecExitCode.interrupted);
      }
      const { inputId, turnId } = sent.ownInput;
      stopOwnTurn(client, { conversationId: id, sessionId, inputId, turnId }).then((outcome) => {
        if (outcome === 'dequeued') withdrawn(withdrawnTurn(turnId, sessionId, id));
      }, couldNotInterrupt);
    };

    const shown = options.json ? new JsonRenderer(held.streams) : new HumanRenderer(held.streams, { sessionId });
    renderer = shown;
    // The turn this prompt starts is known once session/input answers; until then its events are kept back.
    const own = new OwnTurnEvents(sessionId);
    let turnStarted!: (turnId: string) => void;
    const turnKnown = new Promise<string>((resolve) => (turnStarted = resolve));
    let turnEnded!: (turn: Turn) => void;
    const ownTurn = new Promise<Turn>((resolve) => (turnEnded = resolve));
    let rendering = true;
    const show = (event: AnyNotification) => {
      if (!rendering) return;
      shown.render(event);
      // The turn's end is the last thing exec prints; later state events are not its output. The
      // only turn of its session let through is its own; a subagent's turns end in theirs.
      if (event.method === 'turn/completed' && event.params.turn.sessionId === sessionId) {
        rendering = false;
        turnEnded(event.params.turn);
      }
    };
    const closed = new Promise<never>((_resolve, reject) => {
      // The turn may go on (a network break) or be recorded as interrupted at the server's next start (it stopped): either way it can be continued.
      client.onClose((error) => reject(new Error(`the server closed the connection before the turn ended (${error.message}); ${resumeHint(id)}`)));
    });
    // Also closed on purpose when exec ends early; only the race below cares.
    closed.catch(() => undefined);
    client.onNotification((event) => {
      if (event.method === 'approval/resolved') approvals.withdraw(event.params.approvalId, describeResolution(event.params));
      for (const ownEvent of own.receive(event)) show(ownEvent);
    });
    // Another turn's questions are for its own clients: answered here, they would be asked (or, without a terminal, denied) by the wrong run.
    client.handleServerRequest('approval/request', async (request) => {
      await turnKnown;
      if (!own.asksFor(request)) throw new Error('not a question of the turn this openvaala exec started');
      return approvals.ask(request);
    });
    client.handleServerRequest('input/request', async (request) => {
      await turnKnown;
      if (!own.asksFor(request)) throw new Error('not a question of the turn this openvaala exec started');
      return approvals.askQuestion(request);
    });
    // On resume, only what happens from now on is shown: the stored items are skipped.
    const afterSeq = options.resume ? await lastSeqs(client, id) : undefined;
    await client.request('conversation/subscribe', { conversationId: id, ...(afterSeq ? { afterSeq } : {}) });
    const warning = await reloadWarning;
    if (warning) streams.stderr.write(`${warning}\n`);
    const input = await client.request('session/input', { conversationId: id, sessionId, input: options.prompt });
    const turnId = input.turnId;
    if (!turnId) throw new Error('the server started no turn for the prompt');
    sent.ownInput = { inputId: input.inputId, turnId };
    if (input.queued) streams.stderr.write('the conversation is busy: the prompt waits for the running turn to end\n');
    for (const event of own.start(turnId)) show(event);
    turnStarted(turnId);
    const turn = await Promise.race([closed, ownTurn, withdrawal]);
    shown.endLine();
    if (shown instanceof HumanRenderer) {
      streams.stderr.write(describeTurnEnd(turn, { conversationId: id, resumeCommand: resumeCommand('exec', id, directories), shown: (reason) => shown.hasShownError(reason) }));
    }
    return execExitCodeOf(turn);
  } catch (error) {
    throw withDataDirectoryShown(error, paths.dataDir);
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSigint);
    approvals.cancel();
    await client.close();
  }
}

/** What exec says in place of an approval question decided elsewhere (`approval/resolved`). */
export function describeResolution(resolved: { decision: string; decidedBy: string }): string {
  if (resolved.decidedBy === 'interruption') return 'no longer asked: the turn was interrupted';
  const decided = resolved.decision.startsWith('allow') ? 'allowed' : 'denied';
  return `${decided} elsewhere (${resolved.decidedBy.replace(/^client:/, 'by ')})`;
}

/**
 * Stops the turn a prompt started, and only that one (docs/protocol.md, `session/interrupt`
 * with `turnId`, `session/dequeue`): interrupted when it runs; withdrawn from the queue when it
 * waits behind another turn (then it never starts); interrupted after all when it started
 * between the two requests.
 * @returns `interrupted` or `dequeued`
 * @throws RuntimeClientError when the server refuses both for another reason
 */
export async function stopOwnTurn(
  client: Pick<RuntimeClient, 'request'>,
  prompt: { conversationId: string; sessionId: string; inputId: string; turnId: string },
): Promise<'interrupted' | 'dequeued'> {
  const notRunning = (error: unknown) => error instanceof RuntimeClientError && error.code === ErrorCodes.conflict && ['no_running_turn', 'turn_mismatch'].includes((error.data as { reason?: string } | undefined)?.reason ?? '');
  const interrupt = () => client.request('session/interrupt', { conversationId: prompt.conversationId, sessionId: prompt.sessionId, turnId: prompt.turnId });
  try {
    await interrupt();
    return 'interrupted';
  } catch (error) {
    if (!notRunning(error)) throw error;
  }
  try {
    await client.request('session/dequeue', { conversationId: prompt.conversationId, sessionId: prompt.sessionId, inputId: prompt.inputId });
    return 'dequeued';
  } catch (error) {
    const started = error instanceof RuntimeClientError && error.code === ErrorCodes.conflict && (error.data as { reason?: string } | undefined)?.reason === 'input_started';
    if (!started) throw error;
  }
  await interrupt();
  return 'interrupted';
}

/** The outcome exec reports for a prompt withdrawn from the queue before its turn started. */
function withdrawnTurn(turnId: string, sessionId: string, conversationId: string): Turn {
  const now = Date.now();
  return {
    id: turnId,
    sessionId,
    conversationId,
    status: 'interrupted',
    steps: 0,
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    startedAt: now,
    completedAt: now,
    stopReason: 'user_interrupt',
    error: 'the prompt was withdrawn from the queue before its turn started',
  };
}

/** For each session of a conversation, the seq of its last stored item (for `afterSeq`). */
async function lastSeqs(client: RuntimeClient, conversationId: string): Promise<Record<string, number>> {
  const { sessions } = await client.request('session/list', { conversationId });
  const entries = await Promise.all(
    sessions.map(async (session) => {
      const { items } = await client.request('items/list', { conversationId, sessionId: session.id, direction: 'backward', limit: 1 });
      return [session.id, items[0]?.seq ?? 0] as const;
    }),
  );
  return Object.fromEntries(entries);
}
