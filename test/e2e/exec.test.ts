/**
 * `openvaala exec` and `openvaala reindex` as real processes against a real server and the
 * mock provider over HTTP.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { readServerInfo } from '../../src/server/server-info.js';
import { serverInfoFile } from '../../src/config/paths.js';
import { createTestEnvironment, runCli, spawnCli, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';

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

  it('on a first run, with no configuration directory at all, starts a server, says what to configure, and reads it once written', async () => {
    environment = await createTestEnvironment(`responses:\n  - text: "configured at last"\n`);
    const providers = readFileSync(path.join(environment.paths.configDir, 'providers.yaml'), 'utf8');
    rmSync(path.dirname(environment.paths.configDir), { recursive: true, force: true });
    const result = await runCli(['exec', 'hi'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    // The server came up (it is the one that answers) and names the file to create.
    expect(readServerInfo(serverInfoFile(environment.paths))?.configDir).toBe(environment.paths.configDir);
    expect(result.stderr).not.toContain('did not start');
    expect(result.stderr).toContain(`${path.join(environment.paths.configDir, 'providers.yaml')} does not exist`);
    expect(result.code).toBe(64);
    // The server made the default directory and watches it: the file written now is used without a restart.
    expect(existsSync(environment.paths.configDir)).toBe(true);
    writeFileSync(path.join(environment.paths.configDir, 'providers.yaml'), providers);
    let again = await runCli(['exec', 'hi again'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    for (let attempt = 0; again.code !== 0 && attempt < 20; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      again = await runCli(['exec', 'hi again'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    }
    expect(again.stderr).toContain('turn completed');
    expect(again.stdout).toContain('configured at last');
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
    expect(result.stderr).toContain('error: model mock/mock-model (HTTP 500): the upstream model is on fire');
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
    expect(errorItem?.value).toMatchObject({ httpStatus: 500, message: 'the upstream model is on fire; gave up after 5 attempts', retries: 4, status: 'failed' });
  });

  it('exits non-zero when the server stops in the middle of the turn', async () => {
    environment = await createTestEnvironment(`
responses:
  - deltas: ["one ", "two ", "three ", "four ", "five "]
    holds: [{ afterDeltas: 1, gate: never-opened }]
`);
    serve = await startServe(environment);
    const running = spawnCli(['exec', 'count slowly'], { env: environment.env, cwd: environment.workDir });
    // The answer holds after its first word, so the server stops while exec follows the turn.
    await until(() => running.stdout().includes('one'), 30_000, 'exec to show the first word');
    await serve.stop();
    serve = undefined;
    const result = await running.done;
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('turn interrupted');
  });

  it('denies a call that needs approval when it has no terminal to ask on, and says so', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch made.txt" } }]
  - text: "could not"
`);
    writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  careful: { default: true, approvals: { default: ask } }\n');
    serve = await startServe(environment);
    const result = await runCli(['exec', 'make a file'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('approval needed for exec_command');
    expect(existsSync(path.join(environment.workDir, 'made.txt'))).toBe(false);
    // The model is told no person was asked, and the stored decision says so too.
    const toModel = JSON.stringify(environment.mock.requests[1]?.body);
    expect(toModel).toContain('openvaala-exec denied this call without asking the user: it needs approval and this run of openvaala exec has no terminal to ask on');
    expect(toModel).not.toContain('the user denied');
    const shown = await runCli(['conversations', 'show', 'last'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    expect(shown.stdout).toMatch(/approval: deny by client:openvaala-exec \(automatic, no one was asked\)/);
  });

  it("decides the calls that need approval as --approvals says, without asking, and keeps the policy's denials", async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch made.txt" } }, { name: exec_command, arguments: { command: "touch pushed.txt" } }]
  - text: "made"
  - toolCalls: [{ name: exec_command, arguments: { command: "touch again.txt" } }]
  - text: "refused"
`);
    writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  careful: { default: true, approvals: { default: ask, rules: [{ tool: exec_command, match: { command: "touch pushed*" }, decision: deny }] } }\n');
    serve = await startServe(environment);
    const allowed = await runCli(['exec', '--approvals', 'allow', 'make files'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toContain('allowed by --approvals allow: exec_command');
    expect(existsSync(path.join(environment.workDir, 'made.txt'))).toBe(true);
    // A call the policy denies is not one that asks: --approvals does not reach it.
    expect(existsSync(path.join(environment.workDir, 'pushed.txt'))).toBe(false);
    const shown = await runCli(['conversations', 'show', 'last'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    expect(shown.stdout).toMatch(/approval: allow_once by client:openvaala-exec \(automatic, no one was asked\)/);

    const denied = await runCli(['exec', '--resume', 'last', '--approvals', 'deny', 'again'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    expect(denied.code).toBe(0);
    expect(denied.stderr).toContain('denied by --approvals deny: exec_command');
    expect(existsSync(path.join(environment.workDir, 'again.txt'))).toBe(false);
    expect(JSON.stringify(environment.mock.requests[3]?.body)).toContain('openvaala-exec denied this call without asking the user: --approvals deny');

    const wrong = await runCli(['exec', '--approvals', 'yes', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(wrong.code).toBe(64);
    expect(wrong.stderr).toContain("option '--approvals <decision>' argument 'yes' is invalid. Allowed choices are ask, allow, deny.");
  });

  it('warns on stderr when an MCP server of the configuration could not be started, and the turn goes on', async () => {
    environment = await createTestEnvironment(`
responses:
  - text: "answered without it"
`);
    writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), 'servers:\n  broken: { transport: stdio, command: no-such-mcp-server-for-this-test, startupTimeoutMs: 5000 }\n');
    serve = await startServe(environment);
    const result = await runCli(['exec', 'hello'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('answered without it');
    expect(result.stderr).toContain('warning: MCP server "broken" could not be started: command "no-such-mcp-server-for-this-test" was not found; its tools are not offered this turn (it is tried again at the next one)');
  });

  it("warns on stderr when a skill of the work location is invalid and left out of the turn", async () => {
    environment = await createTestEnvironment(`
responses:
  - text: "answered without the skill"
`);
    const skillFile = path.join(environment.workDir, '.agents', 'skills', 'release', 'SKILL.md');
    mkdirSync(path.dirname(skillFile), { recursive: true });
    writeFileSync(skillFile, '---\nname: release\n---\nsteps\n');
    serve = await startServe(environment);
    const result = await runCli(['exec', 'hello'], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('answered without the skill');
    expect(result.stderr).toMatch(new RegExp(`warning: skill skipped: ${skillFile.replace(/[.]/g, '\\.')}(:\\d+)?: description: `));
  });

  it('refuses usage mistakes with exit code 64 before starting anything', async () => {
    environment = await createTestEnvironment(`responses: []\n`);
    const missing = await runCli(['exec', '--cwd', path.join(environment.root, 'nowhere'), 'hi'], { env: environment.env });
    expect(missing.code).toBe(64);
    expect(missing.stderr).toContain(`--cwd ${path.join(environment.root, 'nowhere')} does not exist on executor "local"`);
    expect((await runCli(['exec', '--bogus', 'hi'], { env: environment.env })).code).toBe(64);
    expect((await runCli(['frobnicate'], { env: environment.env })).code).toBe(64);
    expect((await runCli(['serve', '--port', '99999'], { env: environment.env })).stderr).toContain('--port must be an integer from 0 to 65535');
    expect(readServerInfo(serverInfoFile(environment.paths))).toBeUndefined();
  });

  it('finds the servers of two data dirs that share one state dir', async () => {
    environment = await createTestEnvironment(`responses:\n  - text: "from the first"\n  - text: "from the second"\n`);
    serve = await startServe(environment);
    const otherDataDir = path.join(environment.root, 'other-data');
    const other = await runCli(['exec', '--data-dir', otherDataDir, 'second'], { env: environment.env, cwd: environment.workDir });
    expect(other.code).toBe(0);
    const first = await runCli(['exec', 'first'], { env: environment.env, cwd: environment.workDir });
    expect(first.stderr).toContain('turn completed');
    expect(first.code).toBe(0);
    const otherInfo = readServerInfo(path.join(otherDataDir, 'runtime-server.yaml'));
    if (otherInfo) process.kill(otherInfo.pid, 'SIGTERM');
  });

  it('refuses an empty prompt with a usage error', async () => {
    environment = await createTestEnvironment(`responses: []\n`);
    const blank = await runCli(['exec', '   '], { env: environment.env, cwd: environment.workDir });
    expect(blank.code).toBe(64);
    expect(blank.stderr).toContain('<prompt> must not be empty');
    const none = await runCli(['exec'], { env: environment.env, cwd: environment.workDir, input: '' });
    expect(none.code).toBe(64);
    expect(none.stderr).toContain('give a prompt as an argument or on stdin');
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
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('stop it first (openvaala server stop), then run reindex again');
    const elsewhere = await runCli(['reindex', '--data-dir', environment.paths.dataDir], { env: environment.env });
    expect(elsewhere.stderr).toContain(`stop it first (openvaala server stop --data-dir '${environment.paths.dataDir}'), then run reindex again`);

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

    // A metadata.db that is no database, then one that is a directory: moved aside, rebuilt, said.
    const index = path.join(environment.paths.dataDir, 'metadata.db');
    writeFileSync(index, Buffer.alloc(8192, 0x5a));
    const fromGarbage = await runCli(['reindex'], { env: environment.env });
    expect(fromGarbage.code).toBe(0);
    expect(fromGarbage.stdout).toMatch(/^metadata\.db could not be opened \(.+\): moved to metadata\.db\.damaged; a new one was built\nindexed 2 conversations/);
    expect(readFileSync(path.join(environment.paths.dataDir, 'metadata.db.damaged')).equals(Buffer.alloc(8192, 0x5a))).toBe(true);
    rmSync(index);
    rmSync(path.join(environment.paths.dataDir, 'metadata.db.damaged'));
    mkdirSync(index);
    const fromDirectory = await runCli(['reindex'], { env: environment.env });
    expect(fromDirectory.code).toBe(0);
    expect(fromDirectory.stdout).toContain('moved to metadata.db.damaged; a new one was built');
    expect(existsSync(path.join(environment.paths.dataDir, 'metadata.db.open'))).toBe(false);
    serve = await startServe(environment);
    expect(await listBefore()).toEqual(before);
  });
});
