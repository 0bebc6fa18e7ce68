/**
 * `agents/list`, `session/setAgent` and the `models/list` catalog over a real WebSocket against
 * a real server, with the mock provider answering in the Responses wire format.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProvidersFile } from '../../src/config/providers.js';
import { modelPrices } from '../../src/models/model-catalog.js';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createLogger } from '../../src/logger.js';
import type { Item } from '../../src/protocol/index.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
let restarted: { server: RunningServer; client: RuntimeClient } | undefined;
afterEach(async () => {
  if (restarted) {
    await restarted.client.close();
    await restarted.server.stop();
    restarted = undefined;
  }
  await harness?.stop();
  harness = undefined;
});

const providers = (baseURL: string) => `providers:
  p:
    kind: openai
    baseURL: ${baseURL}
    apiKey: none
    models:
      main-model:
        displayName: Main Model
        contextWindow: 100000
        maxOutputTokens: 8000
        reasoning: true
        prices: { inputPerMillionUsd: 1.25, outputPerMillionUsd: 10, cachedInputPerMillionUsd: 0.125 }
      review-model: { reasoning: false }
defaultModel: p/main-model
`;

const agents = `agents:
  coder:
    default: true
    description: Writes code
    approvals:
      default: allow
      rules:
        - { tool: exec_command, match: { command: "git push*" }, decision: ask }
  reviewer:
    description: Reviews changes
    model: p/review-model
    instructions: REVIEWER-INSTRUCTIONS read carefully
    maxSteps: 7
`;

async function start(script: string): Promise<InProcessServer> {
  return startInProcessServer(script, { providersYaml: providers, beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), agents) });
}

function requestBody(index: number): Record<string, unknown> {
  const request = harness?.environment.mock.requests[index];
  if (!request) throw new Error(`the mock received no request #${index + 1}`);
  return request.body as Record<string, unknown>;
}

describe('agents/list', () => {
  it('describes every agent of agents.yaml and names the default', async () => {
    harness = await start('responses: [{ text: "hi" }]');
    const listed = await harness.client.request('agents/list', {});
    expect(listed.defaultAgent).toBe('coder');
    expect(listed.agents).toEqual([
      {
        name: 'coder',
        description: 'Writes code',
        hasInstructions: false,
        approvals: { default: 'allow', rules: [{ tool: 'exec_command', match: { command: 'git push*' }, decision: 'ask' }] },
        default: true,
      },
      { name: 'reviewer', description: 'Reviews changes', model: 'p/review-model', hasInstructions: true, maxSteps: 7, approvals: { default: 'allow', rules: [] }, default: false },
    ]);
  });
});

describe('session/setAgent', () => {
  it('runs the next turn as the new agent, with its instructions and model, and records the change', async () => {
    harness = await start('responses: [{ text: "one" }, { text: "two" }]');
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'first' });
    await harness.turnsCompleted(1);
    expect(JSON.stringify(requestBody(0))).not.toContain('REVIEWER-INSTRUCTIONS');
    expect(requestBody(0).model).toBe('main-model');

    const changed = await harness.client.request('session/setAgent', { conversationId, agent: 'reviewer' });
    expect(changed.deferred).toBe(false);
    expect(changed.session).toMatchObject({ agent: 'reviewer', model: 'p/review-model' });
    await harness.client.request('session/input', { conversationId, input: 'second' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status, turns[1]?.error).toBe('completed');
    expect(JSON.stringify(requestBody(1))).toContain('REVIEWER-INSTRUCTIONS read carefully');
    expect(requestBody(1).model).toBe('review-model');
    const changes = harness.completedItems().filter((item): item is Extract<Item, { kind: 'agent_change' | 'model_change' }> => item.kind === 'agent_change' || item.kind === 'model_change');
    expect(changes.map((item) => [item.kind, item.from, item.to])).toEqual([
      ['agent_change', 'coder', 'reviewer'],
      ['model_change', 'p/main-model', 'p/review-model'],
    ]);
    // The history read back from storage shows it too.
    const { items } = await harness.client.request('items/list', { conversationId });
    expect(items.map((stored) => stored.item.kind)).toContain('agent_change');
  });

  it('records the change at the next turn when the server restarted in between', async () => {
    harness = await start('responses: [{ text: "one" }, { text: "two" }]');
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'first' });
    await harness.turnsCompleted(1);
    const changed = await harness.client.request('session/setAgent', { conversationId, agent: 'reviewer' });
    expect(changed.session.pendingAgentChange).toMatchObject({ from: 'coder' });

    // A new server process on the same data directory, before the next turn.
    await harness.client.close();
    await harness.server.stop();
    const server = await startRuntimeServer({ paths: harness.environment.paths, port: 0, logger: createLogger('silent') });
    const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'after-restart' });
    restarted = { server, client };
    const after: Item[] = [];
    const finished = new Promise<void>((resolve) =>
      client.onNotification((event) => {
        if (event.method === 'item/completed') after.push(event.params.item);
        if (event.method === 'turn/completed') resolve();
      }),
    );
    const snapshot = await client.request('conversation/subscribe', { conversationId });
    expect(snapshot.sessions[0]).toMatchObject({ agent: 'reviewer', pendingAgentChange: { from: 'coder' } });
    await client.request('session/input', { conversationId, input: 'second' });
    await finished;
    expect(JSON.stringify(requestBody(1))).toContain('REVIEWER-INSTRUCTIONS read carefully');
    const changes = after.filter((item): item is Extract<Item, { kind: 'agent_change' | 'model_change' }> => item.kind === 'agent_change' || item.kind === 'model_change');
    expect(changes.map((item) => [item.kind, item.from, item.to])).toEqual([
      ['agent_change', 'coder', 'reviewer'],
      ['model_change', 'p/main-model', 'p/review-model'],
    ]);
    // Recorded once: the pending change is cleared, in the stored state too.
    const { sessions } = await client.request('conversation/get', { conversationId });
    expect(sessions[0]?.pendingAgentChange).toBeUndefined();
    const { items } = await client.request('items/list', { conversationId });
    expect(items.filter((stored) => stored.item.kind === 'agent_change')).toHaveLength(1);
  });

  it('says that a running turn keeps its agent and the change applies from the next turn', async () => {
    // The first answer holds after its first delta until the agent change was asked for.
    harness = await start('responses: [{ deltas: ["a", "b", "c", "d"], holds: [{ afterDeltas: 1, gate: changed }] }, { text: "next" }]');
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'slow' });
    await harness.waitFor((event) => event.method === 'item/delta');
    const changed = await harness.client.request('session/setAgent', { conversationId, agent: 'reviewer' });
    expect(changed.deferred).toBe(true);
    harness.environment.mock.release('changed');
    await harness.turnsCompleted(1);
    expect(JSON.stringify(requestBody(0))).not.toContain('REVIEWER-INSTRUCTIONS');
    await harness.client.request('session/input', { conversationId, input: 'again' });
    await harness.turnsCompleted(2);
    expect(JSON.stringify(requestBody(1))).toContain('REVIEWER-INSTRUCTIONS');
  });

  it('refuses an agent agents.yaml does not define, naming params.agent, and changes nothing', async () => {
    harness = await start('responses: [{ text: "hi" }]');
    const conversationId = await harness.conversation();
    const refused = harness.client.request('session/setAgent', { conversationId, agent: 'ghost' });
    await expect(refused).rejects.toMatchObject({ code: -32602 });
    await expect(refused).rejects.toThrow(/session\/setAgent: params\.agent: agent "ghost" is not defined in agents\.yaml \(defined: coder, reviewer\)/);
    const { sessions } = await harness.client.request('session/list', { conversationId });
    expect(sessions[0]?.agent).toBe('coder');
  });

  it('refuses an agent whose model cannot be used, naming params.agent and why', async () => {
    harness = await startInProcessServer('responses: [{ text: "hi" }]', {
      providersYaml: (baseURL) => providers(baseURL).replace('defaultModel:', `  keyed: { kind: openai, baseURL: ${baseURL}, apiKey: env:OPENVAALA_TEST_UNSET_KEY }\ndefaultModel:`),
      beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), `${agents}  locked:\n    model: keyed/some-model\n`),
    });
    const conversationId = await harness.conversation();
    const refused = harness.client.request('session/setAgent', { conversationId, agent: 'locked' });
    await expect(refused).rejects.toMatchObject({ code: -32602 });
    await expect(refused).rejects.toThrow(/session\/setAgent: params\.agent: agent "locked" cannot run: .*OPENVAALA_TEST_UNSET_KEY is not set/);
  });

  it('refuses a session that is not part of the conversation, naming params.sessionId', async () => {
    harness = await start('responses: [{ text: "hi" }]');
    const conversationId = await harness.conversation();
    await expect(harness.client.request('session/setAgent', { conversationId, sessionId: 'sess_nothere', agent: 'reviewer' })).rejects.toThrow(/params\.sessionId/);
  });
});

describe('models/list', () => {
  it('lists display name, context window, output limit, reasoning efforts and configured prices', async () => {
    harness = await start('responses: [{ text: "hi" }]');
    const { models, defaultModel } = await harness.client.request('models/list', {});
    expect(defaultModel).toBe('p/main-model');
    expect(models).toEqual([
      {
        id: 'p/main-model',
        provider: 'p',
        kind: 'openai',
        displayName: 'Main Model',
        contextWindow: 100000,
        maxOutputTokens: 8000,
        capabilities: { tools: true, reasoning: true, images: false },
        reasoningEfforts: ['minimal', 'low', 'medium', 'high'],
        prices: { inputPerMillionUsd: 1.25, outputPerMillionUsd: 10, cachedInputPerMillionUsd: 0.125 },
      },
      { id: 'p/review-model', provider: 'p', kind: 'openai', displayName: 'review-model', capabilities: { tools: true, reasoning: false, images: false }, reasoningEfforts: [] },
    ]);
  });
});

describe('modelPrices', () => {
  it('reads the configured prices of a model, and nothing for an unknown one', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-prices-'));
    try {
      writeFileSync(path.join(directory, 'providers.yaml'), providers('http://127.0.0.1:1/v1'));
      const catalog = await loadProvidersFile(directory);
      expect(modelPrices(catalog, 'p/main-model')).toEqual({ inputPerMillionUsd: 1.25, outputPerMillionUsd: 10, cachedInputPerMillionUsd: 0.125 });
      expect(modelPrices(catalog, 'p/review-model')).toBeUndefined();
      expect(modelPrices(catalog, 'q/main-model')).toBeUndefined();
      expect(modelPrices(catalog, 'no-slash')).toBeUndefined();
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('refuses a negative or missing price, naming the file, line and key path', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-prices-'));
    try {
      writeFileSync(path.join(directory, 'providers.yaml'), 'providers:\n  p:\n    kind: openai\n    models:\n      m:\n        prices: { inputPerMillionUsd: -1 }\n');
      const failure = loadProvidersFile(directory);
      await expect(failure).rejects.toThrow(/providers\.yaml:6.*providers\.p\.models\.m\.prices\.inputPerMillionUsd/);
      await expect(loadProvidersFile(directory)).rejects.toThrow(/providers\.p\.models\.m\.prices\.outputPerMillionUsd/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
