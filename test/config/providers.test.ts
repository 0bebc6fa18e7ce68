import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProvidersFile, MissingSecretError, resolveSecret } from '../../src/config/providers.js';
import { ConfigError } from '../../src/config/yaml-file.js';
import { ModelRegistry, UnknownModelError } from '../../src/models/model-registry.js';

const directories: string[] = [];
function configDir(text: string): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-config-'));
  directories.push(directory);
  writeFileSync(path.join(directory, 'providers.yaml'), text);
  return directory;
}
afterEach(() => directories.splice(0).forEach((directory) => rmSync(directory, { recursive: true, force: true })));

describe('providers.yaml', () => {
  it('loads the format of SPEC §8', async () => {
    const file = await loadProvidersFile(
      configDir(`providers:
  openai:   { kind: openai, apiKey: env:OPENAI_API_KEY }
  claude:   { kind: anthropic, apiKey: env:ANTHROPIC_API_KEY }
  gemini:   { kind: google, apiKey: env:GEMINI_API_KEY }
  local:    { kind: openai-compatible, baseURL: http://127.0.0.1:11434/v1 }
  mock:     { kind: openai, baseURL: http://127.0.0.1:18181/v1, apiKey: none }
defaultModel: openai/gpt-5.5
`),
    );
    expect(Object.keys(file.providers)).toEqual(['openai', 'claude', 'gemini', 'local', 'mock']);
    expect(file.defaultModel).toBe('openai/gpt-5.5');
  });

  it('names the file, the line and the key path of each mistake', async () => {
    const directory = configDir(`providers:
  openai: { kind: openai }
  local:
    kind: openai-compatible
  broken:
    kind: carrier-pigeon
`);
    const error = await loadProvidersFile(directory).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toContain(`${path.join(directory, 'providers.yaml')}:6: providers.broken.kind:`);
    expect(message).toContain('providers.local.baseURL: required for kind openai-compatible');
  });

  it('checks that defaultModel names a configured provider, with its line', async () => {
    const error = await loadProvidersFile(configDir('providers:\n  mock: { kind: openai }\ndefaultModel: nowhere/model\n')).catch((caught: unknown) => caught);
    expect((error as ConfigError).message).toMatch(/providers\.yaml:3: defaultModel: names provider "nowhere"/);
  });

  it('reports a misspelt key at its own line', async () => {
    const directory = configDir('providers:\n  local:\n    kind: openai-compatible\n    baseUrl: http://127.0.0.1:11434/v1\n');
    const error = await loadProvidersFile(directory).catch((caught: unknown) => caught);
    expect((error as ConfigError).message).toContain('providers.yaml:4: providers.local.baseUrl: Unrecognized key: "baseUrl"');
  });

  it('reports YAML syntax errors with their line', async () => {
    const error = await loadProvidersFile(configDir('providers:\n  a: { kind: openai\n')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems[0]?.line).toBeGreaterThan(0);
  });

  it('reads env: secrets when used, naming the variable when unset', () => {
    expect(resolveSecret('env:OPENVAALA_TEST_KEY', 'x', { OPENVAALA_TEST_KEY: 'k' })).toBe('k');
    expect(() => resolveSecret('env:OPENVAALA_TEST_KEY', 'providers.yaml: providers.openai.apiKey', {})).toThrow('providers.yaml: providers.openai.apiKey: environment variable OPENVAALA_TEST_KEY is not set');
    expect(resolveSecret('literal', 'x', {})).toBe('literal');
  });

  it('resolves provider/model names and explains unknown ones', () => {
    const registry = new ModelRegistry({ providers: { mock: { kind: 'openai', baseURL: 'http://127.0.0.1:1/v1', apiKey: 'none' } }, defaultModel: 'mock/a' });
    expect(registry.resolve(undefined).name).toBe('mock/a');
    expect(registry.resolve('mock/org/model-b').modelId).toBe('org/model-b');
    expect(() => registry.resolve('other/x')).toThrow(UnknownModelError);
    expect(() => registry.resolve('other/x')).toThrow('configured: mock');
    expect(() => registry.resolve('no-slash')).toThrow('"<provider>/<model-id>"');
    expect(() => new ModelRegistry({ providers: {} }).resolve(undefined)).toThrow('no defaultModel');
  });

  it('refuses, before any call, a provider of a public API with no key anywhere, naming every way to give one', () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const registry = new ModelRegistry({ providers: { claude: { kind: 'anthropic' } }, defaultModel: 'claude/m' }, { configDir: configDir('providers: {}\n') });
      expect(() => registry.resolve(undefined)).toThrow(MissingSecretError);
      expect(() => registry.resolve(undefined)).toThrow('provider "claude" (kind anthropic) has no API key: give providers.claude.apiKey in providers.yaml (e.g. apiKey: env:ANTHROPIC_API_KEY), set ANTHROPIC_API_KEY in the server\'s environment, or store one with: openvaala auth set claude');
      process.env.ANTHROPIC_API_KEY = 'sk-ant-from-environment';
      expect(registry.resolve(undefined).name).toBe('claude/m');
      // A compatible server may need no key at all.
      expect(new ModelRegistry({ providers: { local: { kind: 'openai-compatible', baseURL: 'http://127.0.0.1:1/v1' } }, defaultModel: 'local/m' }).resolve(undefined).name).toBe('local/m');
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('says which providers.yaml has no defaultModel, and when there is no providers.yaml at all', () => {
    const withFile = configDir('providers:\n  mock: { kind: openai-compatible, baseURL: "http://127.0.0.1:1/v1" }\n');
    expect(() => new ModelRegistry({ providers: {} }, { configDir: withFile }).resolve(undefined)).toThrow(`providers.yaml has no defaultModel (${path.join(withFile, 'providers.yaml')}); set defaultModel there, or name a model with --model`);
    const empty = mkdtempSync(path.join(os.tmpdir(), 'openvaala-config-'));
    directories.push(empty);
    expect(() => new ModelRegistry({ providers: {} }, { configDir: empty }).resolve(undefined)).toThrow(`${path.join(empty, 'providers.yaml')} does not exist; create it with a provider and a defaultModel`);
  });
});
