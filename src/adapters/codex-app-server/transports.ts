/**
 * The two ways a Codex client reaches the adapter, as Codex's own app-server offers them:
 * stdio (one JSON object per line, JSONL) and WebSocket (`--listen ws://IP:PORT`, one JSON
 * message per text frame; what `codex --remote` connects to). Both present a {@link CodexPeer}.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/** One connected Codex client, whatever carries its messages. */
export interface CodexPeer {
  /** Sends one message (serialized as JSON). */
  send(message: object): void;
  /** Called with the text of each message received. */
  onMessage(listener: (text: string) => void): void;
  /** Called once when the client is gone. */
  onClose(listener: () => void): void;
  /** Ends the connection from this side. */
  close(): void;
}

/** A peer over a pair of streams: one JSON message per line each way (stdio). */
export function lineStreamPeer(input: Readable, output: Writable): CodexPeer {
  const lines = createInterface({ input, crlfDelay: Infinity });
  const closeListeners: (() => void)[] = [];
  let inputEnded = false;
  let outputClosed = false;
  lines.on('close', () => {
    if (inputEnded) return;
    inputEnded = true;
    for (const listener of closeListeners) listener();
  });
  return {
    // The output stays open after the input ended: the answers to the last requests still go out.
    send(message) {
      if (!outputClosed) output.write(`${JSON.stringify(message)}\n`);
    },
    onMessage(listener) {
      lines.on('line', (line) => {
        // Blank lines between messages carry nothing; Codex clients do not send them, but a person typing might.
        if (line.trim() !== '') listener(line);
      });
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
    close() {
      outputClosed = true;
      lines.close();
    },
  };
}

function socketPeer(socket: WebSocket): CodexPeer {
  return {
    send(message) {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
    },
    onMessage(listener) {
      socket.on('message', (data, isBinary) => {
        // Codex sends text frames only; a binary frame is read as UTF-8 text all the same.
        listener(isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString());
      });
    },
    onClose(listener) {
      socket.once('close', () => listener());
    },
    close() {
      socket.close(1000);
    },
  };
}

/** A listening WebSocket endpoint for Codex clients. */
export interface CodexWebSocketListener {
  /** `ws://host:port` as bound (the port resolved when 0 was asked). */
  url: string;
  /** Stops accepting and closes every connection. */
  close(): Promise<void>;
}

/**
 * Parses `--listen ws://HOST:PORT`.
 * @throws Error naming the value when it is not a `ws://` URL with a loopback host and a port
 */
export function parseListenUrl(value: string): { host: string; port: number } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`--listen ${JSON.stringify(value)} is not a URL; expected ws://127.0.0.1:PORT`);
  }
  if (url.protocol !== 'ws:') throw new Error(`--listen ${JSON.stringify(value)}: only ws:// is supported (wss:// needs a TLS proxy in front)`);
  if (url.port === '' && !/:0(\/|$)/.test(value)) throw new Error(`--listen ${JSON.stringify(value)} names no port; expected ws://127.0.0.1:PORT`);
  if (url.pathname !== '/' && url.pathname !== '') throw new Error(`--listen ${JSON.stringify(value)}: a path is not supported; clients connect to ws://HOST:PORT`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // The Codex protocol carries no authentication here: whoever connects drives the agent.
  if (!isLoopback(host)) throw new Error(`--listen ${JSON.stringify(value)}: only a loopback address (127.0.0.1, ::1, localhost) is allowed, as clients are not authenticated`);
  return { host, port: Number(url.port || 0) };
}

/** Whether a host name or address stays on this machine. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Listens for Codex clients over WebSocket; each connection becomes a peer handed to `accept`.
 * @throws Error when the address cannot be bound (in use, not local)
 */
export async function listenWebSocket(host: string, port: number, accept: (peer: CodexPeer) => void): Promise<CodexWebSocketListener> {
  const server = new WebSocketServer({ host, port });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  server.on('connection', (socket) => accept(socketPeer(socket)));
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const hostText = host.includes(':') ? `[${host}]` : host;
  return {
    url: `ws://${hostText}:${boundPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
