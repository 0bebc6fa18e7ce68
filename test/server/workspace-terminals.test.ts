/**
 * `terminal/*` over a real WebSocket against a real server: a PTY on the local executor, in
 * the bwrap sandbox and over SSH (a real OpenSSH server); the virtual executor has none.
 * Terminals belong to the connection that opened it and die with it.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, NotificationParams } from '../../src/protocol/index.js';
import { MAX_TERMINALS_PER_CONNECTION } from '../../src/server/terminals.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { until } from '../helpers/processes.js';
import { protocolFailure } from '../helpers/protocol-failure.js';
import { requireExecutable } from '../helpers/required-commands.js';
import { startSshServer, type TestSshServer } from '../helpers/ssh-server.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

const PTY_VARIANTS = ['local', 'sandboxed', 'box'] as const;

let harness: InProcessServer;
let ssh: TestSshServer;
const conversations = new Map<string, string>();
const previousTmpdir = process.env.TMPDIR;

beforeAll(async () => {
  requireExecutable('bwrap', 'bubblewrap');
  // The sandbox has a private /tmp: its workspace must live elsewhere to be seen at all.
  process.env.TMPDIR = '/var/tmp';
  ssh = await startSshServer();
  harness = await startInProcessServer('responses:\n  - text: "ok"\n', {
    beforeStart: (environment) => {
      mkdirSync(path.join(environment.workDir, 'sub'));
      writeFileSync(
        path.join(environment.paths.configDir, 'executors.yaml'),
        [
          'executors:',
          '  sandboxed: { kind: local, sandbox: bwrap }',
          `  box: { kind: ssh, host: 127.0.0.1, port: ${ssh.port}, user: ${ssh.user}, identityFile: ${ssh.identityFile}, knownHostsFile: ${ssh.knownHostsFile} }`,
          '  scratch: { kind: virtual }',
          '',
        ].join('\n'),
      );
    },
  });
  for (const executor of [...PTY_VARIANTS, 'scratch']) {
    const { conversation } = await harness.client.request('conversation/create', { cwd: executor === 'scratch' ? '/workspace' : harness.environment.workDir, executor });
    conversations.set(executor, conversation.id);
  }
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await ssh?.dispose();
  if (previousTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmpdir;
});

type Output = NotificationParams<'terminal/output'>;

function outputsOf(events: AnyNotification[], terminalId: string): Output[] {
  return events.flatMap((event) => (event.method === 'terminal/output' && event.params.terminalId === terminalId ? [event.params] : []));
}

function textOf(events: AnyNotification[], terminalId: string): string {
  return outputsOf(events, terminalId)
    .map((output) => output.data ?? '')
    .join('');
}

async function waitForText(events: AnyNotification[], terminalId: string, expected: string | RegExp): Promise<void> {
  await until(() => (typeof expected === 'string' ? textOf(events, terminalId).includes(expected) : expected.test(textOf(events, terminalId))), 15_000, `terminal output ${String(expected)}; got ${JSON.stringify(textOf(events, terminalId))}`);
}

/** Pids of processes whose command line holds `marker` (they run on this machine, SSH included). */
function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function secondClient(): Promise<{ client: RuntimeClient; events: AnyNotification[] }> {
  const client = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'second' });
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  return { client, events };
}

describe.each(PTY_VARIANTS)('terminals on executor %s', (executor) => {
  it('runs a shell: output, resize seen by stty, exit reported last', async () => {
    const conversationId = conversations.get(executor) as string;
    const { terminalId } = await harness.client.request('terminal/create', { conversationId, cols: 80, rows: 24 });
    expect(terminalId).toMatch(/^term_[0-9a-z]+$/);
    await harness.client.request('terminal/input', { terminalId, data: 'echo hi-$((40+2)); pwd\r' });
    await waitForText(harness.events, terminalId, 'hi-42');
    await waitForText(harness.events, terminalId, harness.environment.workDir);
    await harness.client.request('terminal/input', { terminalId, data: 'stty size\r' });
    await waitForText(harness.events, terminalId, /\b24 80\b/);
    await harness.client.request('terminal/resize', { terminalId, cols: 100, rows: 30 });
    await harness.client.request('terminal/input', { terminalId, data: 'stty size\r' });
    await waitForText(harness.events, terminalId, /\b30 100\b/);
    await harness.client.request('terminal/input', { terminalId, data: 'exit 7\r' });
    await until(() => outputsOf(harness.events, terminalId).some((output) => output.exited === true), 15_000, 'the exit');
    const outputs = outputsOf(harness.events, terminalId);
    expect(outputs.map((output) => output.seq)).toEqual(outputs.map((_, index) => index + 1));
    expect(outputs.at(-1)).toEqual({ terminalId, seq: outputs.length, exited: true, exitCode: 7, signal: null });
    // Once it has ended the id is gone.
    const ended = await protocolFailure(harness.client.request('terminal/input', { terminalId, data: 'x' }));
    expect(ended.code).toBe(-32004);
  });

  it('starts in a cwd inside the workspace and refuses one outside', async () => {
    const conversationId = conversations.get(executor) as string;
    const { terminalId } = await harness.client.request('terminal/create', { conversationId, cols: 80, rows: 24, cwd: 'sub', command: 'pwd; sleep 0.2' });
    await until(() => outputsOf(harness.events, terminalId).some((output) => output.exited === true), 15_000, 'the exit');
    expect(textOf(harness.events, terminalId)).toContain(path.join(harness.environment.workDir, 'sub'));
    for (const cwd of ['..', '/etc']) {
      const refused = await protocolFailure(harness.client.request('terminal/create', { conversationId, cols: 80, rows: 24, cwd }));
      expect(refused.code).toBe(-32602);
      expect(refused.message).toContain('terminal/create: params.cwd:');
      expect(refused.message).toContain('is outside the workspace');
    }
  });

  it('belongs to its connection: another one cannot use it, and closing the owner kills it', async () => {
    const conversationId = conversations.get(executor) as string;
    const marker = `${executor.length + 900}.${Date.now() % 1000}`;
    const owner = await secondClient();
    const { terminalId } = await owner.client.request('terminal/create', { conversationId, cols: 80, rows: 24, command: `sleep ${marker}` });
    await until(() => processesWith(marker).length > 0, 15_000, `sleep ${marker} to start`);
    for (const attempt of [
      harness.client.request('terminal/input', { terminalId, data: 'x' }),
      harness.client.request('terminal/resize', { terminalId, cols: 10, rows: 10 }),
      harness.client.request('terminal/close', { terminalId }),
    ]) {
      const refused = await protocolFailure(attempt);
      expect(refused.code).toBe(-32003);
      expect(refused.message).toContain(`forbidden: terminal "${terminalId}" belongs to another connection`);
    }
    expect(processesWith(marker).length).toBeGreaterThan(0);
    expect(harness.events.some((event) => event.method === 'terminal/output' && event.params.terminalId === terminalId)).toBe(false);
    await owner.client.close();
    await until(() => processesWith(marker).length === 0, 15_000, `sleep ${marker} to be killed with its connection`);
  });
});

describe('terminal limits and errors', () => {
  it('the virtual executor has no terminals', async () => {
    const refused = await protocolFailure(harness.client.request('terminal/create', { conversationId: conversations.get('scratch') as string, cols: 80, rows: 24 }));
    expect(refused.code).toBe(-32009);
    expect(refused.message).toBe('terminal/create: executor "scratch" (virtual) has no terminals: it runs commands in memory, without a PTY');
  });

  it(`allows ${MAX_TERMINALS_PER_CONNECTION} open terminals per connection; terminal/close reports the kill`, async () => {
    const { client, events } = await secondClient();
    try {
      const conversationId = conversations.get('local') as string;
      const ids: string[] = [];
      for (let index = 0; index < MAX_TERMINALS_PER_CONNECTION; index++) ids.push((await client.request('terminal/create', { conversationId, cols: 80, rows: 24, command: 'sleep 60' })).terminalId);
      const refused = await protocolFailure(client.request('terminal/create', { conversationId, cols: 80, rows: 24 }));
      expect(refused.code).toBe(-32009);
      expect(refused.message).toContain(`the limit is ${MAX_TERMINALS_PER_CONNECTION}`);
      // Another connection has its own allowance.
      const other = await harness.client.request('terminal/create', { conversationId, cols: 80, rows: 24, command: 'true' });
      expect(other.terminalId).toMatch(/^term_/);
      const closed = ids[0] as string;
      await client.request('terminal/close', { terminalId: closed });
      await until(() => outputsOf(events, closed).some((output) => output.exited === true), 15_000, 'the killed terminal to exit');
      expect(outputsOf(events, closed).at(-1)).toMatchObject({ exited: true, exitCode: null, signal: 'SIGHUP' });
      // Its slot is free again.
      expect((await client.request('terminal/create', { conversationId, cols: 80, rows: 24, command: 'true' })).terminalId).toMatch(/^term_/);
    } finally {
      await client.close();
    }
  });

  it('refuses malformed params naming the field', async () => {
    allowInvalidSentMessages();
    const conversationId = conversations.get('local') as string;
    const size = await protocolFailure(harness.client.request('terminal/create', { conversationId, cols: 0, rows: 24 }));
    expect(size.code).toBe(-32602);
    expect(size.message).toContain('terminal/create: params.cols');
    const id = await protocolFailure(harness.client.request('terminal/input', { terminalId: '../x', data: 'x' }));
    expect(id.code).toBe(-32602);
    expect(id.message).toContain('terminal/input: params.terminalId: not a terminal id');
    const unknown = await protocolFailure(harness.client.request('terminal/resize', { terminalId: 'term_nothere', cols: 10, rows: 10 }));
    expect(unknown.code).toBe(-32004);
  });
});

describe('terminal backpressure', () => {
  it.each(PTY_VARIANTS)('on %s, a client that stops reading slows the program down instead of being closed as lagging', async (executor) => {
    const total = 12 * 1024 * 1024;
    const socket = new WebSocket(`${harness.server.url.replace('http', 'ws')}/api/v1/openvaala`, { headers: { authorization: `Bearer ${harness.server.token}` } });
    const messages: { id?: number; method?: string; params?: Output; result?: { terminalId?: string } }[] = [];
    let closeCode: number | undefined;
    socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as (typeof messages)[number]));
    socket.on('close', (code) => (closeCode = code));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const transport = (socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'slow' } } }));
    // The sleep keeps the terminal open while its last output is read: a program that exits
    // right after writing can lose its last few KiB in a local PTY, paused or not.
    const command = `head -c ${total} /dev/zero | tr '\\0' x; sleep 1`;
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'terminal/create', params: { conversationId: conversations.get(executor), cols: 200, rows: 50, command } }));
    await until(() => messages.some((message) => message.id === 2), 15_000, 'terminal/create');
    transport.pause();
    // Unread, the output would pass the 4 MiB send buffer within a second; paused, the program waits.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(processesWith(String(total)).length).toBeGreaterThan(0);
    transport.resume();
    await until(() => messages.some((message) => message.params?.exited === true) || closeCode !== undefined, 30_000, 'the exit');
    expect(closeCode).toBeUndefined();
    const outputs = messages.flatMap((message) => (message.method === 'terminal/output' && message.params ? [message.params] : []));
    expect(outputs.map((output) => output.seq)).toEqual(outputs.map((_, index) => index + 1));
    const text = outputs.map((output) => output.data ?? '').join('');
    expect(text.split('x').length - 1).toBe(total);
    expect(outputs.at(-1)).toMatchObject({ exited: true, exitCode: 0 });
    socket.close();
  }, 60_000);
});
