/**
 * `openvaala exec [PROMPT]` (SPEC §2): a one-shot run. Finds or starts the local server,
 * creates a conversation in the working directory, sends the prompt (or stdin), streams the
 * turn and exits with the turn's outcome.
 */
import path from 'node:path';
import { RuntimeClient } from '../client/runtime-client.js';
import { resolvePaths } from '../config/paths.js';
import type { Turn } from '../protocol/index.js';
import { HumanRenderer, JsonRenderer, type OutputStreams } from './exec-output.js';
import { ensureServer } from './server-discovery.js';

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
  const paths = resolvePaths({ ...(options.configDir ? { configDir: options.configDir } : {}), ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  const server = await ensureServer(paths);
  const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'openvaala-exec' });
  const renderer = options.json ? new JsonRenderer(streams) : new HumanRenderer(streams);
  try {
    const { conversation, session } = await client.request('conversation/create', {
      cwd: path.resolve(options.cwd),
      ...(options.model ? { model: options.model } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
      ...(options.executor ? { executor: options.executor } : {}),
    });
    // The conversation is new, so the first turn to end in its root session is this prompt's.
    const finished = new Promise<Turn>((resolve) => {
      const stopListening = client.onNotification((event) => {
        renderer.render(event);
        if (event.method === 'turn/completed' && event.params.turn.sessionId === session.id) {
          // The turn's end is the last thing exec prints; later state events are not its output.
          stopListening();
          resolve(event.params.turn);
        }
      });
    });
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: options.prompt });
    const turn = await finished;
    if (!options.json) {
      const usage = turn.usage;
      streams.stderr.write(`turn ${turn.status} · ${turn.steps} model calls · ${usage.inputTokens} input + ${usage.outputTokens} output tokens · conversation ${conversation.id}\n`);
      if (turn.error && turn.status !== 'failed') streams.stderr.write(`${turn.error}\n`);
    }
    return turn.status === 'completed' ? ExecExitCode.completed : turn.status === 'interrupted' ? ExecExitCode.interrupted : ExecExitCode.failed;
  } finally {
    await client.close();
  }
}
