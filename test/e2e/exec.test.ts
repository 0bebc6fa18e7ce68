/**
 * `openvaala exec` and `openvaala reindex` as real processes against a real server and the
 * mock provider over HTTP.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { readServerInfo } from '../../src/server/server-info.js';
import { serverInfoFile } from '../../src/config/paths.js';
import { createTestEnvironment, runCli, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;

afterEach(async () => {
  await serve?.stop();
  serve = undefined;
  if (environment) {
    // A server started by exec itself runs detached: stop it by the pid it wrote.
    const info = readServerInfo(serverInfoFile(environment.paths));
    if (info) {
      try {
        process.kill(info.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    await environment.dispose();
  }
  environment = undefined;
});

function sessionLines(dataDir: string, conversationId: string): { seq: number; value: Record<string, unknown> }[] {
  const directory = path.join(dataDir, 'conversations', conversationId);
  const sessionFile = readdirSync(directory).find((name) => name.startsWith('sess_'));
  if (!sessionFile) throw new Error(`no session log in ${directory}`);
  return readFileSync(path.join(directory, sessionFile), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
}

describe('openvaala exec', () => {
  it('starts a server when none runs, streams the answer and tool activity, exits 0', async () => {
    environment = await createTestEnvironment(`
responses:
  - text: "Checking the directory."
    toolCalls:
      - { name: exec_command, arguments: { command: "echo hello-from-exec" } }
  - text: "The command printed hello-from-exec."
`);
    const result = await runCli(['exec', 'say hello'], { env: environment.env, cwd: environment.workDir });
    expect(result.stderr).toContain('turn completed');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Checking the directory.');
    expect(result.stdout).toContain('▸ exec_command echo hello-from-exec');
    expect(result.stdout).toContain('hello-from-exec');
    expect(result.stdout).toContain('The command printed hello-from-exec.');
    const info = readServerInfo(serverInfoFile(environment.paths));
    expect(info?.dataDir).toBe(environment.paths.dataDir);
    // The prompt went to the model: the first request holds it.
    expect(JSON.stringify(environment.mock.requests[0]?.body)).toContain('say hello');
  });

  it('reads the prompt from stdin and prints JSON Lines with --json', async () => {
    environment = await createTestEnvironment(`responses:\n  - text: "json answer"\n`);
    serve = await startServe(environment);
    const result = await runCli(['exec', '--json'], { env: environment.env, cwd: environment.workDir, input: 'prompt on stdin' });
    expect(result.code).toBe(0);
    const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { method: string; params: Record<string, unknown> });
    expect(events.at(-1)?.method).toBe('turn/completed');
    const user = events.find((event) => event.method === 'item/completed' && (event.params.item as { kind: string }).kind === 'user_message');
    expect(JSON.stringify(user)).toContain('prompt on stdin');
  });

  it('exits non-zero with the provider message when the model answers HTTP 500, and records the failed turn', async () => {
    environment = await createTestEnvironment(`
responses:
  - error: { status: 500, message: "the upstream model is on fire", retryAfterSeconds: 0 }
    repeat: 5
`);
    serve = await startServe(environment);
    const result = await runCli(['exec', 'anything'], { env: environment.env, cwd: environment.workDir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the upstream model is on fire');
    expect(result.stderr).toContain('HTTP 500');
    // 1 attempt + 4 retries, then the turn fails.
    expect(environment.mock.requests).toHaveLength(5);
    const client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'check' });
    const [summary] = (await client.request('conversation/list', {})).conversations;
    expect(summary?.lastTurnStatus).toBe('failed');
    const state = await client.request('conversation/get', { conversationId: summary!.id });
    expect(state.turns[0]?.status).toBe('failed');
    expect(state.turns[0]?.error).toContain('the upstream model is on fire');
    await client.close();
    const errorItem = sessionLines(environment.paths.dataDir, summary!.id).find((line) => line.value.kind === 'model_error');
    expect(errorItem?.value).toMatchObject({ httpStatus: 500, message: 'the upstream model is on fire', retries: 4, status: 'failed' });
  });

  it('refuses an empty prompt with a usage error', async () => {
    environment = await createTestEnvironment(`responses: []\n`);
    const result = await runCli(['exec', '   '], { env: environment.env, cwd: environment.workDir });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('give a prompt');
  });
});

describe('openvaala reindex', () => {
  it('is refused while a server runs, and rebuilds the same listing from the logs', async () => {
    environment = await createTestEnvironment(`
responses:
  - text: "first answer"
  - text: "second answer"
`);
    serve = await startServe(environment);
    expect((await runCli(['exec', 'one'], { env: environment.env, cwd: environment.workDir })).code).toBe(0);
    expect((await runCli(['exec', 'two'], { env: environment.env, cwd: environment.workDir })).code).toBe(0);
    const refused = await runCli(['reindex'], { env: environment.env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`pid ${serve.child.pid}`);

    const listBefore = async () => {
      const client = await RuntimeClient.connect({ url: serve!.info.url, token: serve!.info.token, clientName: 'list' });
      const listing = await client.request('conversation/list', {});
      await client.close();
      return listing.conversations;
    };
    const before = await listBefore();
    expect(before).toHaveLength(2);
    await serve.stop();
    serve = undefined;

    rmSync(path.join(environment.paths.dataDir, 'metadata.db'), { force: true });
    for (const suffix of ['-wal', '-shm']) rmSync(path.join(environment.paths.dataDir, `metadata.db${suffix}`), { force: true });
    const rebuilt = await runCli(['reindex'], { env: environment.env });
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stdout).toContain('indexed 2 conversations');

    serve = await startServe(environment);
    expect(await listBefore()).toEqual(before);
    // Reindexing again changes nothing.
    await serve.stop();
    serve = undefined;
    expect((await runCli(['reindex'], { env: environment.env })).stdout).toContain('indexed 2 conversations');
  });
});
