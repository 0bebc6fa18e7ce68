/**
 * The configuration directory as a whole: reload keeps the last good configuration, writes
 * keep comments and restore the files when the result does not load, file changes reload.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfiguration } from '../../src/config/configuration.js';
import type { AnyNotification } from '../../src/protocol/index.js';
import { runCli } from '../helpers/environment.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const PROVIDERS = (baseURL: string) => `# Providers used by the team.
providers:
  # The scripted mock.
  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }   # inline comment
defaultModel: mock/mock-model
`;

const AGENTS = `# Our agents.
agents:
  default:
    default: true
    maxSteps: 50 # keep turns short
`;

async function start(script = 'responses:\n  - text: "hello"\n  - text: "again"\n'): Promise<InProcessServer> {
  harness = await startInProcessServer(script, {
    providersYaml: PROVIDERS,
    beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), AGENTS),
  });
  return harness;
}

const file = (name: string) => path.join(harness!.environment.paths.configDir, name);

describe('the configuration directory', () => {
  it('reports a broken file among several with file, line and key path, and keeps the previous configuration', async () => {
    await start();
    writeFileSync(file('agents.yaml'), 'agents:\n  default:\n    default: true\n    maxSteps: lots\n');
    writeFileSync(file('server.yaml'), 'limits:\n  compactionThreshold: 0.5\n');
    const status = await harness!.client.request('config/reload', {});
    expect(status.ok).toBe(false);
    // Clients see files by their name in the configuration directory, never by their place on the machine.
    expect(status.error).toContain('agents.yaml:4: agents.default.maxSteps:');
    expect(status.error).not.toContain(file(''));
    const current = await harness!.client.request('config/get', {});
    expect(current.error).toBe(status.error);
    expect((current.configuration.agents as { agents: { default: { maxSteps: number } } }).agents.default.maxSteps).toBe(50);
    // The valid server.yaml of the failed load was not applied either: all or nothing.
    expect(harness!.server.runtime.limits.compactionThreshold).toBe(0.8);
    // And the server keeps working.
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'still there?' });
    expect((await harness!.turnsCompleted(1))[0]?.status).toBe('completed');
  });

  it('names an unknown *.yaml file rather than ignoring it', async () => {
    await start();
    writeFileSync(file('provider.yaml'), 'providers: {}\n');
    const status = await harness!.client.request('config/reload', {});
    expect(status.error).toMatch(/^provider\.yaml: \(root\): unknown configuration file/m);
  });

  it('keeps comments and key order through config/update, and redacts secrets in config/get', async () => {
    await start();
    const { configuration } = await harness!.client.request('config/update', {
      changes: [
        { file: 'providers', path: ['providers', 'openai'], value: { kind: 'openai', apiKey: 'sk-secret-value' } },
        { file: 'agents', path: ['agents', 'default', 'maxSteps'], value: 75 },
      ],
    });
    const providers = readFileSync(file('providers.yaml'), 'utf8');
    expect(providers).toContain('# Providers used by the team.');
    expect(providers).toContain('# The scripted mock.');
    expect(providers).toContain('# inline comment');
    expect(providers.indexOf('mock:')).toBeLessThan(providers.indexOf('openai:'));
    expect(providers.indexOf('openai:')).toBeLessThan(providers.indexOf('defaultModel:'));
    expect(readFileSync(file('agents.yaml'), 'utf8')).toContain('maxSteps: 75 # keep turns short');
    expect(JSON.stringify(configuration)).not.toContain('sk-secret-value');
    expect((configuration.providers as { providers: { openai: { apiKey: string } } }).providers.openai.apiKey).toBe('***');
    const models = await harness!.client.request('models/list', {});
    expect(models.defaultModel).toBe('mock/mock-model');
  });

  it('restores the files byte for byte when the updated configuration does not load', async () => {
    await start();
    const before = { providers: readFileSync(file('providers.yaml')), agents: readFileSync(file('agents.yaml')) };
    const error = await harness!.client
      .request('config/update', {
        changes: [
          { file: 'agents', path: ['agents', 'default', 'maxSteps'], value: 60 },
          { file: 'providers', path: ['defaultModel'], value: 'nowhere/model' },
        ],
      })
      .catch((caught: Error) => caught);
    expect((error as Error).message).toContain('config/update: the change was not applied, the files are restored');
    expect((error as Error).message).toContain('defaultModel: names provider "nowhere"');
    expect(readFileSync(file('providers.yaml')).equals(before.providers)).toBe(true);
    expect(readFileSync(file('agents.yaml')).equals(before.agents)).toBe(true);
    // A file that did not exist before is removed again.
    await harness!.client.request('config/update', { changes: [{ file: 'server', path: ['limits', 'compactionThreshold'], value: 7 }] }).catch(() => undefined);
    expect(() => readFileSync(file('server.yaml'))).toThrow();
  });

  it('loses no change when two writers update at once', async () => {
    await start();
    await Promise.all([
      harness!.client.request('config/update', { changes: [{ file: 'server', path: ['limits', 'maxStepsPerTurn'], value: 42 }] }),
      harness!.client.request('config/update', { changes: [{ file: 'server', path: ['allowedOrigins'], value: ['http://localhost:5173'] }] }),
      harness!.client.request('config/update', { changes: [{ file: 'agents', path: ['agents', 'reviewer'], value: { instructions: 'Review only.' } }] }),
    ]);
    const loaded = await loadConfiguration(harness!.environment.paths.configDir);
    expect(loaded.server.limits.maxStepsPerTurn).toBe(42);
    expect(loaded.server.allowedOrigins).toEqual(['http://localhost:5173']);
    expect(Object.keys(loaded.agents.agents)).toEqual(['default', 'reviewer']);
    expect(harness!.server.runtime.limits.maxStepsPerTurn).toBe(42);
  });

  it('reloads when a file changes and tells the clients', async () => {
    await start();
    const updates: AnyNotification[] = [];
    harness!.client.onNotification((event) => {
      if (event.method === 'config/updated') updates.push(event);
    });
    writeFileSync(file('server.yaml'), 'limits:\n  maxStepsPerTurn: 9\n');
    const deadline = Date.now() + 5000;
    while (harness!.server.runtime.limits.maxStepsPerTurn !== 9) {
      if (Date.now() > deadline) throw new Error('the change was not picked up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expect.poll(() => updates.at(-1)?.params, { timeout: 5000 }).toEqual({ ok: true });
  });

  it('config check prints every problem and exits 1', async () => {
    await start();
    writeFileSync(file('agents.yaml'), 'agents:\n  default: { maxSteps: 0 }\n');
    writeFileSync(file('server.yaml'), 'allowedOrigins: [not-a-url]\n');
    const result = await runCli(['config', 'check', '--config-dir', harness!.environment.paths.configDir], { env: process.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file('agents.yaml')}:2: agents.default.maxSteps:`);
    expect(result.stderr).toContain(`${file('server.yaml')}:1: allowedOrigins[0]:`);
  });

  it('keeps the instance of an executor whose entry did not change, and replaces a changed one', async () => {
    await start();
    writeFileSync(file('executors.yaml'), 'executors:\n  scratch: { kind: virtual }\n  spare: { kind: virtual }\n');
    expect(await harness!.client.request('config/reload', {})).toEqual({ ok: true });
    const runtime = harness!.server.runtime;
    const scratch = runtime.findExecutor('scratch');
    const spare = runtime.findExecutor('spare');
    const local = runtime.findExecutor('local');
    expect(scratch).toBeDefined();
    writeFileSync(file('executors.yaml'), 'executors:\n  scratch: { kind: virtual }\n  spare: { kind: virtual, files: { a.txt: "a" } }\n');
    expect(await harness!.client.request('config/reload', {})).toEqual({ ok: true });
    expect(runtime.findExecutor('scratch')).toBe(scratch);
    expect(runtime.findExecutor('local')).toBe(local);
    expect(runtime.findExecutor('spare')).not.toBe(spare);
    writeFileSync(file('executors.yaml'), 'executors: {}\n');
    expect(await harness!.client.request('config/reload', {})).toEqual({ ok: true });
    expect(runtime.findExecutor('scratch')).toBeUndefined();
    expect(runtime.listExecutors().map((executor) => executor.name)).toEqual(['local']);
  });

  it('keeps limits given at start over server.yaml after a reload', async () => {
    harness = await startInProcessServer('responses:\n  - text: "hello"\n', { providersYaml: PROVIDERS, limits: { maxStepsPerTurn: 3 } });
    writeFileSync(file('server.yaml'), 'limits:\n  maxStepsPerTurn: 9\n  compactionThreshold: 0.5\n');
    expect(await harness.client.request('config/reload', {})).toEqual({ ok: true });
    expect(harness.server.runtime.limits.maxStepsPerTurn).toBe(3);
    expect(harness.server.runtime.limits.compactionThreshold).toBe(0.5);
  });
});
