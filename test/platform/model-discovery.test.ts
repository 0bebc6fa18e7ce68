/**
 * The discovered model catalog (docs/platform.md, "Settings and the model catalog"): models
 * listed by a provider's `GET /v1/models` (the mock provider, over real HTTP on 127.0.0.1)
 * merged with the configured ones, cached with a time-to-live that is shorter after warnings,
 * refreshed on demand, and one discovery shared by concurrent requests of a scope.
 */
import { createServer } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { MockProviderServer } from '../../src/models/mock/mock-provider-server.js';
import { parseMockScript } from '../../src/models/mock/script.js';
import { ModelDiscovery } from '../../src/models/model-discovery.js';
import { ModelRegistry } from '../../src/models/model-registry.js';
import { startPlatformServer, type PlatformHarness } from './two-users.js';

let mock: MockProviderServer | undefined;
let harness: PlatformHarness | undefined;
afterEach(async () => {
  await mock?.stop();
  await harness?.stop();
  mock = undefined;
  harness = undefined;
});

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

it('merges discovered models with configured ones, caches them, coalesces concurrent discoveries and refreshes on demand', async () => {
  mock = new MockProviderServer(parseMockScript('responses: []\nmodels: [mock-model, mock-large, mock-small]\n', 'script.yaml'));
  const { baseURL } = await mock.start({ port: 0 });
  const registry = new ModelRegistry({ providers: { mock: { kind: 'openai', baseURL, apiKey: 'none', models: { 'mock-model': { displayName: 'Configured mock' } } } }, defaultModel: 'mock/mock-model' });
  let now = 1_000_000;
  const discovery = new ModelDiscovery(() => registry, { ttlMs: 60_000, warningTtlMs: 5_000, now: () => now });

  const [first, second, third] = await Promise.all([discovery.catalog('server'), discovery.catalog('server'), discovery.catalog('server', true)]);
  expect(mock.modelListRequests).toBe(1);
  expect(discovery.discoveries).toBe(1);
  expect(second).toBe(first);
  expect(third).toBe(first);
  expect(first.models.map((model) => [model.id, model.displayName])).toEqual([
    ['mock/mock-model', 'Configured mock'],
    ['mock/mock-large', 'mock-large'],
    ['mock/mock-small', 'mock-small'],
  ]);
  expect(first.warnings).toEqual([]);

  now += 59_000;
  await discovery.catalog('server');
  expect(mock.modelListRequests).toBe(1);
  await discovery.catalog('server', true);
  expect(mock.modelListRequests).toBe(2);
  // Another scope is cached apart.
  await discovery.catalog('project-a');
  expect(mock.modelListRequests).toBe(3);
  now += 61_000;
  await discovery.catalog('server');
  expect(mock.modelListRequests).toBe(4);
});

it('a provider that cannot be reached gives a warning, keeps the configured models and is asked again after the shorter time-to-live', async () => {
  const port = await closedPort();
  const registry = new ModelRegistry({ providers: { gone: { kind: 'openai-compatible', baseURL: `http://127.0.0.1:${port}/v1`, models: { kept: {} } } }, defaultModel: 'gone/kept' });
  let now = 0;
  const discovery = new ModelDiscovery(() => registry, { ttlMs: 60_000, warningTtlMs: 5_000, now: () => now });
  const catalog = await discovery.catalog('server');
  expect(catalog.models.map((model) => model.id)).toEqual(['gone/kept']);
  expect(catalog.warnings).toEqual([expect.stringMatching(new RegExp(`^provider "gone": GET http://127.0.0.1:${port}/v1/models failed: `))]);
  now += 4_000;
  await discovery.catalog('server');
  expect(discovery.discoveries).toBe(1);
  now += 2_000;
  await discovery.catalog('server');
  expect(discovery.discoveries).toBe(2);
});

it('models/list over the protocol lists discovered models and refreshes with refresh: true', async () => {
  harness = await startPlatformServer('responses: []\nmodels: [mock-model, mock-extra]\n');
  harness.server.runtime.modelDiscovery = new ModelDiscovery(() => harness!.server.runtime.models);
  const owner = await harness.connect();
  const listed = await owner.client.request('models/list', {});
  expect(listed.models.map((model) => model.id)).toEqual(['mock/mock-model', 'mock/mock-extra']);
  expect(listed.discoveredAt).toBeTypeOf('number');
  await owner.client.request('models/list', {});
  expect(harness.environment.mock.modelListRequests).toBe(1);
  await owner.client.request('models/list', { refresh: true });
  expect(harness.environment.mock.modelListRequests).toBe(2);
});

it('platform mode asks the providers for their models by itself; a single-user server does not', async () => {
  const script = 'responses: []\nmodels: [mock-model, mock-extra]\n';
  harness = await startPlatformServer(script, { platform: true });
  const owner = await harness.connect();
  expect((await owner.client.request('models/list', {})).models.map((model) => model.id)).toContain('mock/mock-extra');
  expect(harness.environment.mock.modelListRequests).toBe(1);
  await harness.stop();
  harness = await startPlatformServer(script);
  const single = await harness.connect();
  expect((await single.client.request('models/list', {})).models.map((model) => model.id)).not.toContain('mock/mock-extra');
  expect(harness.environment.mock.modelListRequests).toBe(0);
});
