/**
 * Reasoning over real HTTP against the mock provider in each wire format: what each request
 * asks for (configured settings, a turn's override, nothing for a model that does not reason),
 * and that reasoning is sent back only to the model that produced it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

type Body = Record<string, unknown>;
type Kind = 'openai' | 'openai-compatible' | 'anthropic' | 'google';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

function body(index: number): Body {
  const request = harness?.environment.mock.requests[index];
  if (!request) throw new Error(`the mock received no request #${index + 1}`);
  return request.body as Body;
}

/** The reasoning fields of a request body, per wire format. */
function reasoningFields(kind: Kind, request: Body): unknown {
  switch (kind) {
    case 'openai':
      return { reasoning: request.reasoning, include: request.include, store: request.store };
    case 'openai-compatible':
      return { reasoning_effort: request.reasoning_effort };
    case 'anthropic':
      return { thinking: request.thinking };
    case 'google':
      return { thinkingConfig: (request.generationConfig as Body | undefined)?.thinkingConfig };
  }
}

const expected: Record<Kind, { configured: unknown; low: unknown; none: unknown }> = {
  openai: {
    configured: { reasoning: { effort: 'high', summary: 'detailed' }, include: ['reasoning.encrypted_content'], store: false },
    low: { reasoning: { effort: 'low', summary: 'detailed' }, include: ['reasoning.encrypted_content'], store: false },
    none: { reasoning: undefined, include: undefined, store: undefined },
  },
  'openai-compatible': { configured: { reasoning_effort: 'high' }, low: { reasoning_effort: 'low' }, none: { reasoning_effort: undefined } },
  anthropic: { configured: { thinking: { type: 'enabled', budget_tokens: 20000 } }, low: { thinking: { type: 'enabled', budget_tokens: 4096 } }, none: { thinking: undefined } },
  google: {
    configured: { thinkingConfig: { thinkingBudget: 20000, includeThoughts: true } },
    low: { thinkingConfig: { thinkingBudget: 4096, includeThoughts: true } },
    none: { thinkingConfig: undefined },
  },
};

describe.each(['openai', 'openai-compatible', 'anthropic', 'google'] as const)('reasoning requested over %s', (kind) => {
  it('asks for the configured reasoning, a turn\'s effort over it, and nothing for a model that does not reason', async () => {
    harness = await startInProcessServer(
      `
responses:
  - text: "one"
  - text: "two"
  - text: "three"
`,
      {
        providersYaml: (baseURL) =>
          `providers:\n  p:\n    kind: ${kind}\n    baseURL: ${baseURL}\n    apiKey: none\n    models:\n      thinker: { reasoning: { effort: high, budgetTokens: 20000, summary: detailed } }\n      plain-model: { reasoning: false }\ndefaultModel: p/thinker\n`,
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'first' });
    await harness.turnsCompleted(1);
    await harness.client.request('session/input', { conversationId, input: 'second', reasoningEffort: 'low' });
    await harness.turnsCompleted(2);
    await harness.client.request('session/setModel', { conversationId, model: 'p/plain-model' });
    await harness.client.request('session/input', { conversationId, input: 'third' });
    const turns = await harness.turnsCompleted(3);
    expect(turns.map((turn) => turn.status)).toEqual(['completed', 'completed', 'completed']);
    expect(reasoningFields(kind, body(0))).toEqual(expected[kind].configured);
    expect(reasoningFields(kind, body(1))).toEqual(expected[kind].low);
    expect(reasoningFields(kind, body(2))).toEqual(expected[kind].none);
    const { models } = await harness.client.request('models/list', {});
    expect(models.map((model) => [model.id, model.capabilities.reasoning])).toEqual([['p/thinker', true], ['p/plain-model', false]]);
  });
});

/** Anthropic thinking blocks of a request, with their signatures. */
function thinkingBlocks(request: Body): { type: string; signature?: string; thinking?: string }[] {
  const messages = request.messages as { content: string | { type: string; signature?: string; thinking?: string }[] }[];
  return messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content)).filter((block) => block.type === 'thinking' || block.type === 'redacted_thinking');
}

/** The signature the mock gives the reasoning of its n-th request (1-based). */
const mockSignature = (requestNumber: number) => Buffer.from(`openvaala-mock-reasoning-${requestNumber}`).toString('base64');

describe('reasoning after a model change', () => {
  const script = `
responses:
  - reasoning: "REASONING-ONE first model thinks"
    toolCalls: [{ name: list_dir, arguments: {} }]
  - text: "done one"
  - reasoning: "REASONING-TWO second model thinks"
    toolCalls: [{ name: list_dir, arguments: {} }]
  - text: "done two"
`;

  it('never sends an Anthropic thinking block signed by another model of the same provider', async () => {
    harness = await startInProcessServer(script, {
      providersYaml: (baseURL) => `providers:\n  c:\n    kind: anthropic\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { model-one: { reasoning: true }, model-two: { reasoning: true } }\ndefaultModel: c/model-one\n`,
    });
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'look around' });
    await harness.turnsCompleted(1);
    // Same model: its own thinking goes back with its signature.
    expect(thinkingBlocks(body(1)).map((block) => block.signature)).toEqual([mockSignature(1)]);

    await harness.client.request('session/setModel', { conversationId, model: 'c/model-two' });
    await harness.client.request('session/input', { conversationId, input: 'look again' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status, turns[1]?.error).toBe('completed');
    for (const index of [2, 3]) {
      const signatures = thinkingBlocks(body(index)).map((block) => block.signature);
      expect(signatures).not.toContain(mockSignature(1));
      expect(JSON.stringify(body(index))).not.toContain('REASONING-ONE');
    }
    // The new model's own thinking is still sent back within its turn.
    expect(thinkingBlocks(body(3)).map((block) => block.signature)).toEqual([mockSignature(3)]);
    const reasoning = harness.completedItems().filter((item): item is Extract<Item, { kind: 'reasoning' }> => item.kind === 'reasoning');
    expect(reasoning.map((item) => item.model)).toEqual(['c/model-one', 'c/model-two']);
  });

  it('never sends OpenAI encrypted reasoning to another model, nor another kind\'s reasoning to Anthropic', async () => {
    harness = await startInProcessServer(
      `${script}  - reasoning: "REASONING-THREE"\n    toolCalls: [{ name: list_dir, arguments: {} }]\n  - text: "done three"\n`,
      {
        providersYaml: (baseURL) =>
          `providers:\n  o:\n    kind: openai\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { gpt-a: { reasoning: true }, gpt-b: { reasoning: true } }\n  c:\n    kind: anthropic\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { claude-x: { reasoning: true } }\ndefaultModel: o/gpt-a\n`,
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'look around' });
    await harness.turnsCompleted(1);
    const reasoningInput = (index: number) => (body(index).input as { type?: string; encrypted_content?: string }[]).filter((entry) => entry.type === 'reasoning');
    // Same model: the encrypted reasoning goes back.
    expect(reasoningInput(1).map((entry) => entry.encrypted_content)).toEqual([mockSignature(1)]);

    await harness.client.request('session/setModel', { conversationId, model: 'o/gpt-b' });
    await harness.client.request('session/input', { conversationId, input: 'look again' });
    await harness.turnsCompleted(2);
    expect(reasoningInput(2)).toEqual([]);
    expect(reasoningInput(3).map((entry) => entry.encrypted_content)).toEqual([mockSignature(3)]);

    await harness.client.request('session/setModel', { conversationId, model: 'c/claude-x' });
    await harness.client.request('session/input', { conversationId, input: 'and once more' });
    const turns = await harness.turnsCompleted(3);
    expect(turns[2]?.status, turns[2]?.error).toBe('completed');
    expect(thinkingBlocks(body(4))).toEqual([]);
    expect(thinkingBlocks(body(5)).map((block) => block.signature)).toEqual([mockSignature(5)]);
  });

  it('sends a Gemini thought signature back with its function call to the same model only', async () => {
    harness = await startInProcessServer(script, {
      providersYaml: (baseURL) => `providers:\n  g:\n    kind: google\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { gem-a: { reasoning: true }, gem-b: { reasoning: true } }\ndefaultModel: g/gem-a\n`,
    });
    const signaturesOfCalls = (index: number) =>
      (body(index).contents as { parts: { functionCall?: unknown; thoughtSignature?: string }[] }[]).flatMap((content) => content.parts).filter((part) => part.functionCall).map((part) => part.thoughtSignature ?? null);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'look around' });
    await harness.turnsCompleted(1);
    expect(signaturesOfCalls(1)).toEqual([mockSignature(1)]);
    await harness.client.request('session/setModel', { conversationId, model: 'g/gem-b' });
    await harness.client.request('session/input', { conversationId, input: 'look again' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status, turns[1]?.error).toBe('completed');
    expect(signaturesOfCalls(2)).toEqual([null]);
    expect(signaturesOfCalls(3)).toEqual([null, mockSignature(3)]);
  });
});
