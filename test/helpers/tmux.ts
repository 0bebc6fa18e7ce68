/**
 * A real pseudo-terminal driven through tmux for the terminal UI's tests: a session of a given
 * size on a private socket (`tmux -L`), keys sent with `send-keys`, the screen read with
 * `capture-pane -p`. Only this helper's own session is ever stopped.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { requireExecutable } from './required-commands.js';

const run = promisify(execFile);
let sessions = 0;

/** One tmux session running one command. */
export class TmuxTerminal {
  private constructor(
    private readonly tmux: string,
    private readonly socket: string,
    readonly session: string,
  ) {}

  /**
   * Starts `command` (argv) in a detached session of `columns` × `rows` cells, with `env`
   * (the whole environment of the command) and `cwd`.
   * @throws Error naming the install script when tmux is missing
   */
  static async start(command: string[], options: { env: NodeJS.ProcessEnv; cwd: string; columns?: number; rows?: number }): Promise<TmuxTerminal> {
    const tmux = requireExecutable('tmux', 'tmux');
    const socket = `ov-tui-${process.pid}-${++sessions}`;
    const session = 'tui';
    const environment = Object.entries(options.env).filter((entry): entry is [string, string] => entry[1] !== undefined);
    // `env -i` gives the command exactly the environment asked for, not the tmux server's.
    const shellCommand = ['env', '-i', ...environment.map(([name, value]) => `${name}=${value}`), ...command].map(quote).join(' ');
    await run(tmux, ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', session, '-x', String(options.columns ?? 100), '-y', String(options.rows ?? 30), '-c', options.cwd, `${shellCommand}; echo "[exited $?]"; sleep 600`], {
      env: { ...process.env, TMUX: '' },
    });
    return new TmuxTerminal(tmux, socket, session);
  }

  private async tmuxCommand(args: string[]): Promise<string> {
    const { stdout } = await run(this.tmux, ['-L', this.socket, ...args], { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  }

  /** The visible screen as text, one line per row (`escapes`: with SGR colour escapes). */
  async capture(escapes = false): Promise<string> {
    return this.tmuxCommand(['capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', this.session]);
  }

  /** Sends key names as tmux knows them (`Enter`, `Escape`, `C-s`, `PageUp`). */
  async keys(...names: string[]): Promise<void> {
    await this.tmuxCommand(['send-keys', '-t', this.session, ...names]);
  }

  /** Types text literally. */
  async type(text: string): Promise<void> {
    await this.tmuxCommand(['send-keys', '-t', this.session, '-l', text]);
  }

  /** Pastes text as a terminal paste (bracketed when the program asked for it). */
  async paste(text: string): Promise<void> {
    await this.tmuxCommand(['set-buffer', '-b', 'test-paste', text]);
    await this.tmuxCommand(['paste-buffer', '-p', '-d', '-b', 'test-paste', '-t', this.session]);
  }

  /** Changes the terminal's size. */
  async resize(columns: number, rows: number): Promise<void> {
    await this.tmuxCommand(['resize-window', '-t', this.session, '-x', String(columns), '-y', String(rows)]);
  }

  /**
   * Polls the screen until `condition` holds (a string: the screen contains it).
   * @returns the screen that satisfied it
   * @throws Error with the last screen after `timeoutMs`
   */
  async waitFor(condition: string | RegExp | ((screen: string) => boolean), timeoutMs = 15_000): Promise<string> {
    const test = typeof condition === 'string' ? (screen: string) => screen.includes(condition) : condition instanceof RegExp ? (screen: string) => condition.test(screen) : condition;
    const deadline = Date.now() + timeoutMs;
    let screen = '';
    while (Date.now() < deadline) {
      screen = await this.capture();
      if (test(screen)) return screen;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the terminal did not show ${String(condition)} within ${timeoutMs} ms; it shows:\n${screen}`);
  }

  /** Stops this session (and with it the private tmux server) and removes the server's socket file. */
  async kill(): Promise<void> {
    const socketPath = (await this.tmuxCommand(['display-message', '-p', '#{socket_path}']).catch(() => '')).trim();
    await this.tmuxCommand(['kill-session', '-t', this.session]).catch(() => undefined);
    if (socketPath.includes(this.socket)) rmSync(socketPath, { force: true });
  }
}

function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
