/**
 * Bad input in the configuration directory, of kinds users meet: each is refused when
 * the directory is loaded (so `config check`, a start and a reload agree), naming the file, the
 * line and the key path, and never hangs or crashes the loader.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ConfigurationError, loadConfiguration } from '../../src/config/configuration.js';
import { createLogger } from '../../src/logger.js';
import { tightenPermissions } from '../../src/server/private-files.js';

let directory: string;
beforeEach(() => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-config-bad-'));
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

const PROVIDERS = 'providers:\n  mock: { kind: openai-compatible, baseURL: "http://127.0.0.1:9/v1" }\ndefaultModel: mock/m\n';

/** Writes the files (providers.yaml valid unless given) and returns the load's error message, or '' when it loads. */
async function problems(files: Record<string, string>, environment: NodeJS.ProcessEnv = {}): Promise<string> {
  for (const [name, content] of Object.entries({ 'providers.yaml': PROVIDERS, ...files })) writeFileSync(path.join(directory, name), content);
  try {
    await loadConfiguration(directory, { environment });
    return '';
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as Error).message;
  }
}
const at = (name: string, line: number) => `${path.join(directory, name)}:${line}: `;

it('names a configuration directory that is a file, and leaves the file as it was', async () => {
  const file = path.join(directory, 'not-a-directory');
  writeFileSync(file, 'hi\n', { mode: 0o644 });
  chmodSync(file, 0o644);
  await expect(loadConfiguration(file)).rejects.toThrow(`${file}: (root): the configuration directory is not a directory`);
  // The start's permission tightening must not turn a mistaken --config-dir file into 0700.
  const logger = createLogger('silent');
  tightenPermissions({ configDir: file, dataDir: path.join(directory, 'data'), stateDir: path.join(directory, 'state') }, logger);
  expect(statSync(file).mode & 0o777).toBe(0o644);
});

it('refuses aliases that expand without bound, and a second document, naming the file', async () => {
  const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  for (const [index, name] of ['b', 'c', 'd', 'e', 'f'].entries()) levels.push(`${name}: &${name} [${Array(9).fill(`*${'abcdef'[index]}`).join(',')}]`);
  const bomb = await problems({ 'agents.yaml': `${levels.join('\n')}\nagents: { default: {} }\n` });
  expect(bomb).toContain(`${path.join(directory, 'agents.yaml')}: (YAML): its aliases (*name) expand to too many nodes`);
  const twoDocuments = await problems({ 'agents.yaml': 'agents: { default: {} }\n---\nagents: { other: {} }\n' });
  expect(twoDocuments).toMatch(new RegExp(`agents\\.yaml:\\d+: \\(YAML syntax\\): the file holds more than one YAML document`));
});

it('refuses entries that are not regular files without reading them (a FIFO would block)', async () => {
  execFileSync('mkfifo', [path.join(directory, 'agents.yaml')]);
  mkdirSync(path.join(directory, 'hooks.yaml'));
  symlinkSync(path.join(directory, 'gone.yaml'), path.join(directory, 'mcp.yaml'));
  const message = await problems({});
  expect(message).toContain(`${path.join(directory, 'agents.yaml')}: (root): cannot read: it is a named pipe (FIFO), not a regular file`);
  expect(message).toContain(`${path.join(directory, 'hooks.yaml')}: (root): cannot read: it is a directory, not a regular file`);
  expect(message).toContain(`${path.join(directory, 'mcp.yaml')}: (root): a symbolic link to a file that does not exist`);
});

it("checks what executors need from the machine where it is loaded: a seed directory, the ssh-agent's socket", async () => {
  const executors = ['executors:', '  v1: { kind: virtual, seedDirectory: /nonexistent/seed }', '  box:', '    kind: ssh', '    host: 127.0.0.1', '    user: u', '    agent: true', ''].join('\n');
  const message = await problems({ 'executors.yaml': executors }, {});
  expect(message).toContain(`${at('executors.yaml', 2)}executors.v1.seedDirectory: /nonexistent/seed does not exist or is not a directory`);
  expect(message).toContain(`${at('executors.yaml', 7)}executors.box.agent: agent: true, but SSH_AUTH_SOCK is not set`);
  // With the socket and a real seed directory (relative to the configuration directory), it loads.
  mkdirSync(path.join(directory, 'seed'));
  expect(await problems({ 'executors.yaml': executors.replace('/nonexistent/seed', 'seed') }, { SSH_AUTH_SOCK: '/run/agent.sock' })).toBe('');
});

it('refuses values no request could use: other URL schemes, bad header names and values, an origin with a path, paths leaving the workspace', async () => {
  const providers = [
    'providers:',
    '  a: { kind: openai-compatible, baseURL: "ftp://127.0.0.1/v1" }',
    '  b: { kind: openai-compatible, baseURL: "file:///etc/passwd" }',
    '  c:',
    '    kind: openai',
    '    headers:',
    '      "bad header": x',
    '      X-Fine: "line\\nbreak"',
    'defaultModel: a/m',
    '',
  ].join('\n');
  const message = await problems({
    'providers.yaml': providers,
    'server.yaml': 'allowedOrigins:\n  - "http://x.example/path?q"\n  - "https://ok.example:8443"\n',
    'mcp.yaml': 'servers:\n  web: { transport: http, url: "http://127.0.0.1:9/mcp", headers: { "a:b": c } }\n',
    'executors.yaml': 'executors:\n  v: { kind: virtual, files: { "../escape.txt": x, "/abs.txt": y, "ok/inside.txt": z } }\n',
  });
  expect(message).toContain(`${at('providers.yaml', 2)}providers.a.baseURL: must be an http:// or https:// URL`);
  expect(message).toContain(`${at('providers.yaml', 3)}providers.b.baseURL: must be an http:// or https:// URL`);
  expect(message).toContain(`${at('providers.yaml', 7)}providers.c.headers["bad header"]: not a valid HTTP header name`);
  expect(message).toContain(`${at('providers.yaml', 8)}providers.c.headers.X-Fine: a header value must not contain a line break`);
  expect(message).toContain(`server.yaml:2: allowedOrigins[0]: not an origin: a browser sends "http://x.example"`);
  expect(message).not.toContain('allowedOrigins[1]');
  expect(message).toContain('mcp.yaml:2: servers.web.headers.a:b: not a valid HTTP header name');
  expect(message).toContain('executors.v.files["../escape.txt"]: must not hold ".." segments');
  // An absolute path is a place in the executor's memory, as a relative one is under its workspace.
  expect(message).not.toContain('abs.txt');
  expect(message).not.toContain('ok/inside.txt');
});

it('says a required key is missing in words, not as a type received undefined', async () => {
  const message = await problems({ 'providers.yaml': '' });
  expect(message).toContain(`${path.join(directory, 'providers.yaml')}: providers: required, but missing (a mapping of names expected)`);
  expect(message).not.toContain('received undefined');
});

it('names a shell-style ${NAME} as the cause when it breaks a flow mapping, before the parser errors that follow', async () => {
  const message = await problems({ 'providers.yaml': 'providers:\n  p: { kind: openai, apiKey: ${OPENAI_API_KEY} }\ndefaultModel: p/m\n' });
  const lines = message.split('\n');
  const first = lines.findIndex((line) => line.includes('(YAML syntax)'));
  expect(lines[first]).toContain(`${at('providers.yaml', 2)}(YAML syntax): \${OPENAI_API_KEY} is not YAML (its "{" starts a mapping) and is not expanded: write the value as env:OPENAI_API_KEY`);
  expect(lines.slice(first + 1).some((line) => line.includes('Unexpected'))).toBe(true);
});

it('refuses an agents.yaml that defines no agent', async () => {
  expect(await problems({ 'agents.yaml': 'agents: {}\n' })).toContain(`${at('agents.yaml', 1)}agents: defines no agent`);
});

it('reports every problem in one run: bad plugin names with bad entries, each unknown key at its own line', async () => {
  const plugins = await problems({ 'plugins.yaml': 'plugins:\n  Bad_Name: { enabled: true }\n  ok: { enabled: "no", source: 5 }\n' });
  expect(plugins).toContain(`${at('plugins.yaml', 2)}plugins.Bad_Name: plugin names are`);
  expect(plugins).toContain(`${at('plugins.yaml', 3)}plugins.ok.enabled:`);
  const keys = await problems({ 'server.yaml': 'allowedOrigins: []\ncolour: red\nshape: round\nsize: 3\n' });
  expect(keys).toContain(`${at('server.yaml', 2)}colour: Unrecognized key: "colour"`);
  expect(keys).toContain(`${at('server.yaml', 3)}shape: Unrecognized key: "shape"`);
  expect(keys).toContain(`${at('server.yaml', 4)}size: Unrecognized key: "size"`);
});

it('suggests the file a misnamed configuration file was meant to be', async () => {
  const message = await problems({ 'mcp.yml': 'servers: {}\n', 'agent.yaml': 'agents: {}\n' });
  expect(message).toContain(`${path.join(directory, 'mcp.yml')}: (root): unknown configuration file (did you mean mcp.yaml?`);
  expect(message).toContain(`${path.join(directory, 'agent.yaml')}: (root): unknown configuration file (did you mean agents.yaml?`);
});

it('refuses a stream idle timeout under one second, naming the key and its line', async () => {
  const found = await problems({ 'server.yaml': 'limits:\n  retry:\n    streamIdleTimeoutMs: 50\n' });
  expect(found).toContain(`${at('server.yaml', 3)}limits.retry.streamIdleTimeoutMs: `);
  expect(found).toMatch(/streamIdleTimeoutMs: .*>=\s?1000/);
});

it('refuses a first retry delay longer than the longest one', async () => {
  expect(await problems({ 'server.yaml': 'limits:\n  retry:\n    baseDelayMs: 60000\n    maxDelayMs: 10\n' })).toContain(`${at('server.yaml', 3)}limits.retry.baseDelayMs: the first delay (60000 ms) is longer than maxDelayMs (10 ms)`);
});

it('says what a value of several forms should be, and the naming rule a key broke, instead of "Invalid input"', async () => {
  const providers = [
    'providers:',
    '  mock:',
    '    kind: openai-compatible',
    '    baseURL: "http://127.0.0.1:9/v1"',
    '    models:',
    '      a: { reasoning: { effort: extreme } }',
    '      b: { reasoning: "yes" }',
    '  "my provider": { kind: openai }',
    'defaultModel: mock/a',
    '',
  ].join('\n');
  const message = await problems({ 'providers.yaml': providers });
  expect(message).toMatch(new RegExp(`${at('providers.yaml', 6).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}providers\\.mock\\.models\\.a\\.reasoning\\.effort: "extreme" is not one of "[a-z]+"`));
  expect(message).toContain(`${at('providers.yaml', 7)}providers.mock.models.b.reasoning: expected boolean or object, received string`);
  expect(message).toContain(`${at('providers.yaml', 8)}providers["my provider"]: provider names use letters, digits`);
  expect(message).not.toContain('Invalid input');
  expect(message).not.toContain('Invalid key in record');
});

it('tells a boolean written yes or off (YAML 1.1) to write true or false', async () => {
  const message = await problems({ 'plugins.yaml': 'plugins:\n  kit: { enabled: yes }\n  other: { enabled: "off" }\n' });
  expect(message).toContain(`${at('plugins.yaml', 2)}plugins.kit.enabled: Invalid input: expected boolean, received string; write true or false ("yes" is text in YAML 1.2`);
  expect(message).toContain(`${at('plugins.yaml', 3)}plugins.other.enabled:`);
});

it('says a missing key of fixed values is missing, with the values allowed, not that a wrong value is there', async () => {
  const missing = await problems({ 'agents.yaml': 'agents:\n  default:\n    approvals:\n      rules:\n        - tool: exec_command\n' });
  expect(missing).toContain(`${at('agents.yaml', 5)}agents.default.approvals.rules[0].decision: required, but missing (one of "allow", "ask", "deny")`);
  // A wrong value present is still told as such.
  const wrong = await problems({ 'agents.yaml': 'agents:\n  default:\n    approvals:\n      rules:\n        - { tool: exec_command, decision: maybe }\n' });
  expect(wrong).toContain('agents.default.approvals.rules[0].decision: ');
  expect(wrong).not.toContain('required, but missing');
});

it('refuses a name of another file that is not defined there, with a did-you-mean, for every cross-reference', async () => {
  const EXECUTORS = 'executors:\n  buildbox: { kind: ssh, host: build.example.org }\n';
  const message = await problems({
    'executors.yaml': EXECUTORS,
    'server.yaml': 'platform:\n  memberWorkspaces:\n    local: [/srv]\n    buildbx: [/srv]\n    nosuch: [/srv]\n',
    'agents.yaml': 'agents:\n  default:\n    model: mokc/m\n    approvals:\n      rules:\n        - { tool: mcp__dcos__search, decision: deny }\n',
    'mcp.yaml': 'servers:\n  docs:\n    transport: stdio\n    command: [docs-server]\n    executor: buildbo\n',
    'hooks.yaml': 'hooks:\n  PreToolUse:\n    - { matcher: mcp__doc__search, command: "true" }\n',
  });
  expect(message).toContain(`${at('server.yaml', 4)}platform.memberWorkspaces.buildbx: names executor "buildbx", which is not defined in executors.yaml (defined: local, buildbox) (did you mean "buildbox"?)`);
  expect(message).toContain(`${at('server.yaml', 5)}platform.memberWorkspaces.nosuch: names executor "nosuch", which is not defined in executors.yaml (defined: local, buildbox)`);
  expect(message).toContain(`${at('agents.yaml', 3)}agents.default.model: names provider "mokc", which is not defined in providers.yaml (defined: mock) (did you mean "mock"?)`);
  expect(message).toMatch(/agents\.yaml:6: agents\.default\.approvals\.rules\[0\]\.tool: .*"dcos".* \(did you mean "docs"\?\)/);
  expect(message).toContain(`${at('mcp.yaml', 5)}servers.docs.executor: names executor "buildbo", which is not defined in executors.yaml (defined: local, buildbox) (did you mean "buildbox"?)`);
  expect(message).toMatch(/hooks\.yaml:3: hooks\.PreToolUse\[0\]\.matcher: .*"doc".* \(did you mean "docs"\?\)/);
  expect(message).not.toContain('memberWorkspaces.local');
});
