/**
 * An MCP client transport over a process an executor started with separate pipes
 * (`Executor.spawnPiped`): the stdio transport of the MCP specification (2025-06-18,
 * Transports: stdio), one JSON-RPC message per line in each direction, whatever carries the
 * bytes — an SSH exec channel, or bubblewrap's pipes. Shutting down follows the same
 * specification section: close the server's stdin, wait, then terminate it.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { PipedProcess, PipedSpawnRequest, ProcessExit } from '../executors/executor.js';
import type { McpSdk } from './sdk.js';
import { jsonSyntaxProblem } from '../printable-text.js';

/** After stdin was closed, how long the server may take to exit by itself before it is killed, ms. */
export const STDIN_CLOSE_GRACE_MS = 2_000;

/** A transport over a piped process, started on `start()`. */
export class PipedProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private process: PipedProcess | undefined;
  private pending: Buffer = Buffer.alloc(0);
  private closed = false;
  private exitStatus: ProcessExit | undefined;

  /**
   * @param spawn starts the process (the executor's `spawnPiped`, bound)
   * @param request what to start
   * @param types the SDK's message schemas (loaded lazily with the SDK)
   * @param onStderr receives the server's stderr, for explaining failures
   */
  constructor(
    private readonly spawn: (request: PipedSpawnRequest) => PipedProcess,
    private readonly request: PipedSpawnRequest,
    private readonly types: McpSdk['types'],
    private readonly onStderr: (chunk: Buffer) => void,
  ) {}

  /** How the process ended, once it has (undefined while it runs or before it started). */
  get exit(): ProcessExit | undefined {
    return this.exitStatus;
  }

  /** The process, once started. */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Starts the process. @throws Error when it was already started or the executor refuses */
  async start(): Promise<void> {
    if (this.process !== undefined) throw new Error('the transport was already started');
    const started = this.spawn(this.request);
    this.process = started;
    started.onStdout((chunk) => this.receive(chunk));
    started.onStderr((chunk) => this.onStderr(chunk));
    // `exited` never rejects; the second handler is there so nothing can float.
    started.exited.then(
      (exit) => {
        this.exitStatus = exit;
        this.finish();
      },
      () => this.finish(),
    );
  }

  private receive(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let newline = this.pending.indexOf(0x0a);
    while (newline !== -1) {
      const line = this.pending.subarray(0, newline).toString('utf8').replace(/\r$/, '');
      this.pending = this.pending.subarray(newline + 1);
      newline = this.pending.indexOf(0x0a);
      if (line.trim() === '') continue;
      try {
        this.onmessage?.(this.types.JSONRPCMessageSchema.parse(JSON.parse(line)));
      } catch (error) {
        this.onerror?.(new Error(`the server wrote a line that is not a JSON-RPC message: ${jsonSyntaxProblem(error)}`, { cause: error }));
      }
    }
  }

  /** Sends one message as a line on the server's stdin. @throws Error when the process ended */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.process === undefined) throw new Error('the transport is not started');
    this.process.write(`${JSON.stringify(message)}\n`);
  }

  /** Closes stdin, gives the server `STDIN_CLOSE_GRACE_MS` to exit, then kills it; resolves once it ended. */
  async close(): Promise<void> {
    const started = this.process;
    if (started === undefined) return this.finish();
    started.endInput();
    let timer: NodeJS.Timeout | undefined;
    const exitedInTime = await Promise.race([started.exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), STDIN_CLOSE_GRACE_MS)))]);
    clearTimeout(timer);
    if (!exitedInTime) {
      started.kill();
      await started.exited;
    }
    this.finish();
  }

  /** Kills the process at once (a server that failed to start). */
  stopNow(): void {
    this.process?.kill();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
