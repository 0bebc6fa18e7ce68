/**
 * `openvaala app-server` refuses what Codex refuses, with the errors Codex uses: a request
 * before `initialize` (`-32600 "Not initialized"`), a second `initialize` (`-32600 "Already
 * initialized"`), a method it does not serve (`-32601`, naming the method), bad params
 * (`-32602`, naming the field), text that is not JSON (`-32700`, id null), a thread that does
 * not exist (the runtime's not-found error), and a `--listen` value that is not `ws://HOST:PORT`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/environment.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { CodexErrorAnswer, CodexTestClient } from './codex-client.js';
import { CodexSchema, readTranscript, type WireEntry } from './codex-schema.js';

const schema = new CodexSchema();
let server: InProcessServer | undefined;
let client: CodexTestClient | undefined;

afterEach(async () => {
  await client?.stop();
  client = undefined;
  await server?.stop();
  server = undefined;
});

async function errorOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof CodexErrorAnswer) return error.error;
    throw error;
  }
  throw new Error('the request succeeded; an error was expected');
}

describe('the schema check of the tests', () => {
  it('accepts the recorded Codex sessions and reports a message that breaks its definition', () => {
    for (const name of ['text', 'shell-approval', 'patch-approval']) expect(schema.check(readTranscript(name))).toEqual([]);
    const broken: WireEntry[] = [
      { dir: 'c->s', msg: { id: 1, method: 'turn/start', params: { input: [] } } },
      { dir: 's->c', msg: { id: 1, result: { turn: { id: 'x' } } } },
      { dir: 's->c', msg: { method: 'item/agentMessage/delta', params: { threadId: 't', delta: 'x' } } },
    ];
    const problems = schema.check(broken);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toContain('ClientRequest');
    expect(problems[1]).toContain('TurnStartResponse');
    expect(problems[2]).toContain('ServerNotification');
  });
});

for (const transport of ['stdio', 'websocket'] as const) {
  describe(`openvaala app-server handshake and errors over ${transport}`, () => {
    it('refuses requests before initialize and a second initialize, with Codex error codes and messages', async () => {
      server = await startInProcessServer('responses: []\n');
      client = await CodexTestClient.start(transport, server.environment.env, server.environment.workDir);
      expect(await errorOf(client.request('thread/list', {}))).toEqual({ code: -32600, message: 'Not initialized' });
      const initialized = await client.initialize();
      expect(initialized).toMatchObject({ platformFamily: 'unix', codexHome: server.environment.paths.configDir });
      expect(initialized.userAgent).toContain('research_probe');
      expect(await errorOf(client.request('initialize', { clientInfo: { name: 'again', version: '1' } }))).toEqual({ code: -32600, message: 'Already initialized' });
      // After both refusals the connection works.
      expect(await client.request('thread/list', {})).toEqual({ data: [], nextCursor: null });
      expect(schema.check(client.log)).toEqual([]);
      // Stdio ends with its input, the listener with SIGTERM: both exit 0.
      const stopping = client;
      client = undefined;
      expect(await stopping.stop()).toBe(0);
    });

    it('answers a method it does not serve with -32601 naming it, bad params with -32602 naming the field', async () => {
      server = await startInProcessServer('responses: []\n');
      client = await CodexTestClient.start(transport, server.environment.env, server.environment.workDir);
      await client.initialize();
      const unsupported = await errorOf(client.request('review/start', { threadId: '0190f3a2-0000-7000-8000-000000000000', target: { type: 'uncommittedChanges' } }));
      expect(unsupported.code).toBe(-32601);
      expect(unsupported.message).toContain('review/start');
      const unknown = await errorOf(client.request('no/such/method', {}));
      expect(unknown.code).toBe(-32601);
      expect(unknown.message).toContain('no/such/method');

      const badThread = await errorOf(client.request('turn/start', { threadId: 'not-a-uuid', input: [{ type: 'text', text: 'hi', text_elements: [] }] }));
      expect(badThread.code).toBe(-32602);
      expect(badThread.message).toMatch(/^turn\/start: params\.threadId: .*not a UUID/);
      const noInput = await errorOf(client.request('turn/start', { threadId: '0190f3a2-0000-7000-8000-000000000000' }));
      expect(noInput.code).toBe(-32602);
      expect(noInput.message).toContain('params.input');
      const audio = await errorOf(client.request('turn/start', { threadId: '0190f3a2-0000-7000-8000-000000000000', input: [{ type: 'localAudio', path: '/tmp/a.wav' }] }));
      expect(audio).toMatchObject({ code: -32602, message: expect.stringContaining('params.input[0]: input of type "localAudio" is not supported') });

      const missing = await errorOf(client.request('thread/read', { threadId: '0190f3a2-0000-7000-8000-000000000000' }));
      expect(missing.code).toBe(-32004);
      expect(missing.message).toMatch(/^thread\/read: /);

      client.sendText('{"id": 5, "method": ');
      const parseError = await client.waitFor((msg) => msg.id === null && msg.error !== undefined, 'the parse error');
      expect(parseError.error?.code).toBe(-32700);
      // The connection goes on after text that is no message.
      expect(await client.request('thread/list', {})).toEqual({ data: [], nextCursor: null });

      // Left out of the schema check, invalid on purpose: the `no/such/method` request (no Codex
      // method) and the `turn/start` without `input`; and the parse error, which has no id to
      // answer (JSON-RPC 2.0 §5: null) where Codex's schema allows none.
      const invalidOnPurpose = (msg: WireEntry['msg']) => msg.method === 'no/such/method' || (msg.method === 'turn/start' && !(msg.params as { input?: unknown }).input) || msg.id === null;
      const checked = client.log.filter(({ msg }) => !invalidOnPurpose(msg));
      expect(schema.check(checked)).toEqual([]);
    });
  });
}

describe('openvaala app-server over stdio, input ending at once', () => {
  it('answers every request it read before its input ended, then exits 0', async () => {
    server = await startInProcessServer('responses: []\n');
    const input = [
      JSON.stringify({ id: 1, method: 'initialize', params: { clientInfo: { name: 'piped', version: '1' } } }),
      JSON.stringify({ method: 'initialized' }),
      JSON.stringify({ id: 2, method: 'thread/list', params: {} }),
    ].join('\n');
    const result = await runCli(['app-server'], { env: server.environment.env, cwd: server.environment.workDir, input: `${input}\n`, timeoutMs: 30_000 });
    expect(result.code).toBe(0);
    const answers = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id?: number; result?: unknown });
    expect(answers.filter((answer) => answer.id !== undefined).map((answer) => answer.id)).toEqual([1, 2]);
    expect(answers.find((answer) => answer.id === 2)?.result).toEqual({ data: [], nextCursor: null });
  });
});

describe('openvaala app-server --listen', () => {
  it('refuses a value that is not ws://LOOPBACK:PORT with a usage error naming it', async () => {
    server = await startInProcessServer('responses: []\n');
    const notWs = await runCli(['app-server', '--listen', 'http://127.0.0.1:4000'], { env: server.environment.env, timeoutMs: 20_000 });
    expect(notWs.code).toBe(64);
    expect(notWs.stderr).toContain('--listen "http://127.0.0.1:4000": only ws:// is supported');
    const noPort = await runCli(['app-server', '--listen', 'ws://127.0.0.1'], { env: server.environment.env, timeoutMs: 20_000 });
    expect(noPort.code).toBe(64);
    expect(noPort.stderr).toContain('names no port');
    const exposed = await runCli(['app-server', '--listen', 'ws://0.0.0.0:4500'], { env: server.environment.env, timeoutMs: 20_000 });
    expect(exposed.code).toBe(64);
    expect(exposed.stderr).toContain('only a loopback address');
  });
});
