/**
 * A test client of a platform-mode server that behaves like a browser: it keeps cookies, sends
 * its `Origin`, reads the CSRF token from `GET /web/v1/api/platform/state` and sends it back,
 * and opens the protocol WebSocket with its cookies. Also a raw JSON-RPC connection helper, and
 * signing in an administrator and a member through the sign-in API.
 */
import { expect } from 'vitest';
import { WebSocket } from 'ws';
import { rawRequest, type RawAnswer } from '../helpers/http-exchange.js';

/** A browser-like HTTP client with a cookie jar. */
export class BrowserLike {
  readonly cookies = new Map<string, string>();
  csrfToken = '';

  /**
   * @param baseUrl the server's `http://127.0.0.1:<port>`
   * @param headers sent with every request (e.g. `x-forwarded-for`)
   */
  constructor(
    readonly baseUrl: string,
    readonly headers: Record<string, string> = {},
  ) {}

  /** The `Cookie` header value. */
  get cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private keep(answer: RawAnswer): RawAnswer {
    for (const line of answer.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const separator = (pair as string).indexOf('=');
      const name = (pair as string).slice(0, separator);
      const value = (pair as string).slice(separator + 1);
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return answer;
  }

  /** GET with cookies. */
  async get(target: string): Promise<RawAnswer> {
    return this.keep(await rawRequest(this.baseUrl, target, { headers: { ...this.headers, cookie: this.cookieHeader } }));
  }

  /** Loads the platform state (and with it the CSRF cookie and token). */
  async state(): Promise<Record<string, unknown>> {
    const answer = await this.get('/web/v1/api/platform/state');
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    this.csrfToken = String(body.csrfToken);
    return body;
  }

  /** POSTs JSON to a platform route as the page would; `override` replaces headers (to break the rules). */
  async post(route: string, body: unknown, override: Record<string, string | undefined> = {}): Promise<RawAnswer & { json: Record<string, unknown> }> {
    const headers: Record<string, string | undefined> = { 'content-type': 'application/json', origin: this.baseUrl, 'x-csrf-token': this.csrfToken, cookie: this.cookieHeader, ...this.headers, ...override };
    const answer = this.keep(await rawRequest(this.baseUrl, `/web/v1/api/platform/${route}`, { method: 'POST', headers: Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined)), body: JSON.stringify(body) }));
    return { ...answer, json: answer.body ? (JSON.parse(answer.body) as Record<string, unknown>) : {} };
  }

  /** Opens the protocol WebSocket with this browser's cookies and origin. */
  connect(): Promise<RpcSocket> {
    return RpcSocket.open(this.baseUrl, { cookie: this.cookieHeader, origin: this.baseUrl });
  }
}

/** A JSON-RPC error answer. */
export interface RpcFailure {
  code: number;
  message: string;
  data?: { reason?: string };
}

/** A JSON-RPC connection over the protocol WebSocket, initialized. */
export class RpcSocket {
  private nextId = 1;
  private readonly waiting = new Map<number, (message: { result?: unknown; error?: RpcFailure }) => void>();
  /** Close code and reason once closed. */
  closed: { code: number; reason: string } | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: RpcFailure };
      if (typeof message.id === 'number') this.waiting.get(message.id)?.(message);
    });
    socket.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  /**
   * Opens and initializes a connection.
   * @throws Error with the HTTP status and body when the upgrade is refused
   */
  static open(baseUrl: string, headers: Record<string, string>): Promise<RpcSocket> {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/v1/openvaala`, { headers });
    return new Promise((resolve, reject) => {
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => reject(new Error(`upgrade refused: ${response.statusCode} ${body}`)));
      });
      socket.once('error', reject);
      socket.once('open', () => {
        const connection = new RpcSocket(socket);
        connection
          .call('initialize', { clientInfo: { name: 'platform-test' }, protocolVersion: 2 })
          .then((answer) => (answer.error ? reject(new Error(`initialize failed: ${answer.error.message}`)) : resolve(connection)), reject);
      });
    });
  }

  /** Sends a request; resolves with its result or error. */
  call(method: string, params?: unknown): Promise<{ result?: Record<string, unknown>; error?: RpcFailure }> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve as (message: { result?: unknown; error?: RpcFailure }) => void);
      this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) }));
    });
  }

  /** The result of a request. @throws Error with the error message when it failed */
  async result(method: string, params?: unknown): Promise<Record<string, unknown>> {
    const answer = await this.call(method, params);
    if (answer.error) throw new Error(`${method} failed: ${answer.error.message}`);
    return answer.result as Record<string, unknown>;
  }

  /** The error of a request that must fail. @throws Error when it succeeded */
  async failure(method: string, params?: unknown): Promise<RpcFailure> {
    const answer = await this.call(method, params);
    if (!answer.error) throw new Error(`${method} succeeded but should have failed: ${JSON.stringify(answer.result)}`);
    return answer.error;
  }

  /** Closes the connection. */
  close(): void {
    this.socket.close();
  }
}

/**
 * Browsers behind the trusted proxy (a server whose `platform.trustedProxies` lists 127.0.0.1),
 * each sending its own client address from 198.51.100.0/24 (TEST-NET-2, RFC 5737) in
 * `x-forwarded-for`, so they do not share a sign-in rate-limit budget.
 */
export class ProxiedBrowsers {
  private opened = 0;

  /** @param baseUrl the server's `http://127.0.0.1:<port>` */
  constructor(readonly baseUrl: string) {}

  /** A new browser with the next client address (198.51.100.1, .2, …). */
  open(): BrowserLike {
    this.opened++;
    return new BrowserLike(this.baseUrl, { 'x-forwarded-for': `198.51.100.${this.opened}` });
  }
}

/** An administrator and a member of an unclaimed platform, both signed in. */
export interface SignedInUsers {
  /** ada@example.com, who claimed the platform. */
  admin: BrowserLike;
  /** The administrator's protocol connection (close it when done). */
  adminSocket: RpcSocket;
  /** bob@example.com, invited by the administrator as a member. */
  member: BrowserLike;
  /** The member's user id. */
  memberId: string;
}

/**
 * Claims an unclaimed platform as ada@example.com (its first administrator), who invites
 * bob@example.com as a member; bob accepts the invitation with a password, which signs him in.
 * Each user gets a browser of `browsers`.
 * @throws the test's assertion error when the claim is refused
 */
export async function signInAdministratorAndMember(browsers: ProxiedBrowsers): Promise<SignedInUsers> {
  const admin = browsers.open();
  await admin.state();
  expect((await admin.post('claim', { email: 'ada@example.com', password: 'correct horse battery' })).status).toBe(200);
  const adminSocket = await admin.connect();
  const invitation = await adminSocket.result('users/invite', { email: 'bob@example.com', role: 'member' });
  const code = /#invitation=([A-Za-z0-9_-]{43})$/.exec(String(invitation.url))?.[1] as string;
  const member = browsers.open();
  await member.state();
  const accepted = await member.post('invitation', { code, password: 'bobs long password' });
  return { admin, adminSocket, member, memberId: String((accepted.json.user as { id: string }).id) };
}
