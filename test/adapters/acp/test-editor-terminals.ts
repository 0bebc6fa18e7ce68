/**
 * The terminals of the test's editor: `terminal/create` really runs the command (with
 * `EDITOR_TERMINAL=1` added to its environment, so its output shows where it ran), and every
 * request is recorded for the assertions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type * as acp from '@agentclientprotocol/sdk';
import type { EditorHandlers } from './acp-harness.js';

interface Terminal {
  child: ChildProcess;
  output: string;
  exited: Promise<acp.TerminalExitStatus>;
  exitStatus?: acp.TerminalExitStatus;
}

/** Runs the terminals an agent asks for and records what it asked. */
export class TestEditorTerminals {
  readonly created: acp.CreateTerminalRequest[] = [];
  readonly killed: string[] = [];
  readonly released: string[] = [];
  private readonly terminals = new Map<string, Terminal>();
  private next = 1;

  /** The terminal's output so far. */
  output(terminalId: string): string {
    return this.terminals.get(terminalId)?.output ?? '';
  }

  /** Whether the terminal's process has ended. */
  ended(terminalId: string): boolean {
    return this.terminals.get(terminalId)?.exitStatus !== undefined;
  }

  /** The handlers for `startAcp`. */
  handlers(): NonNullable<EditorHandlers['terminals']> {
    return {
      create: async (params) => {
        this.created.push(params);
        const environment = { ...process.env, ...Object.fromEntries((params.env ?? []).map((variable) => [variable.name, variable.value])), EDITOR_TERMINAL: '1' };
        const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
        const terminalId = `term-${this.next++}`;
        const terminal: Terminal = {
          child,
          output: '',
          exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve((terminal.exitStatus = { exitCode: code, signal })))),
        };
        const append = (chunk: Buffer) => (terminal.output += chunk.toString());
        child.stdout?.on('data', append);
        child.stderr?.on('data', append);
        this.terminals.set(terminalId, terminal);
        return { terminalId };
      },
      output: async ({ terminalId }) => {
        const terminal = this.require(terminalId);
        return { output: terminal.output, truncated: false, ...(terminal.exitStatus ? { exitStatus: terminal.exitStatus } : {}) };
      },
      waitForExit: async ({ terminalId }) => this.require(terminalId).exited,
      kill: async ({ terminalId }) => {
        this.killed.push(terminalId);
        this.require(terminalId).child.kill('SIGTERM');
        return {};
      },
      release: async ({ terminalId }) => {
        this.released.push(terminalId);
        const terminal = this.require(terminalId);
        if (terminal.exitStatus === undefined) terminal.child.kill('SIGKILL');
        return {};
      },
    };
  }

  /** Kills whatever still runs (the test's cleanup). */
  dispose(): void {
    for (const terminal of this.terminals.values()) if (terminal.exitStatus === undefined) terminal.child.kill('SIGKILL');
  }

  private require(terminalId: string): Terminal {
    const terminal = this.terminals.get(terminalId);
    if (!terminal) throw new Error(`no terminal ${terminalId}`);
    return terminal;
  }
}
