/**
 * The page's state: one protocol connection, the conversation list, the conversations open in
 * this tab, and the catalogs the pickers need (models, agents, executors). On every (re)connect
 * it restarts the list feed and resubscribes each open conversation with `afterSeq`.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AgentInfo } from '../../protocol/agents.js';
import type { ModelInfo } from '../../protocol/methods.js';
import { ProtocolClient, type ConnectionStatus } from '../client/protocol-client.js';
import { ProjectState } from './project-state.js';
import { notifyIfHidden } from '../client/browser-notifications.js';
import { ConversationListState } from './conversation-list-state.js';
import { ConversationState } from './conversation-state.js';

/** What the pickers offer, from `models/list`, `agents/list` and `executors/list`. */
export interface Catalog {
  models: ModelInfo[];
  defaultModel: string | undefined;
  agents: AgentInfo[];
  defaultAgent: string | undefined;
  executors: Array<{ name: string; kind: string }>;
}

/** The page's state (one per tab). */
export class AppState {
  readonly list: ConversationListState;
  /** The caller's projects and the one picked in the switcher. */
  readonly projects: ProjectState;
  readonly conversations = new Map<string, ConversationState>();
  catalog: Catalog = { models: [], defaultModel: undefined, agents: [], defaultAgent: undefined, executors: [] };
  status: ConnectionStatus = 'connecting';
  /** The last `config/updated` problem, shown in the header until the next good one. */
  configError: string | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(readonly client: ProtocolClient) {
    this.list = new ConversationListState(client);
    this.projects = new ProjectState(client);
    client.onStatus((status) => {
      this.status = status;
      this.changed();
      if (status === 'open') this.afterConnect().catch(() => undefined);
    });
    client.onNotification((event) => {
      this.list.handle(event);
      for (const conversation of this.conversations.values()) conversation.handle(event);
      if (event.method === 'config/updated') {
        this.configError = event.params.ok ? undefined : event.params.error;
        this.changed();
      }
      notifyIfHidden(event, this);
    });
  }

  /** Adds a change listener; returns its remover. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Connects. */
  start(): void {
    this.client.start();
  }

  /** The state of a conversation, subscribed on first use (and after every reconnect). */
  open(conversationId: string): ConversationState {
    let state = this.conversations.get(conversationId);
    if (!state) {
      state = new ConversationState(this.client, conversationId);
      this.conversations.set(conversationId, state);
      state.subscribe().catch(() => undefined);
    }
    return state;
  }

  /** Stops following a conversation this tab no longer shows. */
  close(conversationId: string): void {
    if (!this.conversations.delete(conversationId)) return;
    this.client.request('conversation/unsubscribe', { conversationId }).catch(() => undefined);
  }

  /** Reloads `models/list`, `agents/list` and `executors/list`. */
  async loadCatalog(): Promise<void> {
    const [models, agents, executors] = await Promise.all([
      this.client.request('models/list', {}).catch(() => ({ models: [], defaultModel: undefined })),
      this.client.request('agents/list', {}).catch(() => ({ agents: [], defaultAgent: undefined })),
      this.client.request('executors/list', {}).catch(() => ({ executors: [] })),
    ]);
    this.catalog = { models: models.models, defaultModel: models.defaultModel, agents: agents.agents, defaultAgent: agents.defaultAgent, executors: executors.executors };
    this.changed();
  }

  private async afterConnect(): Promise<void> {
    await Promise.all([this.list.start(), this.loadCatalog(), this.projects.load(), ...[...this.conversations.values()].map((state) => state.subscribe())]);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

/** The page's state, for components. */
export const AppContext = createContext<AppState | undefined>(undefined);

/** The page's state (inside `AppContext.Provider`). @throws Error outside it */
export function useApp(): AppState {
  const app = useContext(AppContext);
  if (!app) throw new Error('useApp: no AppContext.Provider above this component');
  return app;
}
