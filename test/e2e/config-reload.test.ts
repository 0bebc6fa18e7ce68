/**
 * A real `openvaala serve` applies configuration files changed on disk: executors, agents and
 * server settings reloaded are in force for what is created afterwards, while conversations
 * already open keep working.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification } from '../../src/protocol/index.js';
import { createTestEnvironment, runCli, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';

const SCRIPT = `
responses:
  - toolCalls:
      - name: exec_command
        arguments: { command: "cat README.md" }
  - text: "Read it."
  - text: "Still here."
`;

function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
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

describe('configuration reload in a running server', () => {
  let environment: TestEnvironment;
  let serve: ServeProcess | undefined;
  let client: RuntimeClient | undefined;

  beforeEach(async () => {
    environment = await createTestEnvironment(SCRIPT);
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    await serve?.stop();
    serve = undefined;
    await environment.dispose();
  });

  it('keeps the previous configuration after a broken edit, and exec says so, naming the file', async () => {
    await environment.dispose();
    environment = await createTestEnvironment('responses:\n  - text: "Answered with the previous configuration."\n');
    serve = await startServe(environment);
    const providersFile = path.join(environment.paths.configDir, 'providers.yaml');
    writeFileSync(providersFile, `${readFileSync(providersFile, 'utf8')}\ndefaultModel: [unclosed\n`);
    await until(() => serve!.output().includes('configuration reload failed'), 10_000, 'the server to report the failed reload');
    const result = await runCli(['exec', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Answered with the previous configuration.');
    expect(result.stderr).toMatch(/warning: the server could not reload its configuration and keeps the previous one until the files are fixed: providers\.yaml:\d+/);
  });

  it('puts an executor added to executors.yaml in force (file watch and config/reload); open conversations keep working', async () => {
    serve = await startServe(environment);
    client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'reload' });
    const events: AnyNotification[] = [];
    client.onNotification((event) => events.push(event));
    const before = await client.request('conversation/create', { cwd: environment.workDir });

    // Edited on disk: the watch reloads it and tells the client.
    writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  scratch: { kind: virtual, files: { README.md: "from the new executor\\n" } }\n');
    await until(() => events.some((event) => event.method === 'config/updated'), 10_000, 'config/updated');
    expect(events.find((event) => event.method === 'config/updated')?.params).toMatchObject({ ok: true });
    expect((await client.request('executors/list', {})).executors.map((executor) => executor.name)).toContain('scratch');
    const created = await client.request('conversation/create', { cwd: '/workspace', executor: 'scratch' });
    await client.request('conversation/subscribe', { conversationId: created.conversation.id });
    await client.request('session/input', { conversationId: created.conversation.id, input: 'Read the readme' });
    await until(() => events.some((event) => event.method === 'turn/completed' && event.params.conversationId === created.conversation.id), 20_000, 'the turn on the new executor');
    const output = events.flatMap((event) => (event.method === 'item/completed' && event.params.item.kind === 'tool_call' ? [event.params.item.output] : []));
    expect(output.join('')).toContain('from the new executor');

    // Through config/reload, without waiting for the watch.
    writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  scratch: { kind: virtual }\n  other: { kind: virtual }\n');
    expect(await client.request('config/reload', {})).toMatchObject({ ok: true });
    expect((await client.request('conversation/create', { cwd: '/workspace', executor: 'other' })).conversation.workLocation).toEqual([{ executor: 'other', cwd: '/workspace' }]);

    // The conversation opened before the changes still runs a turn.
    await client.request('conversation/subscribe', { conversationId: before.conversation.id });
    await client.request('session/input', { conversationId: before.conversation.id, input: 'Still there?' });
    await until(() => events.some((event) => event.method === 'turn/completed' && event.params.conversationId === before.conversation.id), 20_000, 'the turn of the older conversation');
    const turn = events.find((event) => event.method === 'turn/completed' && event.params.conversationId === before.conversation.id);
    expect(turn?.params).toMatchObject({ turn: { status: 'completed' } });
  });

  it('applies allowed origins from a reloaded server.yaml, says what open conversations keep, and refuses executors it cannot build', async () => {
    environment.env.SSH_AUTH_SOCK = '';
    serve = await startServe(environment);
    client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'reload' });
    const url = `${serve.info.url.replace('http', 'ws')}/api/v1/openvaala`;
    const origin = 'http://localhost:5173';
    expect(await upgradeStatus(url, { authorization: `Bearer ${serve.info.token}`, origin })).toBe(403);
    writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), `allowedOrigins: [${origin}]\n`);
    expect(await client.request('config/reload', {})).toEqual({ ok: true });
    expect(await upgradeStatus(url, { authorization: `Bearer ${serve.info.token}`, origin })).toBe(101);

    await client.request('conversation/create', { cwd: environment.workDir });
    writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), 'servers:\n  tools: { transport: http, url: "http://127.0.0.1:9/mcp", enabled: false }\n');
    const withNotes = await client.request('config/reload', {});
    expect(withNotes.ok).toBe(true);
    expect(withNotes.notes?.join('\n')).toMatch(/mcp\.yaml: conversations already open switch to the new MCP servers at their next turn/);

    // agent: true without SSH_AUTH_SOCK cannot be built: the reload fails, and so does an update (files restored).
    const executorsFile = path.join(environment.paths.configDir, 'executors.yaml');
    writeFileSync(executorsFile, 'executors:\n  box: { kind: ssh, host: 127.0.0.1, user: me, agent: true }\n');
    const failed = await client.request('config/reload', {});
    expect(failed.ok).toBe(false);
    // Named as every other problem of the directory is: file, line and key path.
    expect(failed.error).toContain("executors.yaml:2: executors.box.agent: agent: true, but SSH_AUTH_SOCK is not set in the server's environment");
    expect((await client.request('executors/list', {})).executors.map((executor) => executor.name)).toEqual(['local']);
    writeFileSync(executorsFile, '# mine\nexecutors: {}\n');
    await client.request('config/reload', {});
    const refused = await client.request('config/update', { changes: [{ file: 'executors', path: ['executors', 'box'], value: { kind: 'ssh', host: '127.0.0.1', user: 'me', agent: true } }] }).catch((error: unknown) => error);
    expect((refused as Error).message).toContain('SSH_AUTH_SOCK');
    expect(readFileSync(executorsFile, 'utf8')).toBe('# mine\nexecutors: {}\n');
  });
});
