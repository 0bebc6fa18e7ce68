/**
 * `executors.yaml`: the schema (errors name file, line and key path), the default `local`
 * executor, and `createExecutors` building each kind with paths resolved.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutors, EXECUTORS_FILE, loadExecutorsFile, parseExecutorsFile } from '../../src/config/executors.js';
import { resolvePaths } from '../../src/config/paths.js';
import { ConfigError } from '../../src/config/yaml-file.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { SshExecutor } from '../../src/executors/ssh/ssh-executor.js';
import { VirtualExecutor } from '../../src/executors/virtual/virtual-executor.js';

let configDir: string;

beforeAll(async () => {
  configDir = await mkdtemp(path.join(os.tmpdir(), 'executors-config-'));
  await mkdir(path.join(configDir, 'seed'));
});
afterAll(async () => {
  await rm(configDir, { recursive: true, force: true });
});

const FULL = `executors:
  sandboxed: { kind: local, sandbox: bwrap, network: true, writablePaths: [cache, ~/.npm] }
  build-box:
    kind: ssh
    host: 127.0.0.1
    port: 2222
    user: dev
    identityFile: keys/id_ed25519
    knownHostsFile: ~/known_hosts
    connectTimeoutMs: 3000
  scratch: { kind: virtual, seedDirectory: seed, files: { README.md: "hi\\n" } }
`;

describe('executors.yaml', () => {
  it('parses every kind', () => {
    const parsed = parseExecutorsFile('executors.yaml', FULL);
    expect(Object.keys(parsed.executors)).toEqual(['sandboxed', 'build-box', 'scratch']);
    expect(parsed.executors['build-box']).toMatchObject({ kind: 'ssh', port: 2222, connectTimeoutMs: 3000 });
    expect(parseExecutorsFile('executors.yaml', '')).toEqual({ executors: {} });
  });

  it.each([
    ['executors:\n  x: { kind: docker }\n', 'executors.yaml:2: executors.x.kind: "docker" is not one of "local", "ssh", "virtual"'],
    ['executors:\n  x: { kind: sssh }\n', 'executors.yaml:2: executors.x.kind: "sssh" is not one of "local", "ssh", "virtual" (did you mean "ssh"?)'],
    ['executors:\n  x: {}\n', 'executors.yaml:2: executors.x.kind: required, but missing (one of "local", "ssh", "virtual")'],
    ['executors:\n  x: { kind: 3 }\n', 'executors.yaml:2: executors.x.kind: 3 is not one of "local", "ssh", "virtual"'],
    ['executors:\n  box:\n    kind: ssh\n    user: dev\n    agent: true\n', 'executors.yaml:3: executors.box.host: required, but missing (a string expected)'],
    ['executors:\n  box: { kind: ssh, host: h, user: dev }\n', 'executors.yaml:2: executors.box.identityFile: give identityFile, or agent: true, to authenticate with'],
    ['executors:\n  box: { kind: ssh, host: h, user: dev, agent: true, port: 70000 }\n', 'executors.yaml:2: executors.box.port: Too big'],
    ['executors:\n  plain:\n    kind: local\n    network: false\n', 'executors.yaml:4: executors.plain.network: only applies with sandbox: bwrap'],
    ['executors:\n  box: { kind: local, sandbox: firejail }\n', 'executors.yaml:2: executors.box.sandbox: "firejail" is not "bwrap"'],
    ['executors:\n  local: { kind: virtual }\n', 'executors.yaml:2: executors.local.kind: the name "local" is kept for the machine the server runs on'],
    ['executors:\n  "bad name": { kind: local }\n', 'executors.yaml:2: executors["bad name"]: executor names use letters, digits'],
    ['executors:\n  v: { kind: virtual, colour: blue }\n', 'executors.yaml:2: executors.v.colour: Unrecognized key: "colour"'],
    ['executors: [\n', 'executors.yaml:1: (YAML syntax): Flow sequence in block collection must be sufficiently indented and end with a ]: "[" opened at column 12 is never closed with "]"'],
  ])('names file, line and key path for %j', (text, message) => {
    let caught: unknown;
    try {
      parseExecutorsFile('executors.yaml', text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).message).toContain(message);
  });

  it('loads the file from the config directory; a missing file means only the default', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'executors-empty-'));
    expect(await loadExecutorsFile(empty)).toEqual({ executors: {} });
    await rm(empty, { recursive: true });
    await writeFile(path.join(configDir, EXECUTORS_FILE), FULL);
    expect(Object.keys((await loadExecutorsFile(configDir)).executors)).toEqual(['sandboxed', 'build-box', 'scratch']);
  });
});

describe('createExecutors', () => {
  it('always has a plain local executor, first', () => {
    const executors = createExecutors({ executors: {} });
    expect([...executors.keys()]).toEqual(['local']);
    const local = executors.get('local') as LocalExecutor;
    expect(local).toBeInstanceOf(LocalExecutor);
    expect(local.sandbox).toBeUndefined();
  });

  it('builds each kind, resolving relative paths against the config directory and ~ against home', () => {
    const home = path.join(configDir, 'home');
    const executors = createExecutors(parseExecutorsFile('executors.yaml', FULL), { baseDirectory: configDir, homeDirectory: home, environment: {} });
    expect([...executors.keys()]).toEqual(['local', 'sandboxed', 'build-box', 'scratch']);
    const sandboxed = executors.get('sandboxed') as LocalExecutor;
    const defaults = resolvePaths({}, {});
    expect(sandboxed.sandbox).toEqual({
      network: true,
      writablePaths: [path.join(configDir, 'cache'), path.join(home, '.npm')],
      readablePaths: [],
      // The server's own directories are never shown to the sandbox; the home is emptied.
      hiddenPaths: [configDir, defaults.configDir, defaults.dataDir, defaults.stateDir],
      homeDirectory: home,
      accountHomeDirectory: os.userInfo().homedir,
    });
    const box = executors.get('build-box') as SshExecutor;
    expect(box).toBeInstanceOf(SshExecutor);
    expect(box.target).toMatchObject({
      host: '127.0.0.1',
      port: 2222,
      user: 'dev',
      identityFile: path.join(configDir, 'keys/id_ed25519'),
      knownHostsFile: path.join(home, 'known_hosts'),
      connectTimeoutMs: 3000,
      agentSocket: undefined,
    });
    expect(executors.get('scratch')).toBeInstanceOf(VirtualExecutor);
  });

  it('uses SSH_AUTH_SOCK for agent: true, and says when it is missing', () => {
    const config = parseExecutorsFile('executors.yaml', 'executors:\n  box: { kind: ssh, host: h, user: u, agent: true }\n');
    const box = createExecutors(config, { environment: { SSH_AUTH_SOCK: '/run/agent.sock' } }).get('box') as SshExecutor;
    expect(box.target.agentSocket).toBe('/run/agent.sock');
    expect(box.target.knownHostsFile).toBe(path.join(os.homedir(), '.ssh', 'known_hosts'));
    expect(() => createExecutors(config, { environment: {} })).toThrow('executor "box": agent: true, but SSH_AUTH_SOCK is not set');
  });

  it('names a seed directory that does not exist', () => {
    const config = parseExecutorsFile('executors.yaml', 'executors:\n  v: { kind: virtual, seedDirectory: nowhere }\n');
    expect(() => createExecutors(config, { baseDirectory: configDir })).toThrow(`virtual executor "v": seedDirectory ${path.join(configDir, 'nowhere')} does not exist`);
  });

  it('lets the file configure the local executor itself', () => {
    const config = parseExecutorsFile('executors.yaml', 'executors:\n  local: { kind: local, sandbox: bwrap }\n');
    expect((createExecutors(config, { protectedDirectories: ['/srv/openvaala'], homeDirectory: '/home/someone' }).get('local') as LocalExecutor).sandbox).toEqual({
      network: false,
      writablePaths: [],
      readablePaths: [],
      hiddenPaths: ['/srv/openvaala'],
      homeDirectory: '/home/someone',
      // The account's own home is emptied too, wherever HOME points.
      accountHomeDirectory: os.userInfo().homedir,
    });
  });
});
