/**
 * Nothing a client sends ends the server or disturbs other clients: over 10,000 hostile or
 * broken messages at every layer — HTTP, the WebSocket handshake, first messages of
 * connections opened without a token, WebSocket framing, message size, JSON, JSON-RPC,
 * params of every method, requests whose replies are never read —
 * against a real `openvaala serve`, while another client keeps using it and the server's
 * memory stays near where it started. The upload route (`POST /api/v1/uploads`) gets its own
 * broken requests — methods, tokens, query strings, lengths, chunked bodies over the limit,
 * disconnects in the middle of a body — each answered with 4xx or a close, none leaving a
 * file in the staging or attachments directories.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createLogger } from '../../src/logger.js';
import { methods } from '../../src/protocol/index.js';
import { startRuntimeServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { buildFrame, findCloseFrame, rawConnect, rawWebSocket, upgradeRequest } from '../helpers/raw-websocket.js';
import { checkReceivedMessage } from '../setup/protocol-validation.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop();
  await environment?.dispose();
  serve = undefined;
  environment = undefined;
});

/** Resident memory of a process, bytes (`VmRSS` in /proc/<pid>/status). */
function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/** Runs `tasks` with at most `width` at once. */
async function inBatches<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < tasks.length; start += width) results.push(...(await Promise.all(tasks.slice(start, start + width).map((task) => task()))));
  return results;
}

/** Frames a client must never send (RFC 6455 §5), each answered by closing the connection. */
function invalidFrames(): { name: string; bytes: Buffer; closeCodes: number[] }[] {
  const text = (payload: string) => buildFrame({ payload });
  return [
    ...[3, 4, 5, 6, 7, 11, 12, 13, 14, 15].map((opcode) => ({ name: `reserved opcode ${opcode}`, bytes: buildFrame({ opcode, payload: 'x' }), closeCodes: [1002] })),
    { name: 'unmasked client frame', bytes: buildFrame({ mask: false, payload: '{}' }), closeCodes: [1002] },
    ...[1, 2, 4].map((rsv) => ({ name: `reserved bits ${rsv}`, bytes: buildFrame({ rsv, payload: '{}' }), closeCodes: [1002] })),
    { name: 'invalid UTF-8 text', bytes: buildFrame({ payload: Buffer.from([0x7b, 0xc3, 0x28, 0x7d]) }), closeCodes: [1007] },
    { name: 'overlong UTF-8 text', bytes: buildFrame({ payload: Buffer.from([0xc0, 0xaf]) }), closeCodes: [1007] },
    { name: 'fragmented ping', bytes: buildFrame({ opcode: 9, fin: false, payload: 'p' }), closeCodes: [1002] },
    { name: 'fragmented close', bytes: buildFrame({ opcode: 8, fin: false, payload: Buffer.from([3, 232]) }), closeCodes: [1002] },
    { name: 'control frame over 125 bytes', bytes: buildFrame({ opcode: 9, payload: 'p'.repeat(126) }), closeCodes: [1002] },
    { name: 'continuation without a start', bytes: buildFrame({ opcode: 0, payload: 'x' }), closeCodes: [1002] },
    { name: 'new message inside a fragmented one', bytes: Buffer.concat([buildFrame({ fin: false, payload: '{' }), text('{}')]), closeCodes: [1002] },
    { name: 'oversize announced length', bytes: buildFrame({ payload: 'x', announcedLength: 17n * 1024n * 1024n }), closeCodes: [1009] },
    { name: 'length with the top bit set', bytes: buildFrame({ payload: 'x', announcedLength: 1n << 63n }), closeCodes: [1009, 1002] },
    { name: 'close with an invalid code', bytes: buildFrame({ opcode: 8, payload: Buffer.from([0, 5]) }), closeCodes: [1002] },
    { name: 'close with a one-byte body', bytes: buildFrame({ opcode: 8, payload: Buffer.from([3]) }), closeCodes: [1002] },
    { name: 'close with a bad UTF-8 reason', bytes: buildFrame({ opcode: 8, payload: Buffer.from([3, 232, 0xff]) }), closeCodes: [1007] },
  ];
}

/** Requests that are not HTTP, not a valid upgrade, or not allowed in. */
function badRequests(port: number, token: string): { name: string; bytes: string | Buffer; reset?: boolean }[] {
  return [
    { name: 'garbage', bytes: Buffer.from([0, 1, 2, 255, 254, 13, 10, 13, 10]) },
    { name: 'bad request line', bytes: 'HELLO\r\n\r\n' },
    { name: 'header without colon', bytes: `GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n` },
    { name: 'huge header', bytes: `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n` },
    { name: 'absolute-form target that does not parse', bytes: `GET http://[::1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n` },
    { name: 'scheme-relative target', bytes: `GET //x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n` },
    { name: 'health check from a foreign host', bytes: `GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n` },
    { name: 'upgrade to a bad target', bytes: upgradeRequest(port, token).replace('GET /api/v1/openvaala', 'GET //') },
    { name: 'upgrade to an unknown path', bytes: upgradeRequest(port, token).replace('/api/v1/openvaala', '/nope') },
    { name: 'upgrade with a wrong token', bytes: upgradeRequest(port, 'x'.repeat(43)) },
    { name: 'upgrade with an empty token', bytes: upgradeRequest(port, '') },
    { name: 'upgrade with a wrong token sub-protocol', bytes: upgradeRequest(port, undefined, { 'Sec-WebSocket-Protocol': 'openvaala.token.wrong' }) },
    { name: 'upgrade with the token and a wrong token sub-protocol', bytes: upgradeRequest(port, token, { 'Sec-WebSocket-Protocol': 'openvaala.token.wrong' }) },
    { name: 'upgrade with a non-Bearer authorization', bytes: upgradeRequest(port, undefined, { Authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` }) },
    { name: 'upgrade without token from a foreign origin', bytes: upgradeRequest(port, undefined, { Origin: 'http://evil.example' }) },
    { name: 'upgrade with a foreign host', bytes: upgradeRequest(port, token, { Host: 'evil.example' }) },
    { name: 'upgrade with a foreign origin', bytes: upgradeRequest(port, token, { Origin: 'http://evil.example' }) },
    { name: 'upgrade with a bad key', bytes: upgradeRequest(port, token, { 'Sec-WebSocket-Key': 'short' }) },
    { name: 'upgrade with a bad version', bytes: upgradeRequest(port, token, { 'Sec-WebSocket-Version': '99' }) },
    { name: 'upgrade with a bad method', bytes: upgradeRequest(port, token).replace('GET', 'POST') },
    { name: 'reset during the handshake', bytes: upgradeRequest(port, token).slice(0, 60), reset: true },
    { name: 'reset while being refused', bytes: upgradeRequest(port, 'x'.repeat(43)), reset: true },
    { name: 'chunked garbage', bytes: `POST /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n` },
  ];
}

/**
 * First messages of a connection opened without a token that are not `initialize` with the
 * right token: each is answered with -32001 (unless it is a notification) and closes with 1008.
 */
function unauthenticatedFirstMessages(token: string): { name: string; data: string | Buffer }[] {
  const initialize = (params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params });
  return [
    ...['', 'not json', '{', '{}', '[]', 'null', '42'].map((text) => ({ name: `text ${JSON.stringify(text)}`, data: text })),
    { name: 'binary', data: Buffer.from([1, 2, 3]) },
    ...Object.keys(methods).filter((method) => method !== 'initialize').map((method) => ({ name: method, data: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }) })),
    { name: 'unknown method', data: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'no/such/method' }) },
    { name: 'notification', data: JSON.stringify({ jsonrpc: '2.0', method: 'conversation/list' }) },
    { name: 'response', data: JSON.stringify({ jsonrpc: '2.0', id: 'server-1', result: {} }) },
    { name: 'batch with the token', data: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'x' }, token } }]) },
    { name: 'initialize without token', data: initialize({ clientInfo: { name: 'x' } }) },
    { name: 'initialize with a wrong token', data: initialize({ clientInfo: { name: 'x' }, token: 'x'.repeat(43) }) },
    { name: 'initialize with an empty token', data: initialize({ clientInfo: { name: 'x' }, token: '' }) },
    { name: 'initialize with a token prefix', data: initialize({ clientInfo: { name: 'x' }, token: token.slice(0, -1) }) },
    { name: 'initialize with a number token', data: initialize({ clientInfo: { name: 'x' }, token: 42 }) },
    { name: 'initialize with the token as params', data: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: token }) },
  ];
}

/** A conversation id of the right form that names no conversation. */
const MISSING_CONVERSATION = 'conv_00000000000000000000000000';

/** Params no method accepts, or that name nothing. */
function badParams(conversationId: string): unknown[] {
  return [
    null,
    [],
    'text',
    42,
    true,
    { conversationId: 7 },
    { conversationId: 'conv_x\u0000y' },
    { conversationId: '../../../etc/passwd' },
    { conversationId: MISSING_CONVERSATION },
    { conversationId: MISSING_CONVERSATION, sessionId: 'sess_0000', input: 'x', model: 'mock/mock-model', approvalId: 'appr_0000', decision: 'deny' },
    { conversationId, sessionId: 'sess_../x' },
    { conversationId, sessionId: 'sess_0000' },
    { conversationId, cursor: 'not a cursor' },
    { conversationId, cursor: -1 },
    { cursor: 'bm90IGEgY3Vyc29y' },
    { cursor: 'x'.repeat(3000) },
    { conversationId, afterSeq: { '../x': 1 } },
    { conversationId, afterSeq: { sess_0000: -1 } },
    { conversationId, input: '' },
    { conversationId, input: [{ type: 'bogus' }] },
    { conversationId, mode: 'fast', input: 'x' },
    { conversationId, approvalId: 'appr_0000', decision: 'maybe' },
    { conversationId, approvalId: 'appr_0000', decision: 'deny' },
    { conversationId, model: '' },
    { conversationId, model: 'nope/none' },
    { cwd: 'relative/dir' },
    { cwd: '/tmp', executor: 'nope' },
    { cwd: '/tmp', agent: 'nope' },
    { cwd: '/tmp', model: 'nope/none' },
    { workLocation: [{ executor: 'local', cwd: '/tmp' }, { executor: 'local', cwd: '/tmp' }] },
    { conversationId, workLocation: [{ executor: 'local', cwd: 'rel' }] },
    { clientInfo: { name: '' } },
    { limit: 0 },
    { limit: 1e9 },
    { query: '"' },
    { changes: [] },
    { changes: [{ file: 'secrets', path: ['x'] }] },
    { changes: [{ file: 'server', path: ['nope'], value: 1 }] },
    { conversationId, direction: 'sideways' },
    JSON.parse('{"__proto__": {"polluted": true}, "conversationId": 1}'),
    { conversationId, title: 'x'.repeat(100_000), extra: { deep: [[[[[[[[[[1]]]]]]]]]] } },
  ];
}

it('keeps serving another client, at about the same memory, through 10,000 broken or hostile messages', { timeout: 120_000 }, async () => {
  environment = await createTestEnvironment('responses: []\n');
  // Valid requests among the fuzz (a compaction, say) fail at once instead of retrying the model.
  writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), 'limits:\n  retry: { maxRetries: 0 }\n');
  // A small old generation makes the collector run often, so resident memory follows what the
  // server holds rather than when V8 last chose to collect; a leak fills it and kills the server.
  environment.env.NODE_OPTIONS = [environment.env.NODE_OPTIONS, '--max-old-space-size=64'].filter(Boolean).join(' ');
  serve = await startServe(environment);
  const port = Number(new URL(serve.info.url).port);
  const token = serve.info.token;
  const pid = serve.child.pid as number;

  // The bystander: a well-behaved client that must be served throughout.
  const bystander = await RuntimeClient.connect({ url: serve.info.url, token, clientName: 'bystander' });
  const { conversation } = await bystander.request('conversation/create', { cwd: environment.workDir });
  let bystanderRequests = 0;
  const bystanderFailures: string[] = [];
  let fuzzing = true;
  const bystanderLoop = (async () => {
    while (fuzzing) {
      try {
        const got = await bystander.request('conversation/get', { conversationId: conversation.id });
        if (got.conversation.id !== conversation.id) bystanderFailures.push('wrong conversation');
        bystanderRequests++;
      } catch (error) {
        bystanderFailures.push(String(error));
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();

  let frames = 0;
  const fuzzClient = async (): Promise<WebSocket> => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/api/v1/openvaala`, { headers: { authorization: `Bearer ${token}` } });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return socket;
  };

  const round = async (scale: number) => {
    // HTTP and the handshake.
    const requests = badRequests(port, token);
    await inBatches(
      Array.from({ length: scale }, () => requests).flat().map((request) => async () => {
        const connection = await rawConnect(port, request.bytes);
        frames++;
        if (request.reset) {
          connection.socket.resetAndDestroy();
          return;
        }
        const closed = await connection.closed(3000);
        expect(closed, `${request.name}: the server keeps the connection open`).toBe(true);
        const answer = connection.received().toString('latin1');
        expect(answer, request.name).not.toMatch(/^HTTP\/1\.1 101/);
      }),
      20,
    );
    // Connections opened without a token: nothing but initialize with the token gets through.
    const unauthenticated = unauthenticatedFirstMessages(token);
    const refusals = await inBatches(
      Array.from({ length: scale }, () => unauthenticated).flat().map((first) => async () => {
        const socket = new WebSocket(`ws://127.0.0.1:${port}/api/v1/openvaala`);
        const received: { error?: { code: number } }[] = [];
        socket.on('message', (data) => received.push(JSON.parse(data.toString()) as (typeof received)[number]));
        socket.on('error', () => undefined);
        const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
        await new Promise((resolve) => socket.once('open', resolve));
        socket.send(first.data);
        frames++;
        const code = await Promise.race([closed, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5000))]);
        socket.terminate();
        return { first, code, received };
      }),
      20,
    );
    for (const { first, code, received } of refusals) {
      expect(code, `${first.name}: close code`).toBe(1008);
      expect(received.every((message) => message.error?.code === -32001), `${first.name}: ${JSON.stringify(received)}`).toBe(true);
    }
    // WebSocket framing.
    const invalid = invalidFrames();
    const outcomes = await inBatches(
      Array.from({ length: scale }, () => invalid).flat().map((frame) => async () => {
        const connection = await rawWebSocket(port, token);
        connection.socket.write(frame.bytes);
        frames++;
        const closed = await connection.closed(5000);
        connection.socket.destroy();
        return { frame, closed, close: findCloseFrame(connection.afterHandshake()) };
      }),
      20,
    );
    for (const { frame, closed, close } of outcomes) {
      expect(closed, frame.name).toBe(true);
      expect(frame.closeCodes, `${frame.name}: closed with ${JSON.stringify(close)}`).toContain(close?.code);
    }
    // JSON, JSON-RPC and params of every method on one connection, without waiting.
    const socket = await fuzzClient();
    const answers: { id?: unknown; error?: { code: number; message: string } }[] = [];
    const answered = new Set<unknown>();
    socket.on('message', (data) => {
      // Whatever it is sent, the server answers only with messages of the protocol.
      checkReceivedMessage(socket, data.toString());
      const answer = JSON.parse(data.toString()) as (typeof answers)[number];
      answers.push(answer);
      answered.add(answer.id);
    });
    const send = (payload: string | Buffer, binary = false) => {
      socket.send(payload, { binary });
      frames++;
    };
    let id = 0;
    for (let repeat = 0; repeat < scale; repeat++) {
      for (const text of ['', 'not json', '{', '{"a":', '\u0000', '[1,2', 'nul', '1e999999', '"\\ud800"', '[]', '{}', 'null', '42', '"str"', '[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]']) send(text);
      send('['.repeat(100_000) + ']'.repeat(100_000));
      send(Buffer.from([1, 2, 3]), true);
      for (const shape of [
        { jsonrpc: '1.0', id: 1, method: 'initialize' },
        { id: 1, method: 'initialize' },
        { jsonrpc: '2.0', id: { a: 1 }, method: 'models/list' },
        { jsonrpc: '2.0', id: 1, method: 42 },
        { jsonrpc: '2.0', id: 1 },
        { jsonrpc: '2.0', id: 'server-1', result: {} },
        { jsonrpc: '2.0', id: 'server-999', error: { code: 1, message: 'x' } },
        { jsonrpc: '2.0', id: 1, method: 'no/such/method' },
        { jsonrpc: '2.0', id: 1, method: 'x'.repeat(100_000) },
        { jsonrpc: '2.0', id: 1, method: 'conversation/get', params: { conversationId: conversation.id } },
        [{ jsonrpc: '2.0', id: 1, method: 'models/list' }],
      ]) {
        send(JSON.stringify(shape));
      }
      send(JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'initialize', params: { clientInfo: { name: 'fuzz' } } }));
      for (const method of Object.keys(methods)) {
        // Only params the method must refuse: the schema's, or naming what does not exist.
        const refused = badParams(conversation.id).filter((params) => !methods[method as keyof typeof methods].params.safeParse(params ?? {}).success || JSON.stringify(params).includes(MISSING_CONVERSATION));
        for (const params of refused) {
          send(JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }));
        }
      }
    }
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 60_000;
      const check = () => {
        if (Array.from({ length: id }, (_, index) => index + 1).every((wanted) => answered.has(wanted))) resolve();
        else if (Date.now() > deadline) reject(new Error(`${answered.size} of ${id} requests answered`));
        else setTimeout(check, 20);
      };
      check();
    });
    socket.close();
    // No client mistake is an internal error, and none names the server's files.
    const internal = answers.filter((answer) => answer.error?.code === -32603);
    expect(internal.map((answer) => answer.error?.message)).toEqual([]);
    for (const answer of answers) expect(answer.error?.message ?? '').not.toContain(environment!.root);

    // Requests whose replies are never read: the connection is cut, the server is not.
    const deaf = await fuzzClient();
    const deafClosed = new Promise<number>((resolve) => deaf.once('close', (code) => resolve(code)));
    (deaf as unknown as { _socket: { pause(): void } })._socket.pause();
    const request = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'conversation/get', params: { conversationId: conversation.id } });
    deaf.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { clientInfo: { name: 'deaf' } } }));
    for (let index = 0; index < 1000 * scale; index++) {
      deaf.send(request);
      frames++;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    deaf.terminate();
    await deafClosed;

    // An oversize message is refused with a close naming the limit.
    const big = await fuzzClient();
    const bigClosed = new Promise<{ code: number; reason: string }>((resolve) => big.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    big.on('error', () => undefined);
    big.send('x'.repeat(17 * 1024 * 1024));
    frames++;
    const close = await bigClosed;
    expect(close.code).toBe(1009);
    expect(close.reason).toContain('16777216 bytes');
  };

  // Two small rounds warm the server up (its heap grows to a working size); memory is measured from there.
  await round(1);
  await round(1);
  const startBytes = residentBytes(pid);
  const framesBefore = frames;
  await round(6);
  fuzzing = false;
  await bystanderLoop;
  const endBytes = residentBytes(pid);

  expect(frames).toBeGreaterThanOrEqual(10_000);
  expect(frames - framesBefore).toBeGreaterThan(framesBefore);
  expect(serve.child.exitCode).toBeNull();
  expect(bystanderFailures).toEqual([]);
  expect(bystanderRequests).toBeGreaterThan(10);
  // The bystander is still connected and served.
  expect((await bystander.request('conversation/get', { conversationId: conversation.id })).conversation.id).toBe(conversation.id);
  expect(endBytes, `RSS ${startBytes} → ${endBytes}`).toBeLessThanOrEqual(startBytes * 1.2);
  await bystander.close();
});

/** Every file under the data directory's staging directory and conversations' attachments directories (relative paths, sorted). */
function uploadedFiles(dataDir: string): string[] {
  const files: string[] = [];
  const collect = (directory: string) => {
    let entries: string[];
    try {
      entries = readdirSync(directory, { recursive: true, encoding: 'utf8' });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(directory, entry);
      if (statSync(full).isFile()) files.push(path.relative(dataDir, full));
    }
  };
  collect(path.join(dataDir, 'staging'));
  let conversations: string[] = [];
  try {
    conversations = readdirSync(path.join(dataDir, 'conversations'));
  } catch {
    // No conversation committed yet.
  }
  for (const conversation of conversations) collect(path.join(dataDir, 'conversations', conversation, 'attachments'));
  return files.sort();
}

/** Upload requests that must be refused (4xx) or cut, each written as raw bytes; `cut` closes the connection after writing. */
function badUploads(port: number, token: string, conversationId: string, limit: number): { name: string; bytes: Buffer | string; cut?: 'end' | 'reset' }[] {
  const head = (method: string, target: string, headers: Record<string, string>) =>
    `${method} ${target} HTTP/1.1\r\n${Object.entries({ Host: `127.0.0.1:${port}`, ...headers })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n')}\r\n\r\n`;
  const auth = { Authorization: `Bearer ${token}` };
  const target = (name = 'a.txt', conversation = conversationId) => `/api/v1/uploads?${new URLSearchParams({ conversationId: conversation, name }).toString()}`;
  const post = (headers: Record<string, string>, body = '', path = target()) => head('POST', path, { ...auth, ...headers }) + body;
  const chunk = (data: string) => `${data.length.toString(16)}\r\n${data}\r\n`;
  const overLimit = 'x'.repeat(limit + 1);
  return [
    // Methods other than POST, with and without a body.
    ...['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'].map((method) => ({ name: `${method}`, bytes: head(method, target(), { ...auth, 'Content-Length': '5' }) + 'hello' })),
    { name: 'made-up method', bytes: head('BREW', target(), { ...auth, 'Content-Length': '0' }) },
    // Token and Origin.
    { name: 'no token', bytes: head('POST', target(), { 'Content-Length': '5' }) + 'hello' },
    { name: 'wrong token', bytes: head('POST', target(), { Authorization: `Bearer ${'x'.repeat(43)}`, 'Content-Length': '5' }) + 'hello' },
    { name: 'foreign origin', bytes: post({ Origin: 'http://evil.example', 'Content-Length': '5' }, 'hello') },
    { name: 'foreign host', bytes: head('POST', target(), { ...auth, Host: 'evil.example', 'Content-Length': '5' }) + 'hello' },
    // Query strings.
    { name: 'no query', bytes: post({ 'Content-Length': '5' }, 'hello', '/api/v1/uploads') },
    { name: 'empty query', bytes: post({ 'Content-Length': '5' }, 'hello', '/api/v1/uploads?') },
    { name: 'only separators', bytes: post({ 'Content-Length': '5' }, 'hello', '/api/v1/uploads?&&&==&') },
    { name: 'no name', bytes: post({ 'Content-Length': '5' }, 'hello', `/api/v1/uploads?conversationId=${conversationId}`) },
    { name: 'no conversation', bytes: post({ 'Content-Length': '5' }, 'hello', '/api/v1/uploads?name=a.txt') },
    { name: 'bad percent escapes', bytes: post({ 'Content-Length': '5' }, 'hello', `/api/v1/uploads?conversationId=%ZZ${conversationId}&name=%E0%A4%A`) },
    { name: 'NUL in the conversation id', bytes: post({ 'Content-Length': '5' }, 'hello', `/api/v1/uploads?conversationId=${conversationId}%00&name=a.txt`) },
    { name: 'path as conversation id', bytes: post({ 'Content-Length': '5' }, 'hello', target('a.txt', '../../etc')) },
    // A name of dots or of invalid UTF-8 is not broken: it is stored as `file` (test/server/upload-names.test.ts).
    { name: 'unknown conversation, then the body', bytes: post({ 'Content-Length': '5' }, 'hello', target('a.txt', MISSING_CONVERSATION)) },
    { name: 'first of two conversation ids unknown', bytes: post({ 'Content-Length': '5' }, 'hello', `/api/v1/uploads?conversationId=${MISSING_CONVERSATION}&conversationId=${conversationId}&name=a.txt`) },
    { name: 'query of 60,000 bytes', bytes: post({ 'Content-Length': '5' }, 'hello', `${target()}&pad=${'a'.repeat(60_000)}`) },
    // Content-Length.
    { name: 'Content-Length over the limit', bytes: post({ 'Content-Length': String(limit + 1) }, overLimit) },
    { name: 'Content-Length over the limit, no body', bytes: post({ 'Content-Length': String(limit + 1) }) },
    { name: 'huge Content-Length', bytes: post({ 'Content-Length': '99999999999999999999999' }, 'hello') },
    { name: 'Content-Length near 2^53', bytes: post({ 'Content-Length': '9007199254740993' }, 'hello') },
    { name: 'negative Content-Length', bytes: post({ 'Content-Length': '-1' }, 'hello') },
    { name: 'Content-Length not a number', bytes: post({ 'Content-Length': 'five' }, 'hello') },
    { name: 'two different Content-Lengths', bytes: head('POST', target(), { ...auth, 'Content-Length': '5' }).replace('\r\n\r\n', '\r\nContent-Length: 6\r\n\r\n') + 'hello!' },
    { name: 'Content-Length and chunked', bytes: post({ 'Content-Length': '5', 'Transfer-Encoding': 'chunked' }, chunk('hello') + '0\r\n\r\n') },
    // Chunked bodies.
    { name: 'chunked over the limit', bytes: post({ 'Transfer-Encoding': 'chunked' }, chunk(overLimit.slice(0, 1000)).repeat(Math.ceil((limit + 1) / 1000)) + '0\r\n\r\n') },
    { name: 'chunked over the limit, never finished', bytes: post({ 'Transfer-Encoding': 'chunked' }, chunk(overLimit)), cut: 'end' },
    { name: 'chunk size not hex', bytes: post({ 'Transfer-Encoding': 'chunked' }, 'zz\r\nhello\r\n0\r\n\r\n') },
    { name: 'chunk longer than announced', bytes: post({ 'Transfer-Encoding': 'chunked' }, '2\r\nhello\r\n0\r\n\r\n') },
    { name: 'chunk size overflow', bytes: post({ 'Transfer-Encoding': 'chunked' }, 'ffffffffffffffffffff\r\nhello\r\n') },
    { name: 'unknown transfer coding', bytes: post({ 'Transfer-Encoding': 'gzip' }, 'hello') },
    // Disconnects in the middle of the body.
    { name: 'end after half the body', bytes: post({ 'Content-Length': '100' }, 'x'.repeat(50)), cut: 'end' },
    { name: 'reset after half the body', bytes: post({ 'Content-Length': '100' }, 'x'.repeat(50)), cut: 'reset' },
    { name: 'end right after the headers', bytes: post({ 'Content-Length': '100' }), cut: 'end' },
    { name: 'reset inside the headers', bytes: post({ 'Content-Length': '100' }).slice(0, 40), cut: 'reset' },
    { name: 'end in the middle of a chunk', bytes: post({ 'Transfer-Encoding': 'chunked' }, '64\r\n' + 'x'.repeat(50)), cut: 'end' },
    { name: 'reset after the last chunk but before the end', bytes: post({ 'Transfer-Encoding': 'chunked' }, chunk('hello')), cut: 'reset' },
  ];
}

it('answers every broken upload with 4xx or a close, stays up, and never leaves a file behind', { timeout: 120_000 }, async () => {
  const limit = 4096;
  const uploadEnvironment = await createTestEnvironment('responses:\n  - text: "ok"\n');
  writeFileSync(path.join(uploadEnvironment.paths.configDir, 'server.yaml'), `limits:\n  maxUploadBytes: ${limit}\n`);
  const server = await startRuntimeServer({ paths: uploadEnvironment.paths, port: 0, logger: createLogger('silent') });
  const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'fuzz' });
  const dataDir = uploadEnvironment.paths.dataDir;
  try {
    // One conversation stays staged (no input), the other is committed by an input.
    const { conversation: staged } = await client.request('conversation/create', { cwd: uploadEnvironment.workDir });
    const { conversation: committed } = await client.request('conversation/create', { cwd: uploadEnvironment.workDir });
    await client.request('session/input', { conversationId: committed.id, input: [{ type: 'text', text: 'hi' }] });
    expect(existsSync(path.join(dataDir, 'conversations', committed.id))).toBe(true);

    let cases = 0;
    for (const conversationId of [staged.id, committed.id]) {
      for (const upload of badUploads(server.port, server.token, conversationId, limit)) {
        const before = uploadedFiles(dataDir);
        const connection = await rawConnect(server.port, upload.bytes);
        cases++;
        if (upload.cut === 'reset') connection.socket.resetAndDestroy();
        else if (upload.cut === 'end') connection.socket.end();
        // Until the server closes, or its whole answer head is in.
        const deadline = Date.now() + 5000;
        while (!connection.received().includes('\r\n\r\n') && Date.now() < deadline && !(await connection.closed(20))) continue;
        const answer = connection.received().toString('latin1');
        const label = `${upload.name} (${conversationId === staged.id ? 'staged' : 'committed'} conversation): ${answer.slice(0, 120)}`;
        if (upload.cut !== 'reset') {
          expect(answer === '' || /^HTTP\/1\.1 4\d\d /.test(answer), label).toBe(true);
          if (answer === '') expect(await connection.closed(5000), `${label}: neither an answer nor a close`).toBe(true);
        }
        connection.socket.destroy();
        // Whatever the server still does with the request happens now.
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect(uploadedFiles(dataDir), label).toEqual(before);
        expect(existsSync(path.join(dataDir, 'conversations', staged.id)), label).toBe(false);
      }
    }
    expect(cases).toBeGreaterThan(80);
    // Nothing was stored, not even half of a file.
    expect(uploadedFiles(dataDir)).toEqual([]);

    // The server still takes a good upload, whole, for both conversations.
    for (const conversationId of [staged.id, committed.id]) {
      const response = await fetch(`${server.url}/api/v1/uploads?conversationId=${conversationId}&name=ok.txt`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: 'y'.repeat(limit) });
      expect(response.status).toBe(201);
      const { attachment } = (await response.json()) as { attachment: { id: string } };
      const place = conversationId === staged.id ? path.join('staging', staged.id) : path.join('conversations', committed.id, 'attachments');
      expect(readFileSync(path.join(dataDir, place, `${attachment.id}-ok.txt`), 'utf8')).toBe('y'.repeat(limit));
    }
    expect(uploadedFiles(dataDir)).toHaveLength(2);
  } finally {
    await client.close();
    await server.stop();
    await uploadEnvironment.dispose();
  }
});
