/**
 * The terminal UI's side of the runtime protocol for one open conversation: subscribing
 * (`conversation/subscribe` from `head`, then the last page of stored items with `items/list`,
 * older pages as the reader scrolls up), sending input (queue or steer), interrupting,
 * answering approvals and questions (`approval/respond`, `input/respond`), and the commands
 * of the composer (fork, rewind, compact, model, agent). A new conversation is created on the
 * first prompt, titled after it. Leaving only unsubscribes: work on the server goes on.
 */
import type { RuntimeClient } from '../client/runtime-client.js';
import { titleOf } from '../client/conversation-title.js';
import type { AnyNotification, ApprovalDecision, ApprovalPolicyInfo, LogDamage } from '../protocol/index.js';
import { TranscriptModel } from './transcript-model.js';

/** Items fetched per page when opening a conversation or scrolling up (`items/list` allows 1–1000). */
export const ITEMS_PAGE_SIZE = 200;

/** What a new conversation is created with. */
export interface NewConversationSettings {
  cwd: string;
  executor?: string;
  model?: string;
  agent?: string;
  approvalPolicy?: { default: 'allow' | 'ask' | 'deny' };
}

/** Drives one conversation at a time over a connected client. */
export class ConversationController {
  readonly model = new TranscriptModel();
  /** Settings for the next conversation created (changed by `/model`, `/agent`, `/approvals` before the first prompt). */
  pending: NewConversationSettings;
  /** The server's default model and agent, shown before a conversation exists. */
  defaults: { model?: string; agent?: string } = {};
  private loadingOlder: Promise<void> | undefined;
  private subscribing: string | undefined;
  private buffered: AnyNotification[] = [];
  private readonly removeListener: () => void;

  constructor(
    private readonly client: RuntimeClient,
    settings: NewConversationSettings,
  ) {
    this.pending = { ...settings };
    this.removeListener = client.onNotification((event: AnyNotification) => {
      // Events of a conversation being subscribed may arrive before its snapshot is applied.
      const params = event.params as { conversationId?: string };
      if (this.subscribing !== undefined && params.conversationId === this.subscribing) this.buffered.push(event);
      else this.model.apply(event);
    });
  }

  /** Learns the server's default model and agent (for the status line of a new conversation). */
  async loadDefaults(): Promise<void> {
    const [models, agents] = await Promise.all([this.client.request('models/list', {}), this.client.request('agents/list', {})]);
    this.defaults = { ...(models.defaultModel ? { model: models.defaultModel } : {}), agent: agents.defaultAgent };
  }

  /** The open conversation's id; undefined until a new one gets its first prompt. */
  get conversationId(): string | undefined {
    return this.model.conversation?.id;
  }

  /**
   * Opens a stored conversation: subscribes from now and loads its last page of items. The one
   * open before is left only once the new one is subscribed, so an id that cannot be opened
   * (a typo, a deleted conversation) leaves it shown and followed.
   * @throws RuntimeClientError when the server refuses the subscription (the open conversation stays)
   */
  async open(conversationId: string): Promise<void> {
    const previous = this.conversationId;
    this.subscribing = conversationId;
    this.buffered = [];
    let head: number;
    let damage: LogDamage[];
    try {
      const snapshot = await this.client.request('conversation/subscribe', { conversationId, afterSeq: 'head' });
      this.model.reset(snapshot);
      head = snapshot.heads[snapshot.conversation.rootSessionId] ?? 0;
      damage = snapshot.damage ?? [];
    } finally {
      this.subscribing = undefined;
    }
    for (const event of this.buffered.splice(0)) this.model.apply(event);
    // Opening the open conversation again keeps its one subscription.
    if (previous !== undefined && previous !== conversationId) await this.unsubscribe(previous);
    // Items up to the head come from the log; everything after it arrives as notifications.
    await this.loadPage(head + 1);
    if (damage.length > 0) {
      const lines = damage.map((entry) => `  ${entry.location}: ${entry.message}`).join('\n');
      this.model.addNotice(`Parts of this conversation's logs are damaged and were skipped, so what is shown may be incomplete:\n${lines}`, 'warning');
    }
  }

  /** Starts over with no conversation: the next prompt creates one. */
  async startNew(): Promise<void> {
    await this.leave();
    this.model.clear();
  }

  /** Loads the page of stored root items before the oldest held, once at a time. */
  loadOlder(): Promise<void> {
    if (!this.model.hasOlder || this.model.oldestSeq === undefined) return Promise.resolve();
    this.loadingOlder ??= this.loadPage(this.model.oldestSeq).finally(() => (this.loadingOlder = undefined));
    return this.loadingOlder;
  }

  /** True while an older page is being fetched. */
  get loading(): boolean {
    return this.loadingOlder !== undefined;
  }

  private async loadPage(cursor: number): Promise<void> {
    const conversationId = this.conversationId;
    const sessionId = this.model.rootSessionId;
    if (!conversationId || !sessionId || cursor <= 1) {
      this.model.prependStored([], false);
      return;
    }
    const { items } = await this.client.request('items/list', { conversationId, sessionId, direction: 'backward', cursor, limit: ITEMS_PAGE_SIZE });
    const oldest = items.reduce((minimum, stored) => Math.min(minimum, stored.seq), cursor);
    this.model.prependStored(items, items.length === ITEMS_PAGE_SIZE && oldest > 1);
  }

  /**
   * Sends a prompt: creates the conversation first when none is open. While a turn runs the
   * input is queued for the next turn (`queue`) or read by the running turn (`steer`).
   * @returns whether the input waits (queued) rather than starting a turn now
   */
  async send(text: string, mode: 'queue' | 'steer'): Promise<{ queued: boolean }> {
    if (!this.conversationId) {
      const { pending } = this;
      const created = await this.client.request('conversation/create', {
        cwd: pending.cwd,
        title: titleOf(text),
        ...(pending.executor ? { executor: pending.executor } : {}),
        ...(pending.model ? { model: pending.model } : {}),
        ...(pending.agent ? { agent: pending.agent } : {}),
        ...(pending.approvalPolicy ? { approvalPolicy: pending.approvalPolicy } : {}),
      });
      await this.open(created.conversation.id);
    }
    const conversationId = this.conversationId as string;
    const running = this.model.rootSession?.activeTurnId ?? undefined;
    const result = await this.client.request('session/input', {
      conversationId,
      input: text,
      mode: mode === 'steer' && running ? 'steer' : 'queue',
      ...(mode === 'steer' && running ? { expectedTurnId: running } : {}),
    });
    return { queued: result.queued };
  }

  /** Interrupts the root session's running turn. @returns whether one was running */
  async interrupt(): Promise<boolean> {
    if (!this.conversationId) return false;
    return (await this.client.request('session/interrupt', { conversationId: this.conversationId })).interrupted;
  }

  /** Answers an approval. @returns false when another client answered first */
  async answerApproval(approvalId: string, decision: ApprovalDecision, prefix?: string[]): Promise<boolean> {
    if (!this.conversationId) return false;
    const result = await this.client.request('approval/respond', { conversationId: this.conversationId, approvalId, decision, ...(prefix ? { prefix } : {}) });
    return result.accepted;
  }

  /** Answers a question of the agent. @returns false when it was already answered or cancelled */
  async answerQuestion(requestId: string, answer: string): Promise<boolean> {
    if (!this.conversationId) return false;
    return (await this.client.request('input/respond', { conversationId: this.conversationId, requestId, answer })).accepted;
  }

  /** Forks the open conversation after its last stored root item and opens the fork. @returns the fork's id */
  async fork(): Promise<string> {
    const conversationId = this.requireConversation();
    const sessionId = this.model.rootSessionId as string;
    const { items } = await this.client.request('items/list', { conversationId, sessionId, direction: 'backward', limit: 1 });
    const last = items[0];
    if (!last) throw new Error('nothing to fork yet: the conversation has no items');
    const forked = await this.client.request('conversation/fork', { conversationId, fromItemId: last.item.id });
    await this.open(forked.conversation.id);
    return forked.conversation.id;
  }

  /** Drops the root session's items after `afterItemId` (refused by the server while a turn runs). */
  async rewind(afterItemId: string): Promise<number> {
    const conversationId = this.requireConversation();
    const result = await this.client.request('conversation/rewind', { conversationId, afterItemId });
    // The server tells subscribers too, but not necessarily before it answers: what is said next belongs after the rewind.
    this.model.rewind(result.session.id, result.afterSeq, result.rewoundTurnIds);
    return result.dropped;
  }

  /** Starts a compaction turn. */
  async compact(): Promise<void> {
    await this.client.request('session/compact', { conversationId: this.requireConversation() });
  }

  /** Changes the model (of the open conversation's root session, or of the next new one). */
  async setModel(model: string): Promise<void> {
    if (!this.conversationId) {
      this.pending.model = model;
      return;
    }
    await this.client.request('session/setModel', { conversationId: this.conversationId, model });
  }

  /** Changes the agent. @returns whether the change waits for the running turn to end */
  async setAgent(agent: string): Promise<boolean> {
    if (!this.conversationId) {
      this.pending.agent = agent;
      return false;
    }
    return (await this.client.request('session/setAgent', { conversationId: this.conversationId, agent })).deferred;
  }

  /** The approval policy in force for the open conversation (its own, else its agent's). */
  async approvalPolicy(): Promise<{ policy: ApprovalPolicyInfo | undefined; source: string }> {
    if (this.model.conversation?.approvalPolicy) return { policy: this.model.conversation.approvalPolicy, source: 'this conversation' };
    const agentName = this.model.rootSession?.agent ?? this.pending.agent;
    const { agents, defaultAgent } = await this.client.request('agents/list', {});
    const agent = agents.find((candidate) => candidate.name === (agentName ?? defaultAgent));
    return { policy: agent?.approvals, source: `agent ${agent?.name ?? agentName ?? defaultAgent}` };
  }

  private requireConversation(): string {
    if (!this.conversationId) throw new Error('no conversation yet: send a prompt first');
    return this.conversationId;
  }

  /** Unsubscribes from the open conversation (its work goes on). */
  async leave(): Promise<void> {
    const id = this.conversationId;
    if (id) await this.unsubscribe(id);
  }

  private async unsubscribe(conversationId: string): Promise<void> {
    // Leaving never fails the user's action: a closed connection or a conversation deleted meanwhile has nothing left to stop.
    await this.client.request('conversation/unsubscribe', { conversationId }).catch(() => undefined);
  }

  /** Stops listening to the client. */
  dispose(): void {
    this.removeListener();
  }
}
