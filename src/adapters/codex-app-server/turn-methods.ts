/**
 * Codex `turn/*` requests and the catalog requests on the runtime protocol: `turn/start` →
 * `session/input` (the root session; `model` also `session/setModel`, as Codex keeps it for
 * later turns), `turn/steer` → `session/input` with `mode: "steer"`, `turn/interrupt` →
 * `session/interrupt`, `model/list` → `models/list`, `config/read` → the default model.
 */
import { z } from 'zod';
import type { ContentPart } from '../../protocol/index.js';
import { toCodexId } from '../../protocol/codex-ids.js';
import { startingTurnOf } from './entities.js';
import { openVaalaId, type CodexMethodHandler } from './method-context.js';
import { resolveModel } from './thread-methods.js';
import { CodexErrorCodes, CodexRpcError, parseParams } from './wire.js';

/** A Codex `UserInput` as far as the adapter reads it (the variant is checked by `contentOf`). */
const userInput = z.object({ type: z.string() }).passthrough();

/**
 * Codex `UserInput`s as OpenVaala content: text as text, `image` (URL) as an image,
 * `localImage` and `mention` as files by path.
 * @throws CodexRpcError -32602 naming the index of an input that has no OpenVaala counterpart (audio, skills, uploaded file ids)
 */
function contentOf(method: string, inputs: readonly Record<string, unknown>[]): ContentPart[] {
  return inputs.map((input, index) => {
    const where = `${method}: params.input[${index}]`;
    if (input.type === 'text' && typeof input.text === 'string') return { type: 'text', text: input.text };
    if (input.type === 'image' && typeof input.url === 'string') return { type: 'image', url: input.url };
    if ((input.type === 'localImage' || input.type === 'mention') && typeof input.path === 'string') return { type: 'file', path: input.path, ...(typeof input.name === 'string' ? { name: input.name } : {}) };
    throw new CodexRpcError(CodexErrorCodes.invalidParams, `${where}: input of type ${JSON.stringify(input.type)} is not supported (text, image with url, localImage and mention are)`);
  });
}

const turnStartParams = z.object({
  threadId: z.string(),
  input: z.array(userInput).min(1),
  model: z.string().nullable().optional(),
  effort: z.enum(['none', 'minimal', 'low', 'medium', 'high']).nullable().optional(),
  clientUserMessageId: z.string().min(1).max(200).nullable().optional(),
});

const turnStart: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('turn/start', turnStartParams, raw);
  const conversationId = openVaalaId('turn/start', 'threadId', params.threadId, 'conv');
  const content = contentOf('turn/start', params.input);
  // Events of the turn are translated only for followed threads (a thread started elsewhere is followed now).
  await context.follow(conversationId);
  const model = await resolveModel('turn/start', context, params.model);
  if (model) await context.runtime.request('session/setModel', { conversationId, model });
  const input = await context.runtime.request('session/input', {
    conversationId,
    input: content,
    ...(params.effort ? { reasoningEffort: params.effort } : {}),
    ...(params.clientUserMessageId ? { clientMessageId: params.clientUserMessageId } : {}),
  });
  if (!input.turnId) throw new CodexRpcError(CodexErrorCodes.internalError, 'turn/start: the runtime started no turn for the input');
  return { turn: startingTurnOf(input.turnId) };
};

const turnSteer: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('turn/steer', z.object({ threadId: z.string(), expectedTurnId: z.string(), input: z.array(userInput).min(1) }), raw);
  const conversationId = openVaalaId('turn/steer', 'threadId', params.threadId, 'conv');
  const expectedTurnId = openVaalaId('turn/steer', 'expectedTurnId', params.expectedTurnId, 'turn');
  const content = contentOf('turn/steer', params.input);
  const input = await context.runtime.request('session/input', { conversationId, input: content, mode: 'steer', expectedTurnId });
  return { turnId: toCodexId(input.turnId ?? expectedTurnId) };
};

const turnInterrupt: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('turn/interrupt', z.object({ threadId: z.string(), turnId: z.string() }), raw);
  const conversationId = openVaalaId('turn/interrupt', 'threadId', params.threadId, 'conv');
  const turnId = openVaalaId('turn/interrupt', 'turnId', params.turnId, 'turn');
  await context.runtime.request('session/interrupt', { conversationId, turnId });
  return {};
};

const EFFORT_DESCRIPTIONS: Record<string, string> = {
  none: 'no reasoning',
  minimal: 'the least reasoning the model does',
  low: 'quick answers with little reasoning',
  medium: 'balanced reasoning',
  high: 'thorough reasoning for hard problems',
};

const modelList: CodexMethodHandler = async (raw, context) => {
  const params = parseParams('model/list', z.object({ modelProvider: z.string().nullable().optional() }), raw);
  const { models, defaultModel } = await context.runtime.request('models/list', {});
  const data = models
    .filter((model) => !params.modelProvider || model.provider === params.modelProvider)
    .map((model) => ({
      id: model.id,
      model: model.id,
      displayName: model.displayName,
      description: `${model.provider} (${model.kind})${model.contextWindow ? `, ${model.contextWindow} tokens of context` : ''}`,
      hidden: false,
      isDefault: model.id === defaultModel,
      supportedReasoningEfforts: model.reasoningEfforts.map((effort) => ({ reasoningEffort: effort, description: EFFORT_DESCRIPTIONS[effort] ?? effort })),
      defaultReasoningEffort: model.reasoningEfforts.includes('medium') ? 'medium' : (model.reasoningEfforts[0] ?? 'none'),
      inputModalities: model.capabilities.images ? ['text', 'image'] : ['text'],
    }));
  return { data, nextCursor: null };
};

/** `config/read`: the Codex settings OpenVaala has a value for (the default model and its provider); the rest is the server's own configuration. */
const configRead: CodexMethodHandler = async (raw, context) => {
  parseParams('config/read', z.object({ cwd: z.string().nullable().optional(), includeLayers: z.boolean().optional() }), raw);
  const { defaultModel } = await context.runtime.request('models/list', {});
  const provider = defaultModel?.includes('/') ? defaultModel.slice(0, defaultModel.indexOf('/')) : null;
  return { config: { model: defaultModel ?? null, model_provider: provider }, origins: {} };
};

/** The `turn/*`, `model/list` and `config/read` handlers by method. */
export const turnMethods: Record<string, CodexMethodHandler> = {
  'turn/start': turnStart,
  'turn/steer': turnSteer,
  'turn/interrupt': turnInterrupt,
  'model/list': modelList,
  'config/read': configRead,
};
