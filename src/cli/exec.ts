/**
 * `openvaala exec [PROMPT]` (SPEC §2): a one-shot run. Finds or starts the local server,
 * creates a conversation in the working directory, sends the prompt (or stdin), streams the
 * turn and exits with the turn's outcome.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { RuntimeClient } from '../client/runtime-client.js';
import { resolvePaths } from '../config/paths.js';
import { createInterface } from 'node:readline/promises';
import type { ApprovalRequest, Turn } from '../protocol/index.js';
import { HumanRenderer, JsonRenderer, type OutputStreams } from './exec-output.js';
import { ensureServer } from './server-discovery.js';

/**
 * Answers an approval request: asks on the terminal when there is one, and otherwise denies,
 * telling the model why (a one-shot run has no one to ask, and waiting would hang).
 */
async function answerApproval(request: ApprovalRequest, streams: OutputStreams): Promise<{ decision: 'allow_once' | 'allow_session' | 'deny'; message?: string }> {
  const summary = `${request.toolName} ${JSON.stringify(request.arguments)}`;
  if (!process.stdin.isTTY) {
    streams.stderr.write(`approval needed for ${summary} (${request.reason}): denied, as exec has no terminal to ask on\n`);
    return { decision: 'deny', message: 'the call needs approval and this run cannot ask anyone; it was not run' };
  }
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await prompt.question(`Allow ${summary}? (${request.reason}) [y]es once, [a]lways in this session, [n]o: `)).trim().toLowerCase();
    if (answer === 'y' || answer === 'yes') return { decision: 'allow_once' };
    if (answer === 'a' || answer === 'always') return { decision: 'allow_session' };
    return { decision: 'deny', message: 'the user said no' };
  } finally {
    prompt.close();
  }
}

/** A mistake in how exec was called (exit code 64). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Exit codes of `openvaala exec`. */
export const ExecExitCode = { completed: 0, failed: 1, interrupted: 2, usage: 64 } as const;

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
}

/**
 * Runs one prompt to the end of its turn.
 * @returns the exit code: 0 completed, 1 failed, 2 interrupted
 */
export async function runExec(options: ExecOptions, streams: OutputStreams): Promise<number> {
  const cwd = path.resolve(options.cwd);
  // Only a local working directory can be checked here; other executors check theirs.
  if ((options.executor ?? 'local') === 'local') {
    const stat = statSync(cwd, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) throw new UsageError(`--cwd ${cwd} ${stat ? 'is not a directory' : 'does not exist'}`);
  }
  const paths = resolvePaths({ ...(options.configDir ? { configDir: options.configDir } : {}), ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  const server = await ensureServer(paths);
  const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'openvaala-exec' });
  const renderer = options.json ? new JsonRenderer(streams) : new HumanRenderer(streams);
  try {
    const { conversation, session } = await client.request('conversation/create', {
      cwd,
      ...(options.model ? { model: options.model } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
      ...(options.executor ? { executor: options.executor } : {}),
    });
    // The conversation is new, so the first turn to end in its root session is this prompt's.
    const finished = new Promise<Turn>((resolve, reject) => {
      client.onClose((error) => reject(new Error(`the server closed the connection before the turn ended (${error.message})`)));
      const stopListening = client.onNotification((event) => {
        renderer.render(event);
        if (event.method === 'turn/completed' && event.params.turn.sessionId === session.id) {
          // The turn's end is the last thing exec prints; later state events are not its output.
          stopListening();
          resolve(event.params.turn);
        }
      });
    });
    client.handleServerRequest('approval/request', (request) => answerApproval(request, streams));
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: options.prompt });
    const turn = await finished;
    if (!options.json) {
      const usage = turn.usage;
      const calls = `${turn.steps} model ${turn.steps === 1 ? 'call' : 'calls'}`;
      streams.stderr.write(`turn ${turn.status} · ${calls} · ${usage.inputTokens} input + ${usage.outputTokens} output tokens · conversation ${conversation.id}\n`);
      if (turn.error && turn.status !== 'failed') streams.stderr.write(`${turn.error}\n`);
    }
    return turn.status === 'completed' ? ExecExitCode.completed : turn.status === 'interrupted' ? ExecExitCode.interrupted : ExecExitCode.failed;
  } finally {
    await client.close();
  }
}
