/**
 * One HTTP `POST` through `node:http` / `node:https` with a keep-alive connection pool, for the
 * runtime's own Responses client.
 *
 * Why not the global `fetch`: its first use loads undici's bundled sources and its WebAssembly
 * HTTP parser (about 20 MiB more resident memory in the server than `node:http`), and each
 * request goes through WHATWG streams, costing about 1 ms more CPU per loopback request on the
 * benchmark machine (docs/performance.md, "The performance work"). This client makes one
 * request per agent step, so both add up.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';

/** Keep-alive pools, one per scheme, shared by every request of the process (as `fetch` keeps its own). */
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** The answer's head and its body stream (a Node.js readable of `Buffer` chunks). */
export interface PostAnswer {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

/**
 * The failure of a request that got no answer (refused, reset, unknown host, TLS failure): the
 * system error's `code` (`ECONNREFUSED`, `ENOTFOUND`, …) is kept on the error and as its
 * `cause`, which `toModelCallError` reads to call it a connection failure.
 */
export class RequestFailedError extends Error {
  readonly code: string | undefined;

  constructor(url: URL, cause: NodeJS.ErrnoException) {
    super(`the request to ${url.origin} failed: ${cause.message}`, { cause });
    this.name = 'RequestFailedError';
    this.code = cause.code;
  }
}

/**
 * Sends `body` to `url` and resolves once the answer's head has arrived.
 * @param url an `http:` or `https:` address
 * @param headers request headers (`content-length` is set here)
 * @param body the request body: bytes, or text sent as UTF-8
 * @param signal aborts the request (and the answer's body) when it fires
 * @returns the status, headers and body stream; the caller reads or destroys the body
 * @throws the abort reason when `signal` fires before the head arrived; RequestFailedError when
 *   the connection fails; Error for a scheme other than `http:` / `https:`
 */
export function postRequest(url: string, headers: Record<string, string>, body: string | Buffer, signal: AbortSignal): Promise<PostAnswer> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.reject(new Error(`unsupported scheme "${target.protocol}" in the provider's baseURL ${url}: use http: or https:`));
  if (signal.aborted) return Promise.reject(signal.reason);
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(target, { method: 'POST', agent: agents[target.protocol as 'http:' | 'https:'], headers: { ...headers, 'content-length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.length) } });
    let answered = false;
    const onAbort = () => {
      request.destroy();
      if (!answered) reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    request.once('response', (response) => {
      answered = true;
      response.once('close', () => signal.removeEventListener('abort', onAbort));
      resolve({ status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', headers: response.headers, body: response });
    });
    request.once('error', (error: NodeJS.ErrnoException) => {
      signal.removeEventListener('abort', onAbort);
      if (answered) return;
      reject(signal.aborted ? signal.reason : new RequestFailedError(target, error));
    });
    request.end(body);
  });
}

/** Reads an answer's whole body as UTF-8 text (for error answers, which are small). */
export async function readText(body: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
