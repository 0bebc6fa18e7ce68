/**
 * A Codex app-server client for tests: runs `openvaala app-server` as a child process and
 * speaks to it over stdio (one JSON object per line) or over WebSocket (`--listen
 * ws://127.0.0.1:0`, the bound port read from the process's stderr). Every message of both
 * directions is recorded in the transcript format of the fixtures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { CLI_EXECUTABLE } from '../../../src/package-info.js';
import type { WireEntry } from './codex-schema.js';

/** How the client reaches the adapter. */
export type CodexTransport = 'stdio' | 'websocket';

/** A Codex JSON-RPC error answer. */
export class CodexErrorAnswer extends Error {
  constructor(readonly error: { code: number; message: string }) {
    super(`${error.code} ${error.message}`);
  }
}

type Message = WireEntry['msg'];

/** One client connected to one `openvaala app-server` process. */
export class CodexTestClient {
  /** Every message, both directions, in order. */
  readonly log: WireEntry[] = [];
  private nextId = 0;
  private readonly pending = new Map<number | string, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly serverRequestHandlers = new Map<string, (params: unknown) => unknown>();
  private readonly waiters = new Set<() => void>();
  private stderrText = '';

  private constructor(
    readonly child: ChildProcess,
    readonly transport: CodexTransport,
    private readonly write: (text: string) => void,
    private readonly closeTransport: () => void,
  ) {}

  /** Everything the process wrote to stderr so far. */
  stderr(): string {
    return this.stderrText;
  }

  /**
   * Starts `openvaala app-server` with `env` (its XDG directories name the runtime server) in
   * `cwd`, connected over `transport`.
   */
  static async start(transport: CodexTransport, env: NodeJS.ProcessEnv, cwd: string): Promise<CodexTestClient> {
    const args = [CLI_EXECUTABLE, 'app-server', ...(transport === 'websocket' ? ['--listen', 'ws://127.0.0.1:0'] : [])];
    const child = spawn(process.execPath, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let client: CodexTestClient | undefined;
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (client) client.stderrText = stderr;
    });
    if (transport === 'stdio') {
      client = new CodexTestClient(child, 'stdio', (text) => child.stdin!.write(`${text}\n`), () => child.stdin!.end());
      const lines = createInterface({ input: child.stdout! });
      const self = client;
      lines.on('line', (line) => self.receive(line));
      client.stderrText = stderr;
      return client;
    }
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`app-server did not listen within 20 s; stderr: ${stderr}`)), 20_000);
      const check = () => {
        const match = /listening on (ws:\/\/\S+)/.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      child.stderr!.on('data', check);
      child.once('exit', (code) => reject(new Error(`app-server exited with ${code} before listening; stderr: ${stderr}`)));
    });
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    client = new CodexTestClient(child, 'websocket', (text) => socket.send(text), () => socket.close());
    const self = client;
    socket.on('message', (data) => self.receive(data.toString()));
    client.stderrText = stderr;
    return client;
  }

  private receive(text: string): void {
    const msg = JSON.parse(text) as Message;
    this.log.push({ dir: 's->c', msg });
    if (msg.method !== undefined && msg.id !== undefined && msg.id !== null) {
      const handler = this.serverRequestHandlers.get(msg.method);
      if (handler) this.sendRaw({ id: msg.id, result: handler(msg.params) });
    } else if (msg.method === undefined && msg.id !== undefined && msg.id !== null) {
      const pending = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) pending?.reject(new CodexErrorAnswer(msg.error));
      else pending?.resolve(msg.result);
    }
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Sends a message as is (recorded). */
  sendRaw(msg: Message): void {
    this.log.push({ dir: 'c->s', msg });
    this.write(JSON.stringify(msg));
  }

  /** Sends text that may not be a message at all (not recorded: it is no message). */
  sendText(text: string): void {
    this.write(text);
  }

  /** Sends a request and resolves with its result; rejects with `CodexErrorAnswer`. */
  request<T = Record<string, unknown>>(method: string, params?: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.sendRaw({ id, method, ...(params !== undefined ? { params } : {}) });
    });
  }

  /** Sends a notification. */
  notify(method: string, params?: unknown): void {
    this.sendRaw({ method, ...(params !== undefined ? { params } : {}) });
  }

  /** Answers the adapter's requests of `method` with `answer(params)`. */
  onServerRequest(method: string, answer: (params: unknown) => unknown): void {
    this.serverRequestHandlers.set(method, answer);
  }

  /** Waits until a received message matches; resolves with it. */
  waitFor(predicate: (msg: Message) => boolean, what: string, timeoutMs = 20_000): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.log.find((entry) => entry.dir === 's->c' && predicate(entry.msg));
        if (!found) return false;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(found.msg);
        return true;
      };
      const waiter = () => void check();
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no ${what} within ${timeoutMs} ms; received: ${this.log.filter((entry) => entry.dir === 's->c').map((entry) => entry.msg.method ?? `answer ${String(entry.msg.id)}`).join(', ')}\nstderr: ${this.stderrText}`));
      }, timeoutMs);
      if (!check()) this.waiters.add(waiter);
    });
  }

  /** Initializes as the recorded client does (`initialize`, then `initialized`). */
  async initialize(): Promise<Record<string, unknown>> {
    const result = await this.request('initialize', { clientInfo: { name: 'research_probe', title: 'Research probe', version: '0.0.1' }, capabilities: { experimentalApi: false } });
    this.notify('initialized');
    return result;
  }

  /** Ends the connection and the process; resolves with its exit code. */
  async stop(): Promise<number | null> {
    const exited = this.child.exitCode !== null ? Promise.resolve(this.child.exitCode) : new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.closeTransport();
    // The WebSocket listener runs until a signal; stdio ends with its input.
    if (this.transport === 'websocket' && this.child.exitCode === null) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }
}
