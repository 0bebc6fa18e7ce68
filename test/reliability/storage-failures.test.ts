/**
 * Storage failures during a turn (a full disk: ENOSPC) inside a real in-process server: the
 * turn always ends `failed` with the reason, recorded where the disk allows it; the server
 * stays up and answers; an idle server started with an idle limit still exits; nothing is
 * left as an unhandled rejection (vitest fails the run on one).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, Turn } from '../../src/protocol/index.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import type { LogEntry, LogReadOptions, LogStorage } from '../../src/storage/log-storage.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

/** Decides whether one append fails: gets the path, the stream and the values. */
type FaultRule = (stream: string, values: unknown[]) => boolean;

/** A LogStorage that fails chosen appends with ENOSPC, as a full disk does; everything else goes through. */
class FullDiskLogStorage implements LogStorage {
  rule: FaultRule = () => false;
  failures = 0;

  constructor(private readonly inner: LogStorage) {}

  append<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    if (this.rule(stream, values)) {
      this.failures += 1;
      const error = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      return Promise.reject(error);
    }
    return this.inner.append(path, stream, values);
  }
  read<T = unknown>(path: string, stream: string, options?: LogReadOptions): Promise<LogEntry<T>[]> {
    return this.inner.read<T>(path, stream, options);
  }
  lastSeq(path: string, stream: string): Promise<number> {
    return this.inner.lastSeq(path, stream);
  }
  listStreams(path: string): Promise<string[]> {
    return this.inner.listStreams(path);
  }
  listPaths(path: string): Promise<string[]> {
    return this.inner.listPaths(path);
  }
  replaceStream<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    return this.inner.replaceStream(path, stream, values);
  }
  deleteStream(path: string, stream: string): Promise<void> {
    return this.inner.deleteStream(path, stream);
  }
  deletePath(path: string): Promise<void> {
    return this.inner.deletePath(path);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A metadata append that records a turn in the given status. */
function turnEntry(status: Turn['status']): FaultRule {
  return (stream, values) => stream === 'metadata' && values.some((value) => (value as { type?: string; turn?: Turn }).type === 'turn' && (value as { turn: Turn }).turn.status === status);
}

/** A session-log append of an item of that kind. */
function itemOfKind(kind: string): FaultRule {
  return (stream, values) => stream !== 'metadata' && values.some((value) => (value as { kind?: string }).kind === kind);
}

const SCRIPT = `
responses:
  - toolCalls:
      - { name: exec_command, arguments: { command: "echo working" } }
  - text: "done"
  - text: "second answer"
  - text: "third answer"
`;

let environment: TestEnvironment | undefined;
let server: RunningServer | undefined;
let client: RuntimeClient | undefined;

afterEach(async () => {
  await client?.close().catch(() => undefined);
  await server?.stop();
  await environment?.dispose();
  client = undefined;
  server = undefined;
  environment = undefined;
});

async function start(options: { exitWhenIdleMs?: number } = {}) {
  environment = await createTestEnvironment(SCRIPT);
  const logLines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    }),
  );
  let storage: FullDiskLogStorage | undefined;
  server = await startRuntimeServer({
    paths: environment.paths,
    port: 0,
    logger,
    wrapLogStorage: (inner) => (storage = new FullDiskLogStorage(inner)),
    ...(options.exitWhenIdleMs !== undefined ? { exitWhenIdleMs: options.exitWhenIdleMs } : {}),
  });
  client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'storage-failures' });
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
  await client.request('conversation/subscribe', { conversationId: conversation.id });
  const completed = async (count: number): Promise<Turn[]> => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const turns = events.flatMap((event) => (event.method === 'turn/completed' ? [event.params.turn] : []));
      if (turns.length >= count) return turns;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`only ${events.filter((event) => event.method === 'turn/completed').length} of ${count} turns completed`);
  };
  return { conversationId: conversation.id, storage: storage as FullDiskLogStorage, completed, logLines, client };
}

describe('a storage failure during a turn', () => {
  it('at turn start: the turn ends failed with the reason, the server answers and runs the next turn', async () => {
    const { conversationId, storage, completed, logLines, client } = await start();
    storage.rule = turnEntry('running');
    await client.request('session/input', { conversationId, input: 'go' });
    const [failed] = await completed(1);
    expect(failed?.status).toBe('failed');
    expect(failed?.error).toMatch(/ENOSPC/);
    expect(storage.failures).toBeGreaterThan(0);
    expect(logLines.join('')).toMatch(/turn failed.*|ENOSPC/);

    // The disk has room again: the failure is on record, the session is idle, work goes on.
    storage.rule = () => false;
    const snapshot = await client.request('conversation/get', { conversationId });
    expect(snapshot.sessions[0]?.status).toBe('idle');
    expect(snapshot.turns.find((turn) => turn.id === failed?.id)?.status).toBe('failed');
    await client.request('session/input', { conversationId, input: 'again' });
    const turns = await completed(2);
    expect(turns[1]?.status).toBe('completed');
    const listing = await client.request('conversation/list', {});
    expect(listing.conversations[0]?.lastTurnStatus).toBe('completed');
  });

  it('mid-turn (a tool result cannot be written): the turn ends failed and the failure is recorded', async () => {
    const { conversationId, storage, completed, client } = await start();
    storage.rule = itemOfKind('tool_call');
    await client.request('session/input', { conversationId, input: 'go' });
    const [failed] = await completed(1);
    expect(failed?.status).toBe('failed');
    expect(failed?.error).toMatch(/ENOSPC/);
    expect(failed?.error).toMatch(/tool_call/);
    // Recorded: the metadata log still takes writes, so the listing and a reload show it.
    const listing = await client.request('conversation/list', {});
    expect(listing.conversations[0]?.lastTurnStatus).toBe('failed');
  });

  it('at turn end (the answer cannot be written): the turn ends failed, not running', async () => {
    const { conversationId, storage, completed, client } = await start();
    storage.rule = itemOfKind('assistant_message');
    await client.request('session/input', { conversationId, input: 'go' });
    const [failed] = await completed(1);
    expect(failed?.status).toBe('failed');
    expect(failed?.error).toMatch(/ENOSPC/);
    const snapshot = await client.request('conversation/get', { conversationId });
    expect(snapshot.sessions[0]?.status).toBe('idle');
    expect(snapshot.sessions[0]?.activeTurnId).toBeNull();
  });

  it('when nothing can be written at all, the turn still ends for clients and an idle-limited server exits', async () => {
    // The limit leaves a loaded machine time to connect the test's client before the server, idle, stops.
    const { conversationId, storage, completed, logLines, client: connected } = await start({ exitWhenIdleMs: 1_500 });
    // The first input makes the conversation durable: those writes must succeed for the request.
    await connected.request('session/input', { conversationId, input: 'go' });
    await completed(1);
    storage.rule = () => true;
    await connected.request('session/input', { conversationId, input: 'again' });
    const turns = await completed(2);
    expect(turns[1]?.status).toBe('failed');
    expect(turns[1]?.error).toMatch(/ENOSPC/);
    expect(logLines.join('')).toMatch(/cannot record the end of the turn/);
    // Still up: it answers.
    expect((await connected.request('conversation/get', { conversationId })).sessions[0]?.status).toBe('idle');
    await connected.close();
    client = undefined;
    const exited = await Promise.race([server?.stopped.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 10_000))]);
    expect(exited).toBe(true);
  });
});
