/**
 * The Agent Client Protocol adapter (`openvaala acp`): an editor speaks ACP v1 on stdio and this
 * bridge translates it to the runtime protocol of the local server. It keeps no state of its
 * own beyond the connection: the ACP session id is the OpenVaala conversation id, the history
 * and settings live on the server, and what is held here (which conversations this editor
 * follows, the turns its prompts wait for) ends with the process.
 */
import { randomUUID } from 'node:crypto';
import * as acp from '@agentclientprotocol/sdk';
import type { RuntimeClient, ServerRequestResult } from '../../client/runtime-client.js';
import { VERSION } from '../../package-info.js';
import type { AnyNotification, ApprovalRequest, ContentPart, ReasoningEffort, Session, Turn } from '../../protocol/index.js';
import { titleOf } from '../../client/conversation-title.js';
import { RESOURCE_NOT_FOUND, toAcpError } from './acp-errors.js';
import { promptParts } from './content.js';
import { storedItemsUpTo } from './history-replay.js';
import { conversationMcpServers } from './mcp-servers.js';
import { approvalAnswer, permissionRequest } from './permissions.js';
import { EFFORT_OPTION, MODEL_OPTION, parseEffort, sessionSettings, type SessionSettings } from './session-config.js';
import { eventSessionId, eventUpdates, itemUpdates, type UpdateContext } from './session-updates.js';
import { stopReason } from './stop-reason.js';
import { TurnEnds } from './turn-ends.js';
import { EditorTerminals } from './editor-terminals.js';
import { handleFileRequests } from './editor-files.js';

/** What the bridge knows of a conversation the editor follows. */
interface Followed {
  rootSessionId: string;
  /** Working directory of the default executor. */
  root: string;
  /** Whether the default executor is `local` (the editor's machine). */
  local: boolean;
  title: string;
  agent: string;
  model: string;
  /** Created by this connection and not yet prompted: the first prompt names it. */
  unnamed?: boolean;
  /** The reasoning effort chosen for the next turns; absent = the model's default. */
  effort?: ReasoningEffort;
  /** Live events held back while `session/load` replays the history. */
  held?: AnyNotification[];
}

/**
 * Translates between one editor and the runtime server.
 * Usage: `new AcpBridge(runtimeClient).app().connect(acp.ndJsonStream(stdout, stdin))`.
 */
export class AcpBridge {
  private editor: acp.AgentContext | undefined;
  private editorCapabilities: acp.ClientCapabilities = {};
  private readonly followed = new Map<string, Followed>();
  /** `clientMessageId`s of the prompts this editor sent: their user messages are not echoed back. */
  private readonly ownInputs = new Set<string>();
  /** Items whose text went out as chunks already. */
  private readonly streamed = new Set<string>();
  /** Output of running tool calls so far. */
  private readonly outputs = new Map<string, string>();
  /** Turn ends, for the prompts waiting for them. */
  private readonly turns = new TurnEnds();
  /** Every message to the editor goes out in order through this chain. */
  private outgoing: Promise<unknown> = Promise.resolve();
  /** The editor terminals running the runtime's commands. */
  private readonly terminals = new EditorTerminals({
    editor: () => this.requireEditor(),
    shows: (conversationId, sessionId) => this.followed.get(conversationId)?.rootSessionId === sessionId,
    update: (sessionId, update) => {
      this.sendUpdate(sessionId, update);
      return this.outgoing;
    },
  });

  /** @param runtime a connection to the runtime server, initialized with `approvals` and `deltas` */
  constructor(private readonly runtime: RuntimeClient) {
    runtime.onNotification((event) => this.onRuntimeEvent(event));
    runtime.onClose((error) => this.turns.closed(error));
    runtime.handleServerRequest('approval/request', (approval) => this.askPermission(approval));
    handleFileRequests(runtime, () => this.requireEditor());
    runtime.handleServerRequest('client/terminal/run', (params) => this.terminals.run(params));
    runtime.handleServerRequest('client/terminal/kill', (params) => this.terminals.kill(params));
  }

  /** The ACP agent app serving the editor. */
  app(): acp.AgentApp {
    return acp
      .agent({ name: 'openvaala' })
      .onConnect((connection) => {
        this.editor = connection.client;
      })
      .onRequest('initialize', ({ params }) => this.initialize(params))
      .onRequest('session/new', ({ params }) => this.guard(() => this.newSession(params)))
      .onRequest('session/load', ({ params }) => this.guard(() => this.loadSession(params)))
      .onRequest('session/resume', ({ params }) => this.guard(() => this.resumeSession(params)))
      .onRequest('session/list', ({ params }) => this.guard(() => this.listSessions(params)))
      .onRequest('session/prompt', ({ params }) => this.guard(() => this.prompt(params)))
      .onRequest('session/set_mode', ({ params }) => this.guard(() => this.setMode(params)))
      .onRequest('session/set_config_option', ({ params }) => this.guard(() => this.setConfigOption(params)))
      .onNotification('session/cancel', ({ params }) => this.cancel(params));
  }

  private initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.editorCapabilities = params.clientCapabilities ?? {};
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, embeddedContext: true },
        mcpCapabilities: { http: true },
        sessionCapabilities: { list: {}, resume: {} },
      },
      agentInfo: { name: 'openvaala', title: 'OpenVaala', version: VERSION },
      authMethods: [],
    };
  }

  private async newSession(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse> {
    const mcpServers = conversationMcpServers(params.mcpServers);
    const created = await this.runtime.request('conversation/create', { cwd: params.cwd, executor: 'local', ...(mcpServers ? { mcpServers } : {}) });
    const conversationId = created.conversation.id;
    await this.follow(conversationId, 'head');
    this.followedOrThrow(conversationId).unnamed = true;
    return { sessionId: conversationId, ...(await this.settings(conversationId)) };
  }

  /** Replays the history as updates, then answers: the editor has the whole thread when the answer comes. */
  private async loadSession(params: acp.LoadSessionRequest): Promise<acp.LoadSessionResponse> {
    const conversationId = params.sessionId;
    const heads = await this.follow(conversationId, 'replay');
    const followed = this.followedOrThrow(conversationId);
    const head = heads[followed.rootSessionId] ?? 0;
    const context = this.updateContext(followed);
    for await (const item of storedItemsUpTo(this.runtime, conversationId, followed.rootSessionId, head)) {
      for (const update of itemUpdates(item, context, true)) this.sendUpdate(conversationId, update);
    }
    // What happened meanwhile follows the history.
    const held = followed.held ?? [];
    delete followed.held;
    for (const event of held) this.onRuntimeEvent(event);
    const settings = await this.settings(conversationId);
    await this.outgoing;
    return settings;
  }

  private async resumeSession(params: acp.ResumeSessionRequest): Promise<acp.ResumeSessionResponse> {
    await this.follow(params.sessionId, 'head');
    return this.settings(params.sessionId);
  }

  private async listSessions(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
    const listed = await this.runtime.request('conversation/list', { executor: 'local', limit: 50, ...(params.cwd ? { cwd: params.cwd } : {}), ...(params.cursor ? { cursor: params.cursor } : {}) });
    return {
      sessions: listed.conversations.map((conversation) => ({ sessionId: conversation.id, cwd: conversation.cwd, title: conversation.title || conversation.preview || null, updatedAt: new Date(conversation.updatedAt).toISOString() })),
      ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}),
    };
  }

  private async prompt(params: acp.PromptRequest): Promise<acp.PromptResponse> {
    const conversationId = params.sessionId;
    if (!this.followed.has(conversationId)) await this.follow(conversationId, 'head');
    const followed = this.followedOrThrow(conversationId);
    const input = promptParts(params.prompt);
    const answered = await this.answerQuestion(conversationId, followed, input);
    if (answered) return answered;
    const clientMessageId = `acp-${randomUUID()}`;
    this.ownInputs.add(clientMessageId);
    const sent = await this.runtime.request('session/input', { conversationId, input, clientMessageId, ...(followed.effort ? { reasoningEffort: followed.effort } : {}) });
    if (sent.turnId === undefined) throw acp.RequestError.internalError(undefined, 'the server started no turn for the prompt');
    if (followed.unnamed) {
      delete followed.unnamed;
      // A new conversation is named after its first prompt, as `openvaala exec` names it.
      const text = input.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      const title = titleOf(text);
      if (title) await this.runtime.request('conversation/update', { conversationId, title }).catch(() => undefined);
    }
    return this.promptResponse(await this.turns.wait(sent.turnId));
  }

  /**
   * A prompt sent while the agent waits for an answer (`request_user_input`, shown as an
   * `[input requested]` message) answers it; the prompt then ends with the turn that asked.
   * @returns undefined when no question waits
   */
  private async answerQuestion(conversationId: string, followed: Followed, input: ContentPart[]): Promise<acp.PromptResponse | undefined> {
    const { sessions } = await this.runtime.request('session/list', { conversationId });
    const question = sessions.find((session) => session.id === followed.rootSessionId)?.pendingUserInputs[0];
    if (!question) return undefined;
    const answer = input.map((part) => (part.type === 'text' ? part.text : '')).join('\n').trim();
    const { accepted } = await this.runtime.request('input/respond', { conversationId, requestId: question.requestId, answer });
    if (!accepted) return undefined;
    return this.promptResponse(await this.turns.wait(question.turnId));
  }

  /** The answer to `session/prompt` once its turn has ended and its updates have gone out. */
  private async promptResponse(turn: Turn): Promise<acp.PromptResponse> {
    await this.outgoing;
    const reason = stopReason(turn);
    if (reason === undefined) throw acp.RequestError.internalError({ turnId: turn.id, stopReason: turn.stopReason }, `the turn failed: ${turn.error ?? turn.stopReason ?? 'no reason given'}`);
    return { stopReason: reason };
  }

  private async cancel(params: acp.CancelNotification): Promise<void> {
    if (!this.followed.has(params.sessionId)) return;
    // Nothing to interrupt is fine: the turn may have ended as the editor cancelled.
    await this.runtime.request('session/interrupt', { conversationId: params.sessionId }).catch(() => undefined);
  }

  private async setMode(params: acp.SetSessionModeRequest): Promise<acp.SetSessionModeResponse> {
    const followed = this.followedOrThrow(params.sessionId);
    const { session } = await this.runtime.request('session/setAgent', { conversationId: params.sessionId, agent: params.modeId });
    // The editor knows the mode it chose; an agent that brings its own model changes the options.
    followed.agent = session.agent;
    this.sessionChanged(params.sessionId, followed, session);
    return {};
  }

  private async setConfigOption(params: acp.SetSessionConfigOptionRequest): Promise<acp.SetSessionConfigOptionResponse> {
    const followed = this.followedOrThrow(params.sessionId);
    if (typeof params.value !== 'string') throw acp.RequestError.invalidParams(undefined, `session/set_config_option: option "${params.configId}" takes a string value`);
    if (params.configId === MODEL_OPTION) {
      const { session } = await this.runtime.request('session/setModel', { conversationId: params.sessionId, model: params.value });
      followed.model = session.model;
    } else if (params.configId === EFFORT_OPTION) {
      try {
        const effort = parseEffort(params.value);
        if (effort === undefined) delete followed.effort;
        else followed.effort = effort;
      } catch (error) {
        throw acp.RequestError.invalidParams(undefined, (error as Error).message);
      }
    } else {
      throw acp.RequestError.invalidParams(undefined, `session/set_config_option: unknown option "${params.configId}" (${MODEL_OPTION}, ${EFFORT_OPTION})`);
    }
    return { configOptions: (await this.settings(params.sessionId)).configOptions };
  }

  /**
   * Subscribes to a conversation and offers the editor's files to it. `replay`: live events are
   * held until `session/load` has sent the history.
   * @returns per session, the seq of its last stored item when the subscription began
   */
  private async follow(conversationId: string, mode: 'head' | 'replay'): Promise<Record<string, number>> {
    const previous = this.followed.get(conversationId);
    if (mode === 'replay' && previous) previous.held = [];
    const subscribed = await this.runtime.request('conversation/subscribe', { conversationId, afterSeq: 'head' });
    const { conversation } = subscribed;
    const first = conversation.workLocation[0];
    const root = subscribed.sessions.find((session) => session.id === conversation.rootSessionId);
    if (!root || !first) throw acp.RequestError.internalError(undefined, `conversation ${conversationId} has no root session or no work location`);
    const followed: Followed = {
      rootSessionId: root.id,
      root: first.cwd,
      local: first.executor === 'local',
      title: conversation.title,
      agent: root.agent,
      model: root.model,
      ...(previous?.effort ? { effort: previous.effort } : {}),
      ...(mode === 'replay' ? { held: previous?.held ?? [] } : {}),
    };
    this.followed.set(conversationId, followed);
    const fs = this.editorCapabilities.fs;
    // Only a conversation on this machine reads the editor's buffers (the editor runs here).
    if (followed.local && (fs?.readTextFile || fs?.writeTextFile)) {
      await this.runtime.request('conversation/serveFiles', { conversationId, read: fs.readTextFile === true, write: fs.writeTextFile === true });
    }
    // Commands too: the editor's terminal runs on this machine.
    if (followed.local && this.editorCapabilities.terminal === true) await this.runtime.request('conversation/serveCommands', { conversationId, run: true });
    const waiting = subscribed.sessions.flatMap((session) => session.pendingApprovals);
    // Asked once the editor has the session (after the answer that opens it).
    if (waiting.length > 0) setImmediate(() => this.askWaitingApprovals(conversationId, waiting));
    return subscribed.heads;
  }

  /** Asks the editor about a tool call waiting for approval; the answer is for `approval/request` or `approval/respond`. */
  private async askPermission(approval: ApprovalRequest): Promise<ServerRequestResult<'approval/request'>> {
    const followed = this.followed.get(approval.conversationId);
    if (!followed || !this.editor) throw new Error('the editor does not follow this conversation');
    const editor = this.editor;
    // The call's tool_call update goes out before the editor is asked about it.
    await this.outgoing;
    const response = await editor.request('session/request_permission', permissionRequest(approval.conversationId, approval, followed.root));
    return approvalAnswer(approval, response);
  }

  /**
   * Calls that were already waiting for approval when the editor opened the session were asked
   * before it subscribed: the editor is asked now, and its answer sent with `approval/respond`
   * (another client may have answered meanwhile; then it is not accepted, which is fine).
   */
  private askWaitingApprovals(conversationId: string, approvals: ApprovalRequest[]): void {
    for (const approval of approvals) {
      this.askPermission(approval)
        .then((answer) => this.runtime.request('approval/respond', { conversationId, approvalId: approval.approvalId, ...answer }))
        .catch(() => undefined);
    }
  }

  private async settings(conversationId: string): Promise<SessionSettings> {
    const followed = this.followedOrThrow(conversationId);
    const { sessions } = await this.runtime.request('session/list', { conversationId });
    const root = sessions.find((session) => session.id === followed.rootSessionId);
    if (!root) throw acp.RequestError.internalError(undefined, `conversation ${conversationId} has no root session`);
    return sessionSettings(this.runtime, root, followed.effort);
  }

  private onRuntimeEvent(event: AnyNotification): void {
    if (event.method === 'turn/completed') this.turns.turnEnded(event.params.turn);
    const conversationId = (event.params as { conversationId?: unknown }).conversationId;
    if (typeof conversationId !== 'string') return;
    const followed = this.followed.get(conversationId);
    if (!followed) return;
    if (followed.held) {
      followed.held.push(event);
      return;
    }
    if (event.method === 'conversation/updated') {
      if (event.params.conversation.title !== followed.title) {
        followed.title = event.params.conversation.title;
        this.sendUpdate(conversationId, { sessionUpdate: 'session_info_update', title: followed.title, updatedAt: new Date(event.params.conversation.updatedAt).toISOString() });
      }
      return;
    }
    // Subagent sessions have their own threads; the editor shows the root session's.
    const sessionId = eventSessionId(event);
    if (sessionId !== undefined && sessionId !== followed.rootSessionId) return;
    if (event.method === 'session/updated') this.sessionChanged(conversationId, followed, event.params.session);
    for (const update of eventUpdates(event, this.updateContext(followed))) this.sendUpdate(conversationId, update);
  }

  /** A change of the root session's agent or model (by this editor or another client) as mode and option updates. */
  private sessionChanged(conversationId: string, followed: Followed, session: Session): void {
    if (session.agent !== followed.agent) {
      followed.agent = session.agent;
      this.sendUpdate(conversationId, { sessionUpdate: 'current_mode_update', currentModeId: followed.agent });
    }
    if (session.model !== followed.model) {
      followed.model = session.model;
      const editor = this.editor;
      if (!editor) return;
      // Read before it is queued, so it keeps its place among the updates.
      const options = sessionSettings(this.runtime, session, followed.effort).then((settings) => settings.configOptions);
      this.outgoing = this.outgoing
        .then(async () => editor.notify('session/update', { sessionId: conversationId, update: { sessionUpdate: 'config_option_update', configOptions: await options } }))
        .catch(() => undefined);
    }
  }

  private updateContext(followed: Followed): UpdateContext {
    return {
      root: followed.root,
      streamed: this.streamed,
      outputs: this.outputs,
      terminals: this.terminals.byToolCall,
      notices: this.editorCapabilities.session?.notices !== undefined && this.editorCapabilities.session.notices !== null,
      isOwnInput: (id) => id !== undefined && this.ownInputs.has(id),
    };
  }

  private sendUpdate(sessionId: string, update: acp.SessionUpdate): void {
    const editor = this.editor;
    if (!editor) return;
    this.outgoing = this.outgoing.then(() => editor.notify('session/update', { sessionId, update })).catch(() => undefined);
  }

  private followedOrThrow(conversationId: string): Followed {
    const followed = this.followed.get(conversationId);
    if (!followed) throw new acp.RequestError(RESOURCE_NOT_FOUND, `session ${conversationId} is not open on this connection; call session/new, session/load or session/resume first`);
    return followed;
  }

  private requireEditor(): acp.AgentContext {
    if (!this.editor) throw new Error('no editor is connected');
    return this.editor;
  }

  /** Runs a handler, turning the runtime's and the translation's errors into ACP errors. */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toAcpError(error);
    }
  }
}
