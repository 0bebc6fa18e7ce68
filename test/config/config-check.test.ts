/**
 * `openvaala config check` as a real process: every problem of every file in one run,
 * references between files, a single file checked against its directory, and the environment
 * variables `storage.yaml` names, checked as `serve` checks them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/environment.js';

let directory: string;
beforeEach(() => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-config-check-'));
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(directory, name), content);
}

const check = (...args: string[]) => runCli(['config', 'check', ...args], { env: process.env, timeoutMs: 20_000 });
const at = (name: string, line: number) => `${path.join(directory, name)}:${line}: `;

const BROKEN = {
  'providers.yaml': 'providers:\n  mock: { kind: openai-compatible }\n  other: { kind: nope }\ndefaultModel: mock/x\n',
  'agents.yaml': [
    'agents:',
    '  default: { default: true, model: nowhere/model, colour: red }',
    '  reviewer:',
    '    maxSteps: 0',
    '    approvals:',
    '      rules:',
    '        - { tool: "mcp__tracker__*", decision: deny }',
    '        - { tool: "mcp__*", decision: ask }',
    '',
  ].join('\n'),
  'executors.yaml': 'executors:\n  box: { kind: ssh, host: h }\n  sandbox: { kind: local, network: true }\n  "bad name": { kind: local }\n',
  'mcp.yaml': 'servers:\n  files: { transport: stdio, command: x, executor: build-box }\n  web: { transport: http }\n',
  'hooks.yaml': 'hooks:\n  pre_tool_use:\n    - { matcher: "mcp__trackr__*", command: "true" }\n  stop:\n    - { matcher: x, command: "" }\n',
};

describe('openvaala config check', () => {
  it('warns, and still passes, when a provider key names a variable unset in this shell and no key is stored', async () => {
    write({ 'providers.yaml': 'providers:\n  remote: { kind: openai, apiKey: env:OPENVAALA_TEST_UNSET_KEY }\ndefaultModel: remote/m\n' });
    const env = { ...process.env, OPENVAALA_TEST_UNSET_KEY: '' };
    const warned = await runCli(['config', 'check', directory], { env, timeoutMs: 20_000 });
    expect(warned.code).toBe(0);
    expect(warned.stdout).toContain(`${directory}: valid`);
    expect(warned.stderr).toContain('warning: providers.yaml: providers.remote.apiKey: the environment variable OPENVAALA_TEST_UNSET_KEY is not set in this shell and no key is stored for "remote"');
    // The command it suggests stores the key where this check looks: the directory checked.
    expect(warned.stderr).toContain(`(openvaala auth set remote --config-dir ${directory})`);
    // The same for the file alone; nothing with the variable set, or with a stored key.
    expect((await runCli(['config', 'check', path.join(directory, 'providers.yaml')], { env, timeoutMs: 20_000 })).stderr).toContain('providers.remote.apiKey');
    expect((await runCli(['config', 'check', directory], { env: { ...env, OPENVAALA_TEST_UNSET_KEY: 'sk-set' }, timeoutMs: 20_000 })).stderr).toBe('');
    writeFileSync(path.join(directory, 'credentials.json'), JSON.stringify({ providers: { remote: { apiKey: 'sk-stored' } } }), { mode: 0o600 });
    expect((await runCli(['config', 'check', directory], { env, timeoutMs: 20_000 })).stderr).toBe('');
    // Stored keys that cannot be read are said too.
    writeFileSync(path.join(directory, 'credentials.json'), '{ not json', { mode: 0o600 });
    const damaged = await runCli(['config', 'check', directory], { env, timeoutMs: 20_000 });
    expect(damaged.code).toBe(0);
    expect(damaged.stderr).toContain('warning: the stored keys cannot be read');
    expect(damaged.stderr).toContain(`store the key again with: openvaala auth set remote --config-dir ${directory}`);
    expect(damaged.stderr).toContain('credentials.json: not valid JSON');
  });

  it('reports every problem of every file, and broken references between files, in one run', async () => {
    write(BROKEN);
    const result = await check(directory);
    expect(result.code).toBe(1);
    const expected = [
      `${at('providers.yaml', 2)}providers.mock.baseURL: required for kind openai-compatible`,
      `${at('providers.yaml', 3)}providers.other.kind:`,
      `${at('agents.yaml', 2)}agents.default.colour: Unrecognized key: "colour"`,
      `${at('agents.yaml', 2)}agents.default.model: names provider "nowhere", which is not defined in providers.yaml (defined: mock, other)`,
      `${at('agents.yaml', 4)}agents.reviewer.maxSteps:`,
      `${at('agents.yaml', 7)}agents.reviewer.approvals.rules[0].tool: the rule for "mcp__tracker__*" names MCP server "tracker", which is not defined in mcp.yaml (defined: files, web), so it never applies`,
      `${at('executors.yaml', 2)}executors.box.user:`,
      `${at('executors.yaml', 2)}executors.box.identityFile: give identityFile, or agent: true`,
      `${at('executors.yaml', 3)}executors.sandbox.network: only applies with sandbox: bwrap`,
      `${at('executors.yaml', 4)}executors["bad name"]: executor names use letters`,
      `${at('mcp.yaml', 2)}servers.files.executor: names executor "build-box", which is not defined in executors.yaml (defined: local, box, sandbox, bad name)`,
      `${at('mcp.yaml', 3)}servers.web.url: required`,
      `${at('hooks.yaml', 3)}hooks.pre_tool_use[0].matcher: the matcher "mcp__trackr__*" names MCP server "trackr"`,
      `${at('hooks.yaml', 5)}hooks.stop[0].matcher: only pre_tool_use and post_tool_use hooks take a matcher`,
      `${at('hooks.yaml', 5)}hooks.stop[0].command: must not be empty`,
    ];
    for (const line of expected) expect(result.stderr).toContain(line);
    expect(result.stderr).toContain(`${expected.length} problems in ${directory}`);
    // The rule for every MCP tool (a wildcard server) names no particular server.
    expect(result.stderr).not.toContain('rules[1].tool');
  });

  it('checks one file, with its references against its directory', async () => {
    write(BROKEN);
    const result = await check(path.join(directory, 'mcp.yaml'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${at('mcp.yaml', 2)}servers.files.executor: names executor "build-box"`);
    expect(result.stderr).toContain(`2 problems in ${path.join(directory, 'mcp.yaml')}`);
    expect(result.stderr).not.toContain('agents.yaml:');
    expect(result.stderr).toMatch(/\d+ problems? in other files of /);
    expect(result.stderr).toContain(`(run openvaala config check --config-dir ${directory} to see them)`);

    write({ 'mcp.yaml': 'servers:\n  files: { transport: stdio, command: x, executor: box }\n' });
    const valid = await check(path.join(directory, 'mcp.yaml'));
    expect(valid.code).toBe(0);
    expect(valid.stdout).toContain(`${path.join(directory, 'mcp.yaml')}: valid (its references checked against ${directory})`);
  });

  it('counts a single problem in words', async () => {
    write({ 'mcp.yaml': 'servers:\n  web: { transport: http }\n' });
    const result = await check(directory);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${at('mcp.yaml', 2)}servers.web.url: required`);
    expect(result.stderr).toContain(`\n1 problem in ${directory}\n`);
  });

  it('says it wants a directory (or one of its files) for anything else', async () => {
    writeFileSync(path.join(directory, 'notes.txt'), 'hello\n');
    const other = await check(path.join(directory, 'notes.txt'));
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('not a configuration file; config check wants the configuration directory, or one of its files (providers.yaml, agents.yaml');
    const missing = await check(path.join(directory, 'nowhere'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist; config check wants the configuration directory');
    mkdirSync(path.join(directory, 'empty'));
    expect((await check(path.join(directory, 'empty'))).code).toBe(0);
  });

  it('refuses the environment variables storage.yaml names when they are unset, in the words serve stops with', async () => {
    write({ 'storage.yaml': 'backend: postgres\npostgres:\n  connectionString: env:OPENVAALA_TEST_CHECK_DATABASE_URL\ncluster:\n  advertiseUrl: http://127.0.0.1:8790\n  secret: env:OPENVAALA_TEST_CHECK_CLUSTER_SECRET\n' });
    const unset = { ...process.env };
    delete unset.OPENVAALA_TEST_CHECK_DATABASE_URL;
    delete unset.OPENVAALA_TEST_CHECK_CLUSTER_SECRET;
    const connectionString = `${at('storage.yaml', 3)}postgres.connectionString: the environment variable OPENVAALA_TEST_CHECK_DATABASE_URL is not set (it must hold the PostgreSQL connection string)`;
    const secret = `${at('storage.yaml', 6)}cluster.secret: the environment variable OPENVAALA_TEST_CHECK_CLUSTER_SECRET is not set (it must hold the secret shared by the servers of the cluster)`;

    const result = await runCli(['config', 'check', directory], { env: unset, timeoutMs: 20_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${connectionString}\n${secret}\n2 problems in ${directory}`);
    const one = await runCli(['config', 'check', path.join(directory, 'storage.yaml')], { env: unset, timeoutMs: 20_000 });
    expect(one.code).toBe(1);
    expect(one.stderr).toContain(connectionString);

    // serve stops on the same problems, before it opens any storage.
    const dataDir = path.join(directory, 'data');
    const serve = await runCli(['serve', '--port', '0', '--config-dir', directory, '--data-dir', dataDir], { env: { ...unset, XDG_STATE_HOME: path.join(directory, 'state') }, timeoutMs: 20_000 });
    expect(serve.code).not.toBe(0);
    expect(serve.stderr).toContain(connectionString);
    expect(serve.stderr).toContain(secret);

    // A variable that holds something the driver cannot read is named too, never its value.
    const wrong = await runCli(['config', 'check', directory], { env: { ...unset, OPENVAALA_TEST_CHECK_DATABASE_URL: 'mysql://app:hunter2@db/openvaala', OPENVAALA_TEST_CHECK_CLUSTER_SECRET: 's3cret' }, timeoutMs: 20_000 });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`${at('storage.yaml', 3)}postgres.connectionString: the environment variable OPENVAALA_TEST_CHECK_DATABASE_URL holds no PostgreSQL connection string (the scheme mysql:)`);
    expect(wrong.stderr).not.toContain('hunter2');
    expect(wrong.stderr).toContain(`\n1 problem in ${directory}\n`);

    const set = await runCli(['config', 'check', directory], { env: { ...unset, OPENVAALA_TEST_CHECK_DATABASE_URL: 'postgres://app:secret@127.0.0.1:5432/openvaala', OPENVAALA_TEST_CHECK_CLUSTER_SECRET: 's3cret' }, timeoutMs: 20_000 });
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
  });

  it('refuses a --config-dir that does not exist, as it does the same path given as the argument', async () => {
    const mistyped = path.join(directory, 'cnofig');
    const result = await check('--config-dir', mistyped);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`--config-dir ${mistyped}: does not exist; give the configuration directory to check`);
    expect(result.stdout).not.toContain('the built-in defaults apply');
  });
});
