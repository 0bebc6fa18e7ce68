/**
 * JSON-RPC over newline-delimited JSON as the Codex app-server speaks it on stdio: one object
 * per line, without the `jsonrpc` member (codex-app-server schema bundle, see the recorded
 * transcripts). Requests go both ways: ours get responses by id; the server's requests
 * (approvals) are answered by the handler given.
 */
import readline from 'node:readline';

/** A JSON-RPC error answered by the peer. */
export class PeerError extends Error {
  constructor(
    readonly method: string,
    readonly code: number | undefined,
    message: string,
  ) {
    super(`${method} failed: ${message}${code !== undefined ? ` (code ${code})` : ''}`);
    this.name = 'PeerError';
  }
}

/** What the peer calls for messages from the other side. */
export interface PeerHandlers {
  /** A notification (`{method, params}`). */
  notification(method: string, params: unknown): void;
  /** A request (`{method, id, params}`); its result is sent back, a throw becomes an error response. */
  request(method: string, params: unknown): Promise<unknown>;
}

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** One side of a JSON-lines connection. */
export class JsonLinesPeer {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closedWith: Error | undefined;

  constructor(
    private readonly output: NodeJS.WritableStream,
    input: NodeJS.ReadableStream,
    private readonly handlers: PeerHandlers,
  ) {
    const lines = readline.createInterface({ input, crlfDelay: Infinity });
    lines.on('line', (line) => this.receive(line));
    lines.on('close', () => this.close(new Error('the agent closed its output')));
  }

  /** Sends a request and resolves with its result. @throws PeerError for an error response; the close reason when the connection closes first */
  request<Result>(method: string, params: unknown): Promise<Result> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise<Result>((resolve, reject) => {
      this.pending.set(id, { method, resolve: resolve as (result: unknown) => void, reject });
      this.write({ method, id, params });
    });
  }

  /** Sends a notification. */
  notify(method: string, params?: unknown): void {
    if (!this.closedWith) this.write(params === undefined ? { method } : { method, params });
  }

  /** Rejects everything waiting with `reason`; later requests are refused with it. */
  close(reason: Error): void {
    this.closedWith ??= reason;
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      pending.reject(this.closedWith);
    }
  }

  private write(message: unknown): void {
    this.output.write(`${JSON.stringify(message)}\n`);
  }

  private receive(line: string): void {
    if (line.trim() === '') return;
    let message: { id?: number | string; method?: string; params?: unknown; result?: unknown; error?: { code?: number; message?: string } };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      // Not protocol traffic (a stray log line); the protocol's own messages are what count.
      return;
    }
    if (message.method !== undefined && message.id !== undefined) {
      const id = message.id;
      this.handlers.request(message.method, message.params).then(
        (result) => this.write({ id, result }),
        (error: unknown) => this.write({ id, error: { code: -32603, message: error instanceof Error ? error.message : String(error) } }),
      );
    } else if (message.method !== undefined) {
      this.handlers.notification(message.method, message.params);
    } else if (typeof message.id === 'number') {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.error) pending.reject(new PeerError(pending.method, message.error.code, message.error.message ?? 'unknown error'));
      else pending.resolve(message.result);
    }
  }
}
