/**
 * `openvaala auth`, `server`, `conversations` and `exec --resume` as real processes against
 * servers they start themselves and the mock provider over HTTP; the first-contact path of the
 * README, as a user with only an API key would follow it.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn as spawnPty } from 'node-pty';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readServerInfo } from '../../src/server/server-info.js';
import { serverInfoFile } from '../../src/config/paths.js';
import { createTestEnvironment, runCli, startServe, stopBackgroundServer, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { processGone, until } from '../helpers/processes.js';
import { CLI_EXECUTABLE } from '../../src/package-info.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;

afterEach(async () => {
  await serve?.stop();
  serve = undefined;
  if (environment) {
    await stopBackgroundServer(environment);
    await environment.dispose();
  }
  environment = undefined;
});

/** providers.yaml of a user who configured only the openai provider, here pointed at the mock, with no key in it. */
const openaiWithoutKey = (baseURL: string) => `providers:\n  openai: { kind: openai, baseURL: ${baseURL} }\ndefaultModel: openai/mock-model\n`;

function authorizationOf(request: { headers: Record<string, unknown> } | undefined): unknown {
  return request?.headers.authorization;
}

describe('first contact, as the README tells it', { timeout: 120_000 }, () => {
  it('auth set, exec, exec --resume last, conversations, server stop', async () => {
    environment = await createTestEnvironment(
      `
responses:
  - text: "First answer."
  - text: "Second answer."
`,
      openaiWithoutKey,
    );
    const env = { ...environment.env, OPENAI_API_KEY: '' };
    const options = { env, cwd: environment.workDir };

    const auth = await runCli(['auth', 'set', 'openai'], { ...options, input: 'sk-first-contact\n' });
    expect(auth.code).toBe(0);
    const credentials = path.join(environment.paths.configDir, 'credentials.json');
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
    expect(auth.stdout + auth.stderr).not.toContain('sk-first-contact');

    const first = await runCli(['exec', 'Why does the build fail?'], options);
    expect(first.stderr).toContain('turn completed');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('First answer.');
    expect(authorizationOf(environment.mock.requests[0])).toBe('Bearer sk-first-contact');

    const resumed = await runCli(['exec', '--resume', 'last', 'And now?'], options);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Second answer.');
    // The stored history is not printed again, and the model was sent it.
    expect(resumed.stdout).not.toContain('First answer.');
    const secondRequest = JSON.stringify(environment.mock.requests[1]?.body);
    expect(secondRequest).toContain('Why does the build fail?');
    expect(secondRequest).toContain('And now?');

    const listing = await runCli(['conversations'], options);
    expect(listing.code).toBe(0);
    const rows = listing.stdout.trim().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain('completed');
    expect(rows[1]).toContain(environment.workDir);

    const pid = readServerInfo(serverInfoFile(environment.paths))?.pid;
    expect(pid).toBeDefined();
    const stopped = await runCli(['server', 'stop'], options);
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain(`stopped the runtime server (pid ${pid})`);
    expect(processGone(pid!)).toBe(true);
  });
});

describe('openvaala auth', { timeout: 120_000 }, () => {
  it('tells exec the stored keys are damaged, naming the file and what is wrong, not an internal error', async () => {
    environment = await createTestEnvironment('responses:\n  - text: "never sent"\n', openaiWithoutKey);
    const env = { ...environment.env, OPENAI_API_KEY: '' };
    const credentials = path.join(environment.paths.configDir, 'credentials.json');
    for (const [content, problem] of [
      ['PK\u0003\u0004 not json', 'not valid JSON'],
      ['{"providers":{"openai":{"apiKey":5}}}', 'providers.openai.apiKey: Invalid input: expected string, received number'],
    ] as const) {
      writeFileSync(credentials, content, { mode: 0o600 });
      const result = await runCli(['exec', 'hi'], { env, cwd: environment.workDir });
      expect(result.code, result.stderr).not.toBe(0);
      expect(result.stderr).toContain('the API key of provider "openai" cannot be looked up: the stored keys (credentials.json');
      expect(result.stderr).toContain(problem);
      expect(result.stderr).toContain('openvaala auth set openai');
      expect(result.stderr).not.toContain('internal error');
    }
    expect(environment.mock.requests).toHaveLength(0);
  });

  it('adds a well-known provider to an empty configuration, and refuses an empty key', async () => {
    environment = await createTestEnvironment('responses: []\n');
    rmSync(path.join(environment.paths.configDir, 'providers.yaml'));
    const added = await runCli(['auth', 'set', 'anthropic'], { env: environment.env, input: 'sk-ant-123' });
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('added provider "anthropic"');
    const check = await runCli(['config', 'check'], { env: environment.env });
    expect(check.stdout).toContain('providers: anthropic; default model: anthropic/');
    expect((await runCli(['auth', 'list'], { env: environment.env })).stdout).toBe('anthropic\n');
    const empty = await runCli(['auth', 'set', 'openai'], { env: environment.env, input: '\n' });
    expect(empty.code).toBe(64);
    expect(empty.stderr).toContain('no key given');
  });

  it('reads the key at a terminal prompt without showing it', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const terminal = spawnPty(process.execPath, [CLI_EXECUTABLE, 'auth', 'set', 'openai'], { env: environment.env as Record<string, string>, cols: 120, rows: 20 });
    let screen = '';
    terminal.onData((data) => (screen += data));
    const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
    await until(() => screen.includes('(not shown)'), 20_000, 'the key prompt');
    terminal.write('sk-typed-secrex\u007ft\r');
    expect(await exited).toBe(0);
    expect(screen).not.toContain('sk-typed');
    expect(readFileSync(path.join(environment.paths.configDir, 'credentials.json'), 'utf8')).toContain('"apiKey": "sk-typed-secret"');
  });

  it('a key stored while the server runs is used from the next turn, without a restart', async () => {
    environment = await createTestEnvironment(
      `
responses:
  - text: "with the stored key"
`,
      (baseURL) => `providers:\n  openai: { kind: openai, baseURL: ${baseURL}, apiKey: env:OV_TEST_MISSING_KEY }\ndefaultModel: openai/mock-model\n`,
    );
    serve = await startServe(environment);
    const without = await runCli(['exec', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(without.code).not.toBe(0);
    expect(without.stderr).toContain('OV_TEST_MISSING_KEY is not set');
    expect(without.stderr).toContain('openvaala auth set openai');
    expect((await runCli(['auth', 'set', 'openai'], { env: environment.env, input: 'sk-stored' })).code).toBe(0);
    const withKey = await runCli(['exec', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(withKey.code).toBe(0);
    expect(authorizationOf(environment.mock.requests[0])).toBe('Bearer sk-stored');
  });
});

describe('a server started with another environment or configuration', { timeout: 120_000 }, () => {
  it('exec says the running server lacks a key this shell has, and server restart fixes it', async () => {
    environment = await createTestEnvironment(
      `
responses:
  - text: "now it works"
`,
      (baseURL) => `providers:\n  openai: { kind: openai, baseURL: ${baseURL}, apiKey: env:OV_TEST_KEY }\ndefaultModel: openai/mock-model\n`,
    );
    // The first exec starts the server in the background, without the key.
    const first = await runCli(['exec', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(first.code).toBe(1);
    const withKey = { ...environment.env, OV_TEST_KEY: 'sk-exported-later' };
    const second = await runCli(['exec', 'hi'], { env: withKey, cwd: environment.workDir });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('does not have OV_TEST_KEY');
    // The server's start in the one notation of every command, whatever the locale.
    expect(second.stderr).toMatch(/started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\) does not have/);
    expect(second.stderr).toContain('openvaala server restart');
    expect(environment.mock.requests).toHaveLength(0);

    const before = readServerInfo(serverInfoFile(environment.paths))?.pid;
    const restarted = await runCli(['server', 'restart'], { env: withKey });
    expect(restarted.code).toBe(0);
    const after = readServerInfo(serverInfoFile(environment.paths))?.pid;
    expect(after).not.toBe(before);
    const third = await runCli(['exec', 'hi'], { env: withKey, cwd: environment.workDir });
    expect(third.code).toBe(0);
    expect(authorizationOf(environment.mock.requests[0])).toBe('Bearer sk-exported-later');
  });

  it('the commands it prints name the server\'s directories when they are not the defaults, and work as printed', async () => {
    environment = await createTestEnvironment(
      `
responses:
  - text: "now it works"
`,
      (baseURL) => `providers:\n  openai: { kind: openai, baseURL: ${baseURL}, apiKey: env:OV_TEST_KEY }\ndefaultModel: openai/mock-model\n`,
    );
    const otherConfig = path.join(environment.root, 'other-config');
    const otherData = path.join(environment.root, 'other-data');
    mkdirSync(otherConfig);
    writeFileSync(path.join(otherConfig, 'providers.yaml'), readFileSync(path.join(environment.paths.configDir, 'providers.yaml')));
    const directories = ['--data-dir', otherData, '--config-dir', otherConfig];
    try {
      // The first exec starts that server in the background, without the key.
      expect((await runCli(['exec', ...directories, 'hi'], { env: environment.env, cwd: environment.workDir })).code).toBe(1);
      const withKey = { ...environment.env, OV_TEST_KEY: 'sk-exported-later' };
      const second = await runCli(['exec', ...directories, 'hi'], { env: withKey, cwd: environment.workDir });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`openvaala server restart --data-dir ${otherData} --config-dir ${otherConfig}`);
      expect(second.stderr).toContain(`openvaala auth set openai --config-dir ${otherConfig}`);
      // Run as printed, it restarts that server, with the key.
      const printed = /Restart it with this environment: openvaala (server restart [^(]*?) \(/.exec(second.stderr)?.[1];
      expect(printed).toBeDefined();
      expect((await runCli(printed!.split(' '), { env: withKey })).code).toBe(0);
      const third = await runCli(['exec', ...directories, 'hi'], { env: withKey, cwd: environment.workDir });
      expect(third.code).toBe(0);
      expect(third.stderr).not.toContain('continue it with');
      // A command given only the data directory finds the server started with the other
      // configuration directory, and the command it prints names that one.
      const shown = await runCli(['conversations', 'show', 'last', '--data-dir', otherData], { env: withKey });
      expect(shown.code).toBe(0);
      expect(shown.stderr).toMatch(new RegExp(`continue it with: openvaala exec --data-dir ${otherData} --config-dir ${otherConfig} --resume conv_\\w+ "…"`));
    } finally {
      await runCli(['server', 'stop', '--data-dir', otherData], { env: environment.env });
    }
  });

  it('exec --config-dir never uses a server running with another configuration directory', async () => {
    environment = await createTestEnvironment(`responses:\n  - text: "wrong server"\n`);
    serve = await startServe(environment);
    const otherConfig = path.join(environment.root, 'other-config');
    mkdirSync(otherConfig);
    const result = await runCli(['exec', '--config-dir', otherConfig, 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`uses configuration directory ${environment.paths.configDir}, not ${otherConfig}`);
    expect(environment.mock.requests).toHaveLength(0);
    // The same directory given explicitly is fine.
    expect((await runCli(['exec', '--config-dir', environment.paths.configDir, 'hi'], { env: environment.env, cwd: environment.workDir })).code).toBe(0);
  });
});

describe('openvaala server', { timeout: 120_000 }, () => {
  it('status says whether a server runs and with which directories; stop and restart act on it', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const none = await runCli(['server', 'status'], { env: environment.env });
    expect(none.code).toBe(3);
    expect(none.stdout).toContain('no runtime server runs');
    expect((await runCli(['server', 'stop'], { env: environment.env })).code).toBe(0);

    const restarted = await runCli(['server', 'restart'], { env: environment.env });
    expect(restarted.code).toBe(0);
    const info = readServerInfo(serverInfoFile(environment.paths));
    const status = await runCli(['server', 'status'], { env: environment.env });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`pid ${info?.pid}`);
    expect(status.stdout).toContain(environment.paths.configDir);
    expect(status.stdout).toContain(environment.paths.dataDir);
    expect(status.stdout).toContain('work running:            no');
    expect(status.stdout).toMatch(/started: {17}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(\d+ s ago\)/);
    expect((await runCli(['server', 'stop'], { env: environment.env })).code).toBe(0);
    expect(processGone(info!.pid)).toBe(true);
  });

  it('restart checks the configuration first: with a mistake, the running server is left running', async () => {
    environment = await createTestEnvironment('responses: []\n');
    expect((await runCli(['server', 'restart'], { env: environment.env })).code).toBe(0);
    const info = readServerInfo(serverInfoFile(environment.paths));
    writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  default: { maxSteps: 0 }\n');
    const refused = await runCli(['server', 'restart'], { env: environment.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${path.join(environment.paths.configDir, 'agents.yaml')}:2: agents.default.maxSteps`);
    expect(refused.stderr).toContain(`not restarted: a new server would refuse this configuration; the running one (pid ${info?.pid}) keeps the configuration it loaded last`);
    expect(processGone(info!.pid)).toBe(false);
    expect((await runCli(['server', 'stop'], { env: environment.env })).code).toBe(0);
  });
});

describe('openvaala conversations', { timeout: 120_000 }, () => {
  it('lists, searches and shows conversations; exec --resume refuses an unknown id', async () => {
    environment = await createTestEnvironment(`
responses:
  - text: "The parser is fixed."
  - toolCalls: [{ name: exec_command, arguments: { command: "echo from-the-tool" } }]
  - text: "The docs are updated."
`);
    serve = await startServe(environment);
    const options = { env: environment.env, cwd: environment.workDir };
    expect((await runCli(['exec', 'fix the parser'], options)).code).toBe(0);
    expect((await runCli(['exec', 'update the documentation'], options)).code).toBe(0);
    const listed = await runCli(['conversations', 'list', '--json'], options);
    const conversations = JSON.parse(listed.stdout) as { id: string; title: string }[];
    expect(conversations).toHaveLength(2);
    // Each conversation is titled by its first prompt, not by its directory.
    expect(conversations.map((conversation) => conversation.title)).toEqual(['update the documentation', 'fix the parser']);

    const found = await runCli(['conversations', 'search', 'parser'], options);
    expect(found.code).toBe(0);
    expect(found.stdout).toContain(conversations[1]!.id);
    expect(found.stdout).not.toContain(conversations[0]!.id);
    // A query the search cannot read is said without the protocol's method and key path.
    const broken = await runCli(['conversations', 'search', 'parser AND'], options);
    expect(broken.code).toBe(64);
    expect(broken.stderr).toContain('the query is not valid at its end');
    expect(broken.stderr).not.toMatch(/conversation\/list|params\./);
    const nothing = await runCli(['conversations', '--query', 'zebra'], options);
    expect(nothing.stderr).toContain('no conversation matches');
    // An empty query is a mistake, as one of spaces is, not a request for everything.
    for (const [args, said] of [
      [['conversations', 'search', ''], '<query> must not be empty'],
      [['conversations', '--query', ''], '--query must not be empty'],
    ] as const) {
      const empty = await runCli([...args], options);
      expect(empty.code, args.join(' ')).toBe(64);
      expect(empty.stderr, args.join(' ')).toContain(said);
    }

    const shown = await runCli(['conversations', 'show', 'last'], options);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('› update the documentation');
    expect(shown.stdout).toContain(' · 1 turn · ');
    // The call reads as exec shows it live: the command, not its JSON arguments.
    expect(shown.stdout).toContain('▸ exec_command echo from-the-tool\n');
    expect(shown.stdout).toContain('from-the-tool');
    expect(shown.stdout).toContain('The docs are updated.');
    expect(shown.stderr).toContain(`openvaala exec --resume ${conversations[0]!.id}`);

    const unknown = await runCli(['exec', '--resume', 'conv_nope', 'hi'], options);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('there is no conversation "conv_nope"');
    const missing = await runCli(['conversations', 'show', 'conv_nope'], options);
    expect(missing.code).toBe(64);
  });

  it('exec --resume ID continues that conversation, not the latest', async () => {
    environment = await createTestEnvironment(`
responses:
  - text: "one"
  - text: "two"
  - text: "three"
`);
    serve = await startServe(environment);
    const options = { env: environment.env, cwd: environment.workDir };
    const first = await runCli(['exec', 'alpha task'], options);
    const firstId = /conversation (conv_\w+)/.exec(first.stderr)?.[1];
    expect(firstId).toBeDefined();
    expect((await runCli(['exec', 'beta task'], options)).code).toBe(0);
    const resumed = await runCli(['exec', '--resume', firstId!, 'alpha again'], options);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`conversation ${firstId}`);
    const third = JSON.stringify(environment.mock.requests[2]?.body);
    expect(third).toContain('alpha task');
    expect(third).not.toContain('beta task');
  });

  it('warns when the working directory of the conversation it resumes is gone from this machine', async () => {
    environment = await createTestEnvironment('responses:\n  - text: "one"\n  - text: "two"\n');
    serve = await startServe(environment);
    const project = path.join(environment.root, 'gone-soon');
    mkdirSync(project);
    const options = { env: environment.env, cwd: project };
    expect((await runCli(['exec', 'first'], options)).code).toBe(0);
    rmSync(project, { recursive: true });
    const resumed = await runCli(['exec', '--resume', 'last', 'again'], { env: environment.env, cwd: environment.workDir });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`warning: the conversation's working directory ${project} is not a directory on this machine any more`);
  });
});

describe('exec --cwd on another executor', { timeout: 120_000 }, () => {
  it('is refused before any turn, naming the executor and the path', async () => {
    environment = await createTestEnvironment(`responses:\n  - text: "should not run"\n`);
    writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  sandbox:\n    kind: virtual\n');
    serve = await startServe(environment);
    const result = await runCli(['exec', '--executor', 'sandbox', '--cwd', '/no/such/dir', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('cwd /no/such/dir does not exist on executor "sandbox"');
    expect(environment.mock.requests).toHaveLength(0);
  });
});
