/**
 * The runtime (SPEC §3): the root object of the server. It holds the configuration (models,
 * tools, executors, limits) and the table of open conversations, and routes every request to
 * the right conversation.
 */
import type { ModelDiscovery } from '../models/model-discovery.js';
import type { ProcessTracker } from '../executors/process-tracker.js';
import { catalogPrices, type PriceLookup } from './usage.js';
import path from 'node:path';
import type { ConversationState, ConversationStore } from '../dao/conversation-store.js';
import { planTurnRecovery, writeTurnRecovery } from '../dao/turn-recovery.js';
import { defaultAgentName, isExternalAgent, type AgentDefinition, type AgentsFile } from '../config/agents.js';
import type { Executor } from '../executors/executor.js';
import type { McpSettings } from '../mcp/client-manager.js';
import { NO_PLUGINS, type PluginSet } from '../plugins/plugin-set.js';
import { NO_HOOKS, type HooksFile } from '../config/hooks.js';
import type { Logger } from '../logger.js';
import type { Workspace } from '../executors/workspace.js';
import type { AttachmentStore } from './attachments.js';
import type { ScheduleService } from '../platform/schedules/schedule-service.js';
import { newId } from '../ids.js';
import type { ModelRegistry } from '../models/model-registry.js';
import type { Conversation, Item, Session, WorkLocationEntry } from '../protocol/index.js';
import { fitConversationTitle } from '../protocol/conversations.js';
import type { Tool } from '../tools/tool.js';
import { LiveConversation } from './conversation.js';
import { ConversationListFeed } from './conversation-list-feed.js';
import { createWorktree, removeWorktree } from './worktree-git.js';
import { NotFoundError, InvalidWorkLocationError } from './runtime-errors.js';
import { StateConflictError } from './state-conflict-error.js';
import { RuntimeExecutors } from './runtime-executors.js';
import { RuntimeExtensions } from './runtime-extensions.js';
import { OpenConversations } from './open-conversations.js';
import { DEFAULT_LIMITS, type RuntimeLimits } from './runtime-limits.js';

export { NotFoundError, InvalidWorkLocationError } from './runtime-errors.js';

export { DEFAULT_LIMITS, type RuntimeLimits } from './runtime-limits.js';

/** What a runtime is built from. */
export interface RuntimeOptions {
  store: ConversationStore;
  models: ModelRegistry;
  /** Executors by name; `local` is the default. */
  executors: Map<string, Executor>;
  /** Environment tools offered to agents. */
  tools: Tool[];
  /** Agent definitions (`agents.yaml`); default: one built-in default agent. */
  agents?: AgentsFile;
  /** MCP servers (`mcp.yaml`) whose tools each conversation offers; default: none. */
  mcp?: McpSettings;
  /** Hooks (`hooks.yaml`); default: none. */
  hooks?: HooksFile;
  /** The server's own skills directory (`<configDir>/skills`); default: none. */
  skillsDirectory?: string;
  /** Where problems that are not a conversation's (an invalid skill) are also logged. */
  logger?: Logger;
  limits?: Partial<RuntimeLimits>;
  /** Prices of models, for `session/usage` and turn costs; default: the catalog entry's `prices`, if any. */
  prices?: PriceLookup;
}



export type { ConversationClaims } from './runtime-extensions.js';

/** The root object of the runtime server. */
export class Runtime {
  readonly store: ConversationStore;
  /** Uploaded files of conversations (set by the server that stores them); absent = none. */
  attachments: AttachmentStore | undefined;
  /** What the runtime server plugs in: built-in MCP servers, cluster ownership, event observers and turn hooks. */
  readonly extensions = new RuntimeExtensions();
  /** Scheduled tasks of conversations (set by the server that runs them); absent = none. */
  schedules: ScheduleService | undefined = undefined;
  /** Replaced as a whole by `reconfigure`; a running turn keeps the model it resolved at its start. */
  models: ModelRegistry;
  readonly tools: Tool[];
  limits: RuntimeLimits;
  /** The executors in force; open conversations keep the instances their workspaces hold. */
  private readonly executors: RuntimeExecutors;
  /** MCP servers for conversations opened from now on (an open conversation keeps its clients). */
  mcp: McpSettings | undefined;
  /** Hooks in force; a reload may replace them, and turns started afterwards use the new ones. */
  hooks: HooksFile;
  /**
   * The installed plugins (`plugins.yaml`); a reload may replace them. Their agents and MCP
   * servers are merged into `agents` and `mcp` by whoever applies the configuration; their
   * skills, prompt commands and hooks join each turn (`beginTurn`), where a project's own
   * `.openvaala/plugins.yaml` may turn them on or off.
   */
  plugins: PluginSet = NO_PLUGINS;
  /** The server's own skills directory, searched before the work location's. */
  readonly skillsDirectory: string | undefined;
  readonly logger: Logger | undefined;
  /** Prices of a `provider/model` (undefined: unknown, no cost reported). */
  readonly prices: PriceLookup;
  private agents: AgentsFile;
  /** Name of the agent used when none is named. */
  defaultAgent: string;
  /** The live conversation list feed (`conversations/subscribe`), fed by the store's index changes. */
  readonly conversationFeed = new ConversationListFeed();
  private readonly openConversations: OpenConversations;

  constructor(options: RuntimeOptions) {
    this.store = options.store;
    this.models = options.models;
    this.tools = options.tools;
    this.openConversations = new OpenConversations({ open: (conversationId) => this.openConversation(conversationId), bounds: () => this.limits, logger: options.logger });
    this.executors = new RuntimeExecutors(options.executors, () => [...this.openConversations.values()].flatMap((conversation) => conversation.workspaces.map((workspace) => workspace.executor)), options.logger);
    this.mcp = options.mcp;
    this.hooks = options.hooks ?? NO_HOOKS;
    this.skillsDirectory = options.skillsDirectory;
    this.logger = options.logger;
    this.prices = options.prices ?? catalogPrices(() => this.models.list());
    this.agents = options.agents ?? { agents: { default: { default: true } } };
    this.defaultAgent = defaultAgentName(this.agents);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.store.onIndexChange((change) => this.conversationFeed.publish(change));
  }

  /** Runs the extensions' `conversationDeletionHooks` for a deleted conversation. */
  async conversationDeleted(conversationId: string): Promise<void> {
    for (const hook of this.extensions.conversationDeletionHooks) {
      await hook(conversationId).catch((error: unknown) => this.logger?.error({ conversationId, error: (error as Error).message }, 'work after deleting a conversation failed'));
    }
  }

  /**
   * Takes a conversation out of the table of open ones (it is being deleted) and returns the
   * live one, if it was open, for the caller to shut down. A later `getConversation` reads
   * storage again.
   */
  takeOpenConversation(conversationId: string): Promise<LiveConversation | undefined> {
    return this.openConversations.take(conversationId);
  }

  /**
   * Closes open conversations nobody uses (see `OpenConversations.evictIdle`): the least
   * recently used beyond `maxIdleOpenConversations` or beyond `maxIdleHistoryChars` of history
   * text, and any unused for `idleConversationMs`.
   * @param now the current time, ms (tests)
   * @returns the ids of the conversations closed
   */
  evictIdleConversations(now = Date.now()): Promise<string[]> {
    return this.openConversations.evictIdle(now);
  }

  /**
   * Puts new definitions in force (after a configuration reload). Idle conversations use them
   * from their next turn; a running turn finishes on the model, agent definition and limits it
   * started with.
   */
  reconfigure(options: { models: ModelRegistry; agents: AgentsFile; limits?: Partial<RuntimeLimits> }): void {
    this.models = options.models;
    this.agents = options.agents;
    this.defaultAgent = defaultAgentName(options.agents);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  /**
   * Puts a new set of executors in force (after `executors.yaml` was reloaded). Conversations
   * created or opened from now on use them; open conversations keep the executors their
   * workspaces hold. An executor left out of `next` is closed once no open conversation uses
   * it (at the latest when the runtime shuts down).
   * @param next executors by name, `local` first; may reuse instances of the current set
   */
  replaceExecutors(next: Map<string, Executor>): void {
    this.executors.replace(next);
  }

  /** The number of open conversations (loaded from storage or created since the start). */
  get openConversationCount(): number {
    return this.openConversations.size;
  }

  /**
   * The definition of an agent.
   * @throws NotFoundError naming the known agents when it is not defined
   */
  agentDefinition(name: string): AgentDefinition {
    const definition = this.agents.agents[name];
    if (!definition) throw new NotFoundError(`agent "${name}" is not defined in agents.yaml (defined: ${Object.keys(this.agents.agents).join(', ')})`);
    return definition;
  }

  /** The agent definitions in force (`agents.yaml`), in file order. */
  get agentDefinitions(): AgentsFile['agents'] {
    return this.agents.agents;
  }

  /**
   * The model a new conversation's session starts with: the one given, else the agent's, else
   * the default. An agent run by an external process chooses its own model, so without a model
   * given or in its definition its sessions record `<kind>/<agent>` (e.g.
   * `codex-app-server/codex`): no provider is needed, and no turn is priced as another model's.
   * @throws UnknownModelError when the model cannot be resolved
   */
  private initialModel(agent: string, given: string | undefined): string {
    const definition = this.agentDefinition(agent);
    if (given === undefined && definition.model === undefined && isExternalAgent(definition)) return `${definition.kind}/${agent}`;
    return this.models.resolve(given ?? definition.model).name;
  }

  /** The configured executor of that name, or undefined. */
  findExecutor(name: string): Executor | undefined {
    return this.executors.find(name);
  }

  /**
   * Extra environment variables for every command of a conversation (the platform's project
   * secrets), read at each command's start; absent: none.
   */
  commandEnvironment: ((conversation: Conversation) => Record<string, string> | undefined) | undefined;

  /**
   * Shell text run before every command of a conversation on a given executor (a project's
   * resource limits as `ulimit` calls on sandboxed executors), read at each command's start;
   * absent: none.
   */
  commandPrefix: ((conversation: Conversation, executor: Executor) => string | undefined) | undefined;

  /** Records external agents' process groups (`processes/<pid>.json`), so a restart after a crash stops them; absent: not recorded. */
  processTracker: ProcessTracker | undefined;

  /** Variables for the external agent processes of a conversation (a project's `CODEX_HOME`); absent: none. */
  agentEnvironment: ((conversation: Conversation) => Record<string, string> | undefined) | undefined;

  /** The discovered model catalog (`models/list`), when the server discovers providers' models; absent: configured models only. */
  modelDiscovery: ModelDiscovery | undefined;

  /**
   * Creates a conversation with its root session and opens it. With `worktree.within` (a
   * directory the conversation must stay in, such as a project's workspace), the worktree is
   * made inside it or refused (see `createWorktree`).
   * @throws NotFoundError for an unknown executor; Error for a relative cwd or an unknown model
   */
  async createConversation(options: { cwd?: string; executor?: string; workLocation?: WorkLocationEntry[]; model?: string; agent?: string; title?: string; projectId?: string; context?: Pick<Conversation, 'mcpServers' | 'instructions' | 'approvalPolicy'>; worktree?: { baseBranch?: string; within?: string } }): Promise<LiveConversation> {
    let workLocation = options.workLocation ?? (options.cwd !== undefined ? [{ executor: options.executor ?? 'local', cwd: options.cwd }] : []);
    let first = workLocation[0];
    if (!first) throw new InvalidWorkLocationError('give cwd (with an optional executor) or a non-empty workLocation');
    await this.executors.checkWorkLocation(workLocation);
    const agent = options.agent ?? this.defaultAgent;
    const model = this.initialModel(agent, options.model);
    const conversationId = newId('conv');
    // The creating server owns it (a new id is free).
    await this.extensions.ownership?.claim(conversationId);
    let worktree: Conversation['worktree'];
    if (options.worktree) {
      // The ULID's random tail: unique among conversations made in the same millisecond.
      const made = await createWorktree(this.executors.get(first.executor), first.cwd, conversationId.slice(-10), options.worktree.baseBranch, options.worktree.within);
      worktree = made.worktree;
      const title = options.title ?? fitConversationTitle(path.posix.basename(first.cwd));
      workLocation = [{ executor: first.executor, cwd: made.cwd }, ...workLocation.slice(1)];
      first = { executor: first.executor, cwd: made.cwd };
      options = { ...options, title };
    }
    const now = Date.now();
    const session: Session = {
      id: newId('sess'),
      conversationId,
      parentSessionId: null,
      agent,
      model,
      status: 'idle',
      activeTurnId: null,
      queuedInputs: [],
      pendingApprovals: [], pendingUserInputs: [],
      createdAt: now,
      updatedAt: now,
    };
    const conversation: Conversation = {
      id: conversationId,
      title: options.title ?? fitConversationTitle(path.posix.basename(first.cwd)),
      workLocation,
      rootSessionId: session.id,
      createdAt: now,
      updatedAt: now,
      ...(options.projectId !== undefined ? { projectId: options.projectId } : {}),
      ...(worktree ? { worktree } : {}),
      // MCP servers, instructions and approval policy given for this conversation only, kept with it.
      ...options.context,
    };
    try {
      await this.store.createConversation(conversation, session);
    } catch (error) {
      // A conversation that was never recorded leaves no worktree behind.
      if (worktree) await removeWorktree(this.executors.get(worktree.executor), worktree).catch(() => undefined);
      throw error;
    }
    const live = new LiveConversation(this, conversation, this.workspacesOf(conversation), { conversation, sessions: [session], turns: [], metadataSeq: 2 }, new Map());
    // Nothing is stored yet: every head is 0, known at once, so subscribers attach in their own tick.
    await live.loadHeads();
    this.openConversations.add(live);
    return live;
  }

  /** The configured executors, `local` first (`executors/list`). */
  listExecutors(): { name: string; kind: Executor['kind'] }[] {
    return this.executors.list();
  }

  /**
   * Renames a conversation or moves its work location.
   * @throws NotFoundError for an unknown executor; Error for a relative or repeated entry
   */
  async updateConversation(conversationId: string, changes: { title?: string; workLocation?: WorkLocationEntry[] }) {
    const conversation = await this.getConversation(conversationId);
    if (changes.workLocation) await this.executors.checkWorkLocation(changes.workLocation);
    const workspaces = changes.workLocation ? this.workspacesOf({ ...conversation.state, workLocation: changes.workLocation }) : undefined;
    return conversation.update(changes, workspaces);
  }

  /** One workspace per work location entry. @throws NotFoundError for an executor not configured (any more) */
  private workspacesOf(conversation: Conversation): [Workspace, ...Workspace[]] {
    return this.executors.workspacesOf(conversation, { environment: (each) => this.commandEnvironment?.(each), prefix: (each, executor) => this.commandPrefix?.(each, executor) });
  }

  /**
   * Returns an open conversation, opening it from storage when needed.
   * @throws NotFoundError when it does not exist
   * @throws DamagedConversationError when one of its logs cannot be read, or its metadata log
   *   holds no valid conversation entry (nothing is written to its logs then)
   */
  getConversation(conversationId: string): Promise<LiveConversation> {
    return this.openConversations.get(conversationId);
  }

  private async openConversation(conversationId: string): Promise<LiveConversation> {
    if (this.extensions.ownership && !(await this.extensions.ownership.claim(conversationId))) {
      throw new StateConflictError(`conversation "${conversationId}" is served by another server of the cluster`, 'owner_unreachable');
    }
    let state: ConversationState | undefined;
    const items = new Map<string, Item[]>();
    try {
      state = await this.store.openConversationState(conversationId);
      // A session whose log cannot be read fails the whole opening: continuing without its
      // history would show, and send to the model, a conversation that is not the stored one.
      for (const session of state?.sessions ?? []) {
        items.set(session.id, (await this.store.listItems(conversationId, session.id)).map((stored) => stored.item));
      }
    } catch (error) {
      await this.extensions.ownership?.relinquish(conversationId);
      throw this.store.damagedBy(conversationId, error);
    }
    if (!state) {
      await this.extensions.ownership?.relinquish(conversationId);
      throw new NotFoundError(`conversation "${conversationId}" does not exist`);
    }
    const location = state.conversation.workLocation[0];
    if (!location) throw new Error(`conversation "${conversationId}" has no work location`);
    // A turn left `running` by a server that died is over: record that, once, in the log.
    // (Start-up recovery has normally done it already; this covers what the index missed.)
    const plan = planTurnRecovery(state);
    if (plan) {
      for (const [sessionId, markers] of await writeTurnRecovery(this.store, conversationId, plan)) items.get(sessionId)?.push(...markers);
    }
    const current = plan?.state ?? state;
    const live = new LiveConversation(this, current.conversation, this.workspacesOf(current.conversation), current, items);
    await live.loadHeads();
    return live;
  }

  /**
   * When a conversation was last used (asked for by a request, a turn or a schedule), ms since
   * the epoch: the server gives memory back once this is old and no turn runs.
   */
  get lastActivityAt(): number {
    return this.openConversations.lastActivityAt;
  }

  /** When idle conversations were last closed, ms since the epoch (0 before any): the server collects again once this is old. */
  get lastClosedAt(): number {
    return this.openConversations.lastClosedAt;
  }

  /** True when no turn is running in any open conversation. */
  isIdle(): boolean {
    return ![...this.openConversations.values()].some((conversation) => conversation.isBusy);
  }

  /** Number of clients attached across open conversations. */
  subscriberCount(): number {
    return [...this.openConversations.values()].reduce((sum, conversation) => sum + conversation.subscriberCount, 0);
  }

  /** Interrupts running turns (recorded as `shutdown`), waits for their records, closes executors. */
  async shutdown(): Promise<void> {
    await this.openConversations.shutdown();
    await this.executors.closeAll();
  }
}
