/**
 * Raw HTTP and WebSocket exchanges for tests of the server's edges: the request target is sent
 * exactly as given (no URL normalisation, so `..%2f` reaches the server as written), headers
 * too (`Host`, `Origin`, `Cookie`).
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { WebSocket } from 'ws';

/** An answer read whole. */
export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends one request to `baseUrl` with `target` written as is. */
export function rawRequest(baseUrl: string, target: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, method: options.method ?? 'GET', path: target, headers: options.headers ?? {} }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    request.on('error', reject);
    request.end(options.body ?? undefined);
  });
}

/** What happened to a WebSocket that sent `initialize` without a token. */
export type UpgradeOutcome = { kind: 'refused'; status: number; body: string } | { kind: 'initialized'; result: Record<string, unknown> } | { kind: 'error'; code: number; message: string; closeCode: number };

/**
 * Opens the protocol WebSocket of `baseUrl` with `headers` (no token unless given in them),
 * sends `initialize` without a token and reports the outcome: refused upgrade, an answer, or
 * an error answer followed by the close.
 */
export function initializeOverWebSocket(baseUrl: string, headers: Record<string, string>): Promise<UpgradeOutcome> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/v1/openvaala`, { headers });
  return new Promise((resolve, reject) => {
    let error: { code: number; message: string } | undefined;
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ kind: 'refused', status: response.statusCode ?? 0, body }));
    });
    socket.once('open', () => socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'test' }, protocolVersion: 2 } })));
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };
      if (message.id !== 1) return;
      if (message.result) {
        resolve({ kind: 'initialized', result: message.result });
        socket.close();
      } else error = message.error;
    });
    socket.once('close', (closeCode) => {
      if (error) resolve({ kind: 'error', ...error, closeCode });
    });
    socket.once('error', (caught) => {
      if (!error) reject(caught);
    });
  });
}
