/**
 * Commands of the runtime run in the editor's terminals: the runtime's `client/terminal/run`
 * and `client/terminal/kill` done with ACP's `terminal/create`, `terminal/wait_for_exit`,
 * `terminal/output`, `terminal/kill` and `terminal/release`
 * (https://agentclientprotocol.com/protocol/v1/terminals). The terminal is embedded in its tool
 * call (`{type: "terminal", terminalId}` content) as soon as it exists, so the editor shows the
 * command live; the id is kept so the update that finishes the call leaves it in place.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { ServerRequestParams, ServerRequestResult } from '../../client/runtime-client.js';

/** What a run needs of the bridge. */
export interface TerminalHost {
  /** The editor connection. @throws Error when no editor is connected */
  editor(): acp.AgentContext;
  /** Whether the editor's thread shows the session's tool calls (the conversation's root session; subagents' are not shown). */
  shows(conversationId: string, sessionId: string): boolean;
  /** Sends a session update in order with the others; resolves once it has gone out. */
  update(sessionId: string, update: acp.SessionUpdate): Promise<unknown>;
}

/** One run in progress: its terminal once created, and whether a kill was asked for. */
interface Run {
  terminal?: acp.TerminalHandle;
  killRequested: boolean;
}

/** The editor terminals of the runtime's commands. */
export class EditorTerminals {
  /** Terminal id by tool call (item id), until the update finishing the call takes it. */
  readonly byToolCall = new Map<string, string>();
  private readonly runs = new Map<string, Run>();

  constructor(private readonly host: TerminalHost) {}

  /**
   * Runs a command in a new editor terminal and answers how it ended; the terminal is released
   * at the end whatever happened.
   * @throws Error (the editor's) when a terminal request fails
   */
  async run(params: ServerRequestParams<'client/terminal/run'>): Promise<ServerRequestResult<'client/terminal/run'>> {
    const editor = this.host.editor();
    const sessionId = params.conversationId;
    const run: Run = { killRequested: false };
    this.runs.set(params.runId, run);
    try {
      const terminal = await editor.createTerminal({
        sessionId,
        // The runtime's command is a shell command line, as its executors run it.
        command: 'bash',
        args: ['-c', params.command],
        env: Object.entries(params.env).map(([name, value]) => ({ name, value })),
        cwd: params.cwd,
        outputByteLimit: params.outputByteLimit,
      });
      run.terminal = terminal;
      // ACP: a terminal is embedded before it is released. A subagent's call has no place in
      // the thread: its terminal runs unseen.
      let shown: Promise<unknown> = Promise.resolve();
      if (this.host.shows(sessionId, params.sessionId)) {
        this.byToolCall.set(params.itemId, terminal.id);
        shown = this.host.update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId: params.itemId, content: [{ type: 'terminal', terminalId: terminal.id }] });
      }
      try {
        // A kill asked for while the terminal was being created applies now.
        if (run.killRequested) await terminal.kill();
        const exit = await terminal.waitForExit();
        const { output, truncated } = await terminal.currentOutput();
        return { exitCode: exit.exitCode ?? null, signal: exit.signal ?? null, output, truncated };
      } finally {
        await shown;
        await terminal.release().catch(() => undefined);
      }
    } finally {
      this.runs.delete(params.runId);
    }
  }

  /** Kills the terminal of a run (or does so once it exists); a run that has ended is fine. */
  async kill(params: ServerRequestParams<'client/terminal/kill'>): Promise<ServerRequestResult<'client/terminal/kill'>> {
    const run = this.runs.get(params.runId);
    if (!run) return {};
    run.killRequested = true;
    await run.terminal?.kill();
    return {};
  }
}
