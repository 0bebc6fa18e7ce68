/**
 * Threat model: a command written by a model never receives the server's credentials. The
 * server's environment holds provider API keys; every executor kind (local, local in bwrap,
 * ssh to a real OpenSSH server, virtual), with every way of starting a command (run, a
 * background spawn, a terminal), gives the command an environment without them. Per-executor
 * include/exclude patterns from executors.yaml widen or narrow that.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutors, parseExecutorsFile } from '../../src/config/executors.js';
import { CommandEnvironment } from '../../src/executors/command-environment.js';
import type { Executor, RunningProcess } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { SshExecutor } from '../../src/executors/ssh/ssh-executor.js';
import { VirtualExecutor } from '../../src/executors/virtual/virtual-executor.js';
import { requireExecutable } from '../helpers/required-commands.js';
import { startSshServer, type TestSshServer } from '../helpers/ssh-server.js';

/** Credentials set in the server's environment for this test, by name. */
const SECRETS: Record<string, string> = {
  OPENAI_API_KEY: 'sk-openai-7f3a9c',
  ANTHROPIC_API_KEY: 'sk-ant-51be20',
  GITHUB_TOKEN: 'ghp-e8d1c4',
  DEPLOY_PASSWORD: 'hunter2-93af',
  STRIPE_SECRET: 'stripe-secret-11aa',
  AWS_ACCESS_KEY_ID: 'AKIA-EXAMPLE-77',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-42bb',
  PGPASSWORD: 'pg-pass-6c6c',
  my_lowercase_token: 'lower-token-0d0d',
};
const HARMLESS = { name: 'OPENVAALA_TEST_HARMLESS', value: 'harmless-value-5e5e' };

let workspaceRoot: string;
let sshServer: TestSshServer;
const executors: Executor[] = [];
const saved = new Map<string, string | undefined>();

beforeAll(async () => {
  requireExecutable('bwrap', 'bubblewrap');
  for (const [name, value] of [...Object.entries(SECRETS), [HARMLESS.name, HARMLESS.value] as const]) {
    saved.set(name, process.env[name]);
    process.env[name] = value;
  }
  workspaceRoot = await realpath(await mkdtemp(path.join(os.tmpdir(), 'command-environment-')));
  sshServer = await startSshServer();
});

afterAll(async () => {
  for (const executor of executors) await executor.close();
  await sshServer?.dispose();
  for (const [name, value] of saved) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await rm(workspaceRoot, { recursive: true, force: true });
});

function track<T extends Executor>(executor: T): T {
  executors.push(executor);
  return executor;
}

async function environmentOf(executor: Executor, cwd = workspaceRoot): Promise<string> {
  const result = await executor.run({ command: 'env', cwd, workspaceRoot: cwd, timeoutMs: 15_000, maxOutputBytes: 256 * 1024 });
  expect(result.exitCode).toBe(0);
  return result.output;
}

async function spawnedEnvironment(started: RunningProcess): Promise<string> {
  let output = '';
  started.onOutput((chunk) => (output += chunk));
  await started.exited;
  return output;
}

function expectNoSecret(output: string): void {
  for (const [name, value] of Object.entries(SECRETS)) expect(output, `${name} leaked`).not.toContain(value);
}

describe('the environment of a command', () => {
  it('holds no credential of the server on a local executor, and keeps the rest', async () => {
    const local = track(new LocalExecutor({ name: 'local' }));
    const output = await environmentOf(local);
    expectNoSecret(output);
    expect(output).toContain(`${HARMLESS.name}=${HARMLESS.value}`);
    expect(output).toMatch(/^PATH=/m);
  });

  it('holds no credential in a background command or a terminal on a local executor', async () => {
    const local = track(new LocalExecutor({ name: 'local' }));
    const piped = await spawnedEnvironment(local.spawn({ command: 'env', cwd: workspaceRoot }));
    const terminal = await spawnedEnvironment(local.spawn({ command: 'env', cwd: workspaceRoot, tty: true }));
    for (const output of [piped, terminal]) {
      expectNoSecret(output);
      expect(output).toContain(HARMLESS.value);
    }
  });

  it('holds no credential inside the bwrap sandbox, run or spawned', async () => {
    const sandboxed = track(new LocalExecutor({ name: 'sandboxed', sandbox: 'bwrap' }));
    const output = await environmentOf(sandboxed);
    expectNoSecret(output);
    expect(output).toContain(HARMLESS.value);
    expectNoSecret(await spawnedEnvironment(sandboxed.spawn({ command: 'env', cwd: workspaceRoot, workspaceRoot })));
  });

  it('holds no credential of the server over ssh', async () => {
    const ssh = track(
      new SshExecutor({ name: 'ssh', host: sshServer.host, port: sshServer.port, user: sshServer.user, identityFile: sshServer.identityFile, knownHostsFile: sshServer.knownHostsFile, connectTimeoutMs: 5000 }),
    );
    expectNoSecret(await environmentOf(ssh));
    expectNoSecret(await spawnedEnvironment(ssh.spawn({ command: 'env', cwd: workspaceRoot })));
  });

  it('holds no credential of the server on a virtual executor', async () => {
    const virtual = track(new VirtualExecutor({ name: 'virtual' }));
    await virtual.fs.makeDirectory('/workspace');
    const output = await environmentOf(virtual, '/workspace');
    expectNoSecret(output);
    expect(output).not.toContain(HARMLESS.value);
  });

  it('follows include and exclude patterns from executors.yaml', async () => {
    const config = parseExecutorsFile(
      'executors.yaml',
      [
        'executors:',
        '  handing-on:',
        '    kind: local',
        '    environment: { include: [GITHUB_TOKEN], exclude: ["OPENVAALA_TEST_*"] }',
        '  allow-list:',
        '    kind: local',
        '    sandbox: bwrap',
        '    environment: { exclude: ["*"], include: [PATH, "openvaala_test_harm*"] }',
      ].join('\n'),
    );
    const created = createExecutors(config, { baseDirectory: workspaceRoot, protectedDirectories: [] });
    for (const executor of created.values()) track(executor);
    const handingOn = await environmentOf(created.get('handing-on') as Executor);
    expect(handingOn).toContain(`GITHUB_TOKEN=${SECRETS.GITHUB_TOKEN}`);
    expect(handingOn).not.toContain(HARMLESS.value);
    expect(handingOn).not.toContain(SECRETS.OPENAI_API_KEY);
    const allowList = await environmentOf(created.get('allow-list') as Executor);
    const names = allowList
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => line.slice(0, line.indexOf('=')));
    // bash itself sets PWD, SHLVL and _.
    expect(names.filter((name) => !['PWD', 'SHLVL', '_'].includes(name)).sort()).toEqual([HARMLESS.name, 'PATH']);
  });

  it('refuses an empty pattern in executors.yaml, naming the key', () => {
    expect(() => parseExecutorsFile('executors.yaml', 'executors:\n  box:\n    kind: local\n    environment: { exclude: [""] }\n')).toThrow(/executors\.box\.environment\.exclude\[0\]/);
  });
});

describe('CommandEnvironment', () => {
  it('drops credential-like names by default, ignoring case, and keeps ordinary ones', () => {
    const environment = new CommandEnvironment();
    for (const name of ['OPENAI_API_KEY', 'GEMINI_API_KEY', 'HF_TOKEN', 'ANTHROPIC_AUTH_TOKEN', 'DB_PASSWORD', 'CLIENT_SECRET', 'AZURE_CLIENT_SECRET', 'GOOGLE_APPLICATION_CREDENTIALS', 'SSH_AUTH_SOCK', 'api_key', 'DATABASE_URL', 'GH_PAT', 'GITLAB_PAT', 'SERVICE_APIKEY', 'GPG_PASSPHRASE']) {
      expect(environment.passes(name), name).toBe(false);
    }
    for (const name of ['PATH', 'PYTHONPATH', 'HOME', 'LANG', 'TERM', 'KEYBOARD_LAYOUT', 'TOKENIZERS_PARALLELISM', 'NODE_OPTIONS']) expect(environment.passes(name), name).toBe(true);
  });
});
