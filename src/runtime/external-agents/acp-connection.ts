/**
 * An ACP agent as a conversation's agent: OpenVaala is the ACP client (`@agentclientprotocol/sdk`
 * `client()` over the child's stdio, newline-delimited JSON-RPC). `initialize`, then
 * `session/new` (or `session/load` of the session of an earlier process, when the agent can
 * load sessions); each turn is one `session/prompt`, its `session/update`s become items and its
 * `session/request_permission`s are relayed to the clients; an interrupt is `session/cancel`.
 * The client offers no file system or terminal methods: the agent works on its own machine.
 */
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { VERSION } from '../../package-info.js';
import type { ContentPart } from '../../protocol/index.js';
import { ZERO_USAGE, type AgentOutcome } from '../agent.js';
import { SerialQueue } from '../serial-queue.js';
import type { TurnContext } from '../turn-runner.js';
import { applySessionUpdate, relayPermission } from './acp-updates.js';
import { CANCEL_GRACE_MS, type ConnectionOptions, type ExternalAgentConnection } from './connection.js';
import { ExternalTurnItems } from './turn-items.js';

/** The running turn, to which updates of the agent's session go. */
interface CurrentTurn {
  context: TurnContext;
  items: ExternalTurnItems;
  /** Updates applied in the order they arrived (the SDK does not wait for one handler before the next). */
  updates: SerialQueue;
  /** The first failure of a handler (a record that could not be written). */
  failure?: unknown;
  cancel(): void;
}

/** A turn's input as ACP content blocks: text as text, files as resource links, images as links when the agent takes no images. */
export function promptBlocks(input: ContentPart[], imagesAccepted: boolean): acp.ContentBlock[] {
  return input.map((part): acp.ContentBlock => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'file') return { type: 'resource_link', uri: `file://${part.path}`, name: part.name ?? part.path, ...(part.mediaType ? { mimeType: part.mediaType } : {}) };
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
    if (imagesAccepted && data) return { type: 'image', mimeType: data[1] ?? 'image/png', data: data[2] ?? '' };
    return { type: 'resource_link', uri: part.url, name: 'image', ...(part.mediaType ? { mimeType: part.mediaType } : {}) };
  });
}

/** How an ACP stop reason ends the turn. */
function outcomeOf(stopReason: acp.StopReason): AgentOutcome {
  switch (stopReason) {
    case 'cancelled':
      return { status: 'interrupted', steps: 1, usage: ZERO_USAGE, stopReason: 'user_interrupt' };
    case 'max_tokens':
      return { status: 'completed', steps: 1, usage: ZERO_USAGE, stopReason: 'max_tokens' };
    case 'max_turn_requests':
      return { status: 'completed', steps: 1, usage: ZERO_USAGE, stopReason: 'step_limit' };
    case 'refusal':
      return { status: 'completed', steps: 1, usage: ZERO_USAGE, stopReason: 'refusal' };
    default:
      return { status: 'completed', steps: 1, usage: ZERO_USAGE, stopReason: 'end_turn' };
  }
}

/**
 * Opens an ACP connection on a started agent process: `initialize` and a session.
 * @throws when the agent refuses `initialize` or `session/new`, or exits first
 */
export async function openAcpConnection(options: ConnectionOptions): Promise<ExternalAgentConnection> {
  const { process: agentProcess, cwd, agentName } = options;
  let current: CurrentTurn | undefined;
  let sessionId = '';
  const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdio.stdin as Writable) as WritableStream<Uint8Array>, Readable.toWeb(agentProcess.stdio.stdout as Readable) as ReadableStream<Uint8Array>);
  const app = acp
    .client({ name: 'openvaala' })
    .onNotification('session/update', ({ params }) => {
      const turn = current;
      // Updates outside a prompt (a loaded session's history replayed) are already in the log.
      if (!turn || params.sessionId !== sessionId) return;
      turn.updates
        .run(() => applySessionUpdate(params.update, turn.items, turn.context))
        .catch((error: unknown) => {
          turn.failure ??= error;
        });
    })
    .onRequest('session/request_permission', async ({ params }) => {
      const turn = current;
      if (!turn || params.sessionId !== sessionId) return { outcome: { outcome: 'cancelled' } };
      // After the updates that came before it, so the call it asks about is announced first.
      return turn.updates.run(() => relayPermission(params, turn.items, turn.context, () => turn.cancel()));
    });
  const connection = app.connect(stream);
  // The process's end closes the connection, which rejects what waits on the agent.
  agentProcess.onExit((description) => connection.close(new Error(`the agent process ${description}`)));
  const agent = connection.agent;
  const initialized = await agent.request('initialize', {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: 'openvaala', version: VERSION },
  });
  const capabilities = initialized.agentCapabilities ?? {};
  if (options.resumeId !== undefined && capabilities.loadSession) {
    await agent.request('session/load', { sessionId: options.resumeId, cwd, mcpServers: [] });
    sessionId = options.resumeId;
  } else {
    sessionId = (await agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  }
  const imagesAccepted = capabilities.promptCapabilities?.image === true;

  return {
    get resumeId() {
      return sessionId;
    },
    async runTurn(context) {
      const items = new ExternalTurnItems(context, `acp/${agentName}`);
      let cancelled = false;
      let killTimer: NodeJS.Timeout | undefined;
      const cancel = () => {
        if (cancelled) return;
        cancelled = true;
        agent.notify('session/cancel', { sessionId }).catch(() => undefined);
        // An agent that does not end the turn after session/cancel is stopped.
        killTimer = setTimeout(() => {
          agentProcess.stop().catch(() => undefined);
        }, CANCEL_GRACE_MS);
      };
      const turn: CurrentTurn = { context, items, updates: new SerialQueue(), cancel };
      current = turn;
      const onAbort = () => cancel();
      context.signal.addEventListener('abort', onAbort, { once: true });
      if (context.signal.aborted) cancel();
      try {
        const response = await agent.request('session/prompt', { sessionId, prompt: promptBlocks(context.input, imagesAccepted) });
        await turn.updates.drain();
        if (turn.failure) throw turn.failure;
        const outcome = cancelled ? outcomeOf('cancelled') : outcomeOf(response.stopReason);
        await items.finishAll(outcome.status === 'completed' ? 'completed' : 'interrupted');
        return outcome;
      } catch (error) {
        await turn.updates.drain();
        await items.finishAll(cancelled ? 'interrupted' : 'failed');
        if (turn.failure) throw turn.failure;
        if (cancelled && agentProcess.hasExited) return outcomeOf('cancelled');
        throw error;
      } finally {
        clearTimeout(killTimer);
        context.signal.removeEventListener('abort', onAbort);
        if (current === turn) current = undefined;
      }
    },
  };
}
