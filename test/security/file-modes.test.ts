/**
 * What OpenVaala keeps on disk is its owner's only: with a permissive umask (022), a real
 * `openvaala serve` creates its data, state and configuration directories 0700 and its files
 * (logs, index with its WAL, lock, server files, configuration written by config/update)
 * 0600, and tightens directories and files it owns that an older version or the user left
 * open, logging each change.
 */
import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
let client: RuntimeClient | undefined;
let savedUmask: number;

beforeEach(() => {
  // The usual desktop umask: without explicit modes, files would come out 0644 and directories 0755.
  savedUmask = process.umask(0o022);
});
afterEach(async () => {
  await client?.close().catch(() => undefined);
  await serve?.stop();
  await environment?.dispose();
  process.umask(savedUmask);
  client = undefined;
  serve = undefined;
  environment = undefined;
});

function modeOf(file: string): string {
  return `0${(statSync(file).mode & 0o777).toString(8)}`;
}

/** Every file and directory below `root` (root included) with its mode. */
function modesBelow(root: string): Map<string, string> {
  const modes = new Map<string, string>([[root, modeOf(root)]]);
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name);
    modes.set(file, modeOf(file));
  }
  return modes;
}

const SCRIPT = `
responses:
  - text: "hello"
`;

describe('file modes', () => {
  it('everything a server creates is 0700 (directories) or 0600 (files)', async () => {
    environment = await createTestEnvironment(SCRIPT);
    const { paths } = environment;
    serve = await startServe(environment);
    client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'modes' });
    const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
    const done = new Promise<void>((resolve) => client?.onNotification((event) => event.method === 'turn/completed' && resolve()));
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: 'hi' });
    await done;
    await client.request('config/update', { changes: [{ file: 'server', path: ['allowedOrigins'], value: ['http://127.0.0.1:9999'] }] });

    const created = [...modesBelow(paths.dataDir), ...modesBelow(paths.stateDir), [path.join(paths.configDir, 'server.yaml'), modeOf(path.join(paths.configDir, 'server.yaml'))] as const];
    const names = created.map(([file]) => path.relative(environment?.root ?? '', file));
    // The files the issue names are all there, so the check below covers them.
    for (const expected of ['metadata.db', 'metadata.db-wal', 'runtime.lock', 'runtime-server.yaml', 'metadata.jsonl']) {
      expect(names.some((name) => path.basename(name) === expected)).toBe(true);
    }
    const wrong = created.filter(([file, mode]) => mode !== (statSync(file).isDirectory() ? '0700' : '0600'));
    expect(wrong).toEqual([]);
    expect(modeOf(paths.configDir)).toBe('0700');
  });

  it('tightens directories and files it owns that were left open, with a log line each', async () => {
    environment = await createTestEnvironment(SCRIPT);
    const { paths } = environment;
    mkdirSync(path.join(paths.dataDir, 'conversations'), { recursive: true });
    chmodSync(paths.dataDir, 0o755);
    chmodSync(path.join(paths.dataDir, 'conversations'), 0o777);
    chmodSync(paths.configDir, 0o755);
    mkdirSync(paths.stateDir, { recursive: true, mode: 0o755 });
    chmodSync(paths.stateDir, 0o755);
    writeFileSync(path.join(paths.dataDir, 'stray-index-copy'), 'x', { mode: 0o644 });
    serve = await startServe(environment);
    expect(modeOf(paths.dataDir)).toBe('0700');
    expect(modeOf(path.join(paths.dataDir, 'conversations'))).toBe('0700');
    expect(modeOf(paths.configDir)).toBe('0700');
    expect(modeOf(paths.stateDir)).toBe('0700');
    expect(modeOf(path.join(paths.dataDir, 'stray-index-copy'))).toBe('0600');
    const lines = serve
      .output()
      .split('\n')
      .filter((line) => line.includes('permissions were open to other users: tightened'));
    expect(lines.map((line) => (JSON.parse(line) as { path: string; from: string }).from).sort()).toEqual(['0644', '0755', '0755', '0755', '0777']);
  });
});
