/**
 * The Codex app-server as a conversation's agent (`codex app-server` on stdio, JSON-RPC lines
 * without `jsonrpc`; schemas and recorded transcripts of codex-cli 0.171.0). `initialize` +
 * `initialized`, then `thread/start` (or `thread/resume` of the thread of an earlier process);
 * each turn is `turn/start` until `turn/completed`, its `item/*` notifications become items
 * and its approval requests are relayed to the clients; an interrupt is `turn/interrupt`.
 */
import type { ContentPart, TokenUsage } from '../../protocol/index.js';
import { VERSION } from '../../package-info.js';
import { ZERO_USAGE } from '../agent.js';
import { SerialQueue } from '../serial-queue.js';
import { addUsage } from '../usage.js';
import type { TurnContext } from '../turn-runner.js';
import { applyDelta, itemCompleted, itemStarted, planSteps, type CodexItem } from './codex-items.js';
import { relayCodexApproval, type CodexApprovalRequest } from './codex-approvals.js';
import { CANCEL_GRACE_MS, type ConnectionOptions, type ExternalAgentConnection } from './connection.js';
import { JsonLinesPeer } from './json-lines-peer.js';
import { ExternalTurnItems } from './turn-items.js';

/** The running turn. */
interface CurrentTurn {
  context: TurnContext;
  items: ExternalTurnItems;
  updates: SerialQueue;
  /** Codex's id of the turn, once `turn/start` answered (or `turn/started` told it). */
  codexTurnId?: string;
  usage: TokenUsage;
  /** The last error Codex reported without retrying. */
  error?: string;
  failure?: unknown;
  cancel(): void;
  completed(turn: { status: string; error?: { message?: string } | null }): void;
}

/** A turn's input as Codex `UserInput`s. */
export function codexInput(input: ContentPart[]): unknown[] {
  return input.map((part) => {
    if (part.type === 'text') return { type: 'text', text: part.text, text_elements: [] };
    if (part.type === 'image') return { type: 'image', url: part.url };
    if (part.mediaType?.startsWith('image/')) return { type: 'localImage', path: part.path };
    return { type: 'text', text: `[file: ${part.path}]`, text_elements: [] };
  });
}

/** Codex's token counts as OpenVaala's. */
function usageOf(counts: { inputTokens?: number; outputTokens?: number; totalTokens?: number; cachedInputTokens?: number; reasoningOutputTokens?: number } | undefined): TokenUsage {
  if (!counts) return ZERO_USAGE;
  return {
    inputTokens: counts.inputTokens ?? 0,
    outputTokens: counts.outputTokens ?? 0,
    totalTokens: counts.totalTokens ?? (counts.inputTokens ?? 0) + (counts.outputTokens ?? 0),
    ...(counts.cachedInputTokens ? { cachedInputTokens: counts.cachedInputTokens } : {}),
    ...(counts.reasoningOutputTokens ? { reasoningTokens: counts.reasoningOutputTokens } : {}),
  };
}

/**
 * Opens a Codex app-server connection on a started process: the handshake and a thread.
 * @throws when Codex refuses `initialize` or `thread/start`, or exits first
 */
export async function openCodexConnection(options: ConnectionOptions): Promise<ExternalAgentConnection> {
  const { process: agentProcess, cwd, definition } = options;
  let current: CurrentTurn | undefined;
  let threadId = '';
  const inTurn = (params: unknown): CurrentTurn | undefined => {
    const turn = current;
    const given = params as { threadId?: string; turnId?: string } | undefined;
    if (!turn || given?.threadId !== threadId) return undefined;
    // Events of another turn of the thread (a late one of an interrupted turn) are not this turn's.
    if (given.turnId !== undefined && turn.codexTurnId !== undefined && given.turnId !== turn.codexTurnId) return undefined;
    return turn;
  };
  const peer = new JsonLinesPeer(agentProcess.stdio.stdin, agentProcess.stdio.stdout, {
    notification(method, params) {
      const turn = inTurn(params);
      if (!turn) return;
      turn.updates.run(() => onNotification(turn, method, params)).catch((error: unknown) => {
        turn.failure ??= error;
      });
    },
    async request(method, params) {
      const turn = inTurn(params);
      if (!turn || (method !== 'item/commandExecution/requestApproval' && method !== 'item/fileChange/requestApproval')) {
        throw new Error(`OpenVaala does not answer ${method} outside an approval of the running turn`);
      }
      return turn.updates.run(() => relayCodexApproval(method, params as CodexApprovalRequest, turn.items, turn.context, () => turn.cancel()));
    },
  });
  agentProcess.onExit((description) => peer.close(new Error(`the agent process ${description}`)));

  await peer.request('initialize', { clientInfo: { name: 'openvaala', title: 'OpenVaala', version: VERSION }, capabilities: { experimentalApi: false } });
  peer.notify('initialized');
  const threadSettings = { cwd, approvalPolicy: definition.codex?.approvalPolicy ?? 'untrusted', sandbox: definition.codex?.sandbox ?? 'workspace-write' };
  const started = options.resumeId !== undefined
    ? await peer.request<{ thread: { id: string } }>('thread/resume', { threadId: options.resumeId, ...threadSettings })
    : await peer.request<{ thread: { id: string } }>('thread/start', threadSettings);
  threadId = started.thread.id;

  return {
    get resumeId() {
      return threadId;
    },
    async runTurn(context) {
      let cancelled = false;
      let killTimer: NodeJS.Timeout | undefined;
      let finish!: (turn: { status: string; error?: { message?: string } | null }) => void;
      const ended = new Promise<{ status: string; error?: { message?: string } | null }>((resolve) => {
        finish = resolve;
      });
      const turn: CurrentTurn = {
        context,
        items: new ExternalTurnItems(context, `codex/${options.agentName}`),
        updates: new SerialQueue(),
        usage: ZERO_USAGE,
        cancel: () => {
          if (cancelled) return;
          cancelled = true;
          if (turn.codexTurnId !== undefined) peer.request('turn/interrupt', { threadId, turnId: turn.codexTurnId }).catch(() => undefined);
          killTimer = setTimeout(() => {
          agentProcess.stop().catch(() => undefined);
        }, CANCEL_GRACE_MS);
        },
        completed: (result) => finish(result),
      };
      current = turn;
      const onAbort = () => turn.cancel();
      context.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const response = await Promise.race([peer.request<{ turn: { id: string } }>('turn/start', { threadId, input: codexInput(context.input) }), ended.then(() => undefined)]);
        if (response) turn.codexTurnId ??= response.turn.id;
        // Interrupted before Codex named the turn: interrupt it now.
        if (cancelled && response) peer.request('turn/interrupt', { threadId, turnId: turn.codexTurnId }).catch(() => undefined);
        if (context.signal.aborted) turn.cancel();
        const result = await Promise.race([ended, agentProcess.exited.then((description) => Promise.reject(new Error(`the agent process ${description}`)))]);
        await turn.updates.drain();
        if (turn.failure) throw turn.failure;
        const interrupted = cancelled || result.status === 'interrupted';
        await turn.items.finishAll(interrupted ? 'interrupted' : result.status === 'completed' ? 'completed' : 'failed');
        const steps = 1;
        if (interrupted) return { status: 'interrupted', steps, usage: turn.usage, stopReason: 'user_interrupt' };
        if (result.status === 'failed') return { status: 'failed', steps, usage: turn.usage, stopReason: 'model_error', error: result.error?.message ?? turn.error ?? 'Codex ended the turn as failed' };
        return { status: 'completed', steps, usage: turn.usage, stopReason: 'end_turn' };
      } catch (error) {
        await turn.updates.drain();
        await turn.items.finishAll(cancelled ? 'interrupted' : 'failed');
        if (turn.failure) throw turn.failure;
        if (cancelled && agentProcess.hasExited) return { status: 'interrupted', steps: 1, usage: turn.usage, stopReason: 'user_interrupt' };
        throw error;
      } finally {
        clearTimeout(killTimer);
        context.signal.removeEventListener('abort', onAbort);
        if (current === turn) current = undefined;
      }
    },
  };
}

/** One notification of the running turn, applied in arrival order. */
async function onNotification(turn: CurrentTurn, method: string, params: unknown): Promise<void> {
  const given = params as Record<string, unknown>;
  if (applyDelta(method, given as { itemId: string; delta: string }, turn.items)) return;
  switch (method) {
    case 'turn/started':
      turn.codexTurnId ??= (given.turn as { id: string }).id;
      return;
    case 'item/started':
      itemStarted(given.item as CodexItem, turn.items, turn.context);
      return;
    case 'item/completed':
      await itemCompleted(given.item as CodexItem, turn.items, turn.context);
      return;
    case 'turn/plan/updated': {
      const steps = planSteps((given.plan as { step: string; status: string }[]) ?? []);
      const explanation = typeof given.explanation === 'string' && given.explanation !== '' ? given.explanation : undefined;
      if (steps.length > 0) await turn.context.setPlan({ steps, ...(explanation ? { explanation } : {}) });
      return;
    }
    case 'thread/tokenUsage/updated':
      turn.usage = addUsage(turn.usage, usageOf((given.tokenUsage as { last?: Parameters<typeof usageOf>[0] } | undefined)?.last));
      return;
    case 'error':
      if (given.willRetry !== true) turn.error = (given.error as { message?: string } | undefined)?.message;
      return;
    case 'turn/completed':
      turn.completed(given.turn as { status: string; error?: { message?: string } | null });
      return;
    default:
      return;
  }
}
