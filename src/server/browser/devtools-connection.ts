/**
 * A minimal client of the Chrome DevTools Protocol (https://chromedevtools.github.io/devtools-protocol/)
 * over the browser's loopback debugging port: lists the page targets (`GET /json/list`) and
 * sends commands to one page over its WebSocket. Enough for the screenshots and take-over input
 * of the web UI's browser drawer; the agent drives the browser through chrome-devtools-mcp.
 */
import WebSocket from 'ws';

/** One page of the browser, as `GET /json/list` describes it. */
export interface PageTarget {
  /** Target id. */
  id: string;
  /** The page's URL. */
  url: string;
  /** The page's title (the URL when it has none). */
  title: string;
  /** WebSocket URL for DevTools commands to this page. */
  webSocketDebuggerUrl: string;
}

/** How long one DevTools request may take, ms. */
const DEVTOOLS_TIMEOUT_MS = 10_000;

/**
 * The page targets (type `page`) of the browser listening on `port` (127.0.0.1), in the
 * browser's order (most recently focused first).
 * @throws Error when the browser does not answer within `DEVTOOLS_TIMEOUT_MS` or answers badly
 */
export async function listPages(port: number): Promise<PageTarget[]> {
  const response = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(DEVTOOLS_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`the browser's DevTools endpoint answered HTTP ${response.status} to /json/list`);
  const targets = (await response.json()) as Array<PageTarget & { type: string }>;
  return targets.filter((target) => target.type === 'page' && typeof target.webSocketDebuggerUrl === 'string');
}

/**
 * Opens a new page (`PUT /json/new`) at `url`, for a browser that has none left.
 * @throws Error when the browser refuses
 */
export async function openPage(port: number, url: string): Promise<PageTarget> {
  const response = await fetch(`http://127.0.0.1:${port}/json/new?${encodeURIComponent(url)}`, { method: 'PUT', signal: AbortSignal.timeout(DEVTOOLS_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`the browser's DevTools endpoint answered HTTP ${response.status} to /json/new`);
  return (await response.json()) as PageTarget;
}

/**
 * Sends DevTools commands to one page over one WebSocket, then closes it: each call of
 * `withPage` is a short session, so nothing stays attached to the page the agent uses.
 * @param target the page (from `listPages`)
 * @param work what to do with the page's `send(method, params)`
 * @throws Error naming the DevTools method for a command the browser refuses or a timeout
 */
export async function withPage<T>(target: PageTarget, work: (send: (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>) => Promise<T>): Promise<T> {
  const socket = new WebSocket(target.webSocketDebuggerUrl, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
  const pending = new Map<number, { resolve(value: Record<string, unknown>): void; reject(error: Error): void }>();
  let nextId = 1;
  socket.on('message', (data: WebSocket.RawData) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
    if (message.id === undefined) return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) waiter?.reject(new Error(message.error.message));
    else waiter?.resolve(message.result ?? {});
  });
  const failAll = (error: Error) => {
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  socket.on('close', () => failAll(new Error('the browser closed the DevTools connection')));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.on('error', (error) => failAll(error));
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`DevTools ${method}: no answer within ${DEVTOOLS_TIMEOUT_MS} ms`));
      }, DEVTOOLS_TIMEOUT_MS);
      pending.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value)),
        reject: (error) => (clearTimeout(timer), reject(new Error(`DevTools ${method}: ${error.message}`))),
      });
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    return await work(send);
  } finally {
    socket.close();
  }
}
