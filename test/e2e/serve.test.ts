/**
 * The real `openvaala serve` process driven over a real WebSocket: lock, auth, origin,
 * streaming to several clients, items on disk, request validation.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RuntimeClient, RuntimeClientError } from '../../src/client/runtime-client.js';
import { serverInfoFile } from '../../src/config/paths.js';
import type { AnyNotification } from '../../src/protocol/index.js';
import { createTestEnvironment, runCli, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

const SCRIPT = `
responses:
  - deltas: ["Listing ", "the files."]
    toolCalls:
      - name: list_dir
        arguments: { path: "." }
      - name: exec_command
        arguments: { command: "echo from-the-tool" }
  - text: "Done: one file, and the command printed its line."
`;

function upgradeStatus(url: string, headers: Record<string, string>, protocols?: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, { headers });
    socket.once('open', () => {
      socket.close();
      resolve(101);
    });
    socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.once('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

describe('openvaala serve', () => {
  let environment: TestEnvironment;
  let serve: ServeProcess | undefined;

  beforeEach(async () => {
    environment = await createTestEnvironment(SCRIPT);
  });
  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
    await environment.dispose();
  });

  it('exits 1 naming the file and key of an invalid configuration, and leaves no lock or server file behind', async () => {
    writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), 'limits:\n  maxUploadBytes: many\n');
    const failed = await runCli(['serve', '--port', '0'], { env: environment.env, timeoutMs: 15_000 });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('server.yaml');
    expect(failed.stderr).toContain('maxUploadBytes');
    expect(existsSync(serverInfoFile(environment.paths))).toBe(false);
    expect(existsSync(path.join(environment.paths.dataDir, 'runtime-server.yaml'))).toBe(false);
    // The lock was released: a server starts once the file is fixed.
    rmSync(path.join(environment.paths.configDir, 'server.yaml'));
    serve = await startServe(environment);
    expect(serve.child.exitCode).toBeNull();
  });

  it('holds the data dir: a second server exits non-zero naming the running pid', async () => {
    serve = await startServe(environment);
    const second = await runCli(['serve', '--port', '0'], { env: environment.env, timeoutMs: 15_000 });
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(`pid ${serve.child.pid}`);
    expect(second.stderr).toContain(environment.paths.dataDir);
  });

  it('writes runtime-server.yaml with mode 0600 and removes it and the lock on SIGTERM', async () => {
    serve = await startServe(environment);
    const file = serverInfoFile(environment.paths);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(environment.paths.dataDir, 'runtime.lock'), 'utf8').trim().split(' ')[0]).toBe(String(serve.child.pid));
    const health = await (await fetch(`${serve.info.url}/healthz`, { headers: { authorization: `Bearer ${serve.info.token}` } })).json();
    expect(health).toMatchObject({ status: 'ok', pid: serve.child.pid });
    expect(await serve.stop()).toBe(0);
    serve = undefined;
    expect(() => statSync(file)).toThrow();
    expect(() => statSync(path.join(environment.paths.dataDir, 'runtime.lock'))).toThrow();
  });

  it('refuses a WebSocket with a wrong token (401) and from a foreign origin (403); one without a token must authenticate with its first message', async () => {
    serve = await startServe(environment);
    const url = `${serve.info.url.replace('http', 'ws')}/api/v1/openvaala`;
    expect(await upgradeStatus(url, {}, [`openvaala.token.not-the-token`])).toBe(401);
    // No token at all: accepted, and its first request, if not initialize with the token, is refused.
    const anonymous = new WebSocket(url);
    const refusal = new Promise<{ answer: string; code: number }>((resolve) => {
      anonymous.once('message', (data) => anonymous.once('close', (code) => resolve({ answer: data.toString(), code })));
    });
    await new Promise((resolve) => anonymous.once('open', resolve));
    anonymous.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'conversation/list', params: {} }));
    const { answer, code } = await refusal;
    expect(JSON.parse(answer)).toMatchObject({ id: 1, error: { code: -32001 } });
    expect(code).toBe(1008);
    expect(await upgradeStatus(url, { authorization: 'Bearer not-the-token' })).toBe(401);
    expect(await upgradeStatus(url, { authorization: `Bearer ${serve.info.token}`, origin: 'https://evil.example' })).toBe(403);
    expect(await upgradeStatus(url, { authorization: `Bearer ${serve.info.token}`, origin: serve.info.url })).toBe(101);
    expect(await upgradeStatus(url, {}, [`openvaala.token.${serve.info.token}`])).toBe(101);
  });

  it('streams a turn to two clients and stores its items on disk', async () => {
    serve = await startServe(environment);
    const first = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'first' });
    const second = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'second' });
    const firstEvents: AnyNotification[] = [];
    const secondEvents: AnyNotification[] = [];
    first.onNotification((event) => firstEvents.push(event));
    second.onNotification((event) => secondEvents.push(event));
    const done = (events: AnyNotification[]) =>
      new Promise<void>((resolve) => {
        const timer = setInterval(() => {
          if (events.some((event) => event.method === 'turn/completed')) {
            clearInterval(timer);
            resolve();
          }
        }, 20);
      });

    const { conversation, session } = await first.request('conversation/create', { cwd: environment.workDir });
    await first.request('conversation/subscribe', { conversationId: conversation.id });
    await second.request('conversation/subscribe', { conversationId: conversation.id });
    await first.request('session/input', { conversationId: conversation.id, input: 'What is here?' });
    await Promise.all([done(firstEvents), done(secondEvents)]);

    const methodsSeen = firstEvents.map((event) => event.method);
    expect(methodsSeen).toContain('turn/started');
    expect(methodsSeen).toContain('item/started');
    const deltas = firstEvents.flatMap((event) => (event.method === 'item/delta' && event.params.delta.text ? [event.params.delta.text] : []));
    expect(deltas.join('')).toBe('Listing the files.Done: one file, and the command printed its line.');
    const completed = (events: AnyNotification[]) => events.flatMap((event) => (event.method === 'item/completed' ? [event.params] : []));
    expect(completed(firstEvents).map((entry) => entry.item.kind)).toEqual(['user_message', 'assistant_message', 'tool_call', 'tool_call', 'assistant_message']);
    expect(completed(secondEvents)).toEqual(completed(firstEvents));
    const toolCalls = completed(firstEvents).flatMap((entry) => (entry.item.kind === 'tool_call' ? [entry.item] : []));
    expect(toolCalls.map((call) => call.toolName)).toEqual(['list_dir', 'exec_command']);
    expect(toolCalls[1]?.output).toContain('from-the-tool');
    expect(toolCalls[1]?.exitCode).toBe(0);

    // The same items, in the same order with the same seqs, are in the session's log file.
    const logFile = path.join(environment.paths.dataDir, 'conversations', conversation.id, `${session.id}.jsonl`);
    const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { seq: number; value: { id: string } });
    expect(lines.map((line) => line.seq)).toEqual(completed(firstEvents).map((entry) => entry.seq));
    expect(lines.map((line) => line.value.id)).toEqual(completed(firstEvents).map((entry) => entry.item.id));
    const metadata = readFileSync(path.join(environment.paths.dataDir, 'conversations', conversation.id, 'metadata.jsonl'), 'utf8');
    expect(metadata).toContain('"status":"completed"');

    // A late client gets everything through subscribe, and items/list pages the same items.
    const late = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'late' });
    const lateEvents: AnyNotification[] = [];
    late.onNotification((event) => lateEvents.push(event));
    await late.request('conversation/subscribe', { conversationId: conversation.id, afterSeq: { [session.id]: 2 } });
    // The replay follows the subscribe answer; conversation/synced says it is over.
    await until(() => lateEvents.some((event) => event.method === 'conversation/synced'), 10_000, 'the replay to the late client');
    expect(completed(lateEvents).map((entry) => entry.seq)).toEqual([3, 4, 5]);
    const page = await late.request('items/list', { conversationId: conversation.id, direction: 'backward', limit: 2 });
    expect(page.items.map((entry) => entry.seq)).toEqual([5, 4]);
    expect(page.nextCursor).toBe(4);
    const listing = await late.request('conversation/list', {});
    expect(listing.conversations.map((entry) => entry.id)).toEqual([conversation.id]);
    expect(listing.conversations[0]?.lastTurnStatus).toBe('completed');
    await Promise.all([first.close(), second.close(), late.close()]);
  });

  it('answers invalid requests with errors naming the method and the field path', async () => {
    allowInvalidSentMessages();
    serve = await startServe(environment);
    const client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'validation' });
    const error = await client.request('conversation/create', { cwd: 42 } as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RuntimeClientError);
    expect((error as RuntimeClientError).code).toBe(-32602);
    expect((error as RuntimeClientError).message).toMatch(/^conversation\/create: params\.cwd: /);
    const missing = await client.request('conversation/get', { conversationId: 'conv_missing' }).catch((caught: unknown) => caught);
    expect((missing as RuntimeClientError).message).toContain('conv_missing');
    const unknown = await client.request('no/such' as never, {} as never).catch((caught: unknown) => caught);
    expect((unknown as RuntimeClientError).code).toBe(-32601);
    const badModel = await client.request('conversation/create', { cwd: environment.workDir, model: 'nowhere/x' }).catch((caught: unknown) => caught);
    expect((badModel as RuntimeClientError).message).toContain('provider "nowhere" is not configured');
    await client.close();
  });
});
