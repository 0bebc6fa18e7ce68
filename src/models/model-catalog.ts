/**
 * The models catalog (`models/list`): the models named in `providers.yaml` (and the default
 * model), with context window and capabilities from configuration, else from a small table
 * of well-known model families.
 */
import type { ModelPrices, ModelSettings, ProvidersFile, ReasoningSettings } from '../config/providers.js';
import type { ModelInfo, ReasoningEffort } from '../protocol/index.js';

interface KnownFamily {
  pattern: RegExp;
  contextWindow: number;
  reasoning: boolean;
  images: boolean;
}

// Published context windows of common families; configuration overrides them.
const KNOWN_FAMILIES: KnownFamily[] = [
  { pattern: /^gpt-5/, contextWindow: 400_000, reasoning: true, images: true },
  { pattern: /^gpt-4\.1/, contextWindow: 1_047_576, reasoning: false, images: true },
  { pattern: /^gpt-4o/, contextWindow: 128_000, reasoning: false, images: true },
  { pattern: /^o[34]/, contextWindow: 200_000, reasoning: true, images: true },
  { pattern: /^claude-/, contextWindow: 200_000, reasoning: true, images: true },
  { pattern: /^gemini-/, contextWindow: 1_048_576, reasoning: true, images: true },
];

/** Context window assumed for a model nobody told us about, in tokens. */
export const FALLBACK_CONTEXT_WINDOW = 128_000;

/**
 * The efforts each provider kind can be asked for (see `src/models/reasoning.ts`): the Responses
 * API takes `reasoning.effort` minimal…high; Chat Completions servers take `reasoning_effort`
 * low…high; Anthropic and Gemini take a thinking budget, where `none` means no thinking.
 */
const EFFORTS_BY_KIND: Record<string, ReasoningEffort[]> = {
  openai: ['minimal', 'low', 'medium', 'high'],
  'openai-compatible': ['low', 'medium', 'high'],
  anthropic: ['none', 'minimal', 'low', 'medium', 'high'],
  google: ['none', 'minimal', 'low', 'medium', 'high'],
};

/** The catalog entry of one model: configured settings over the known family's, over defaults. */
export function describeModel(providerName: string, kind: string, modelId: string, settings: ModelSettings = {}): ModelInfo {
  const family = KNOWN_FAMILIES.find((known) => known.pattern.test(modelId));
  const contextWindow = settings.contextWindow ?? family?.contextWindow;
  const reasoning = settings.reasoning !== undefined ? settings.reasoning !== false : (family?.reasoning ?? false);
  return {
    id: `${providerName}/${modelId}`,
    provider: providerName,
    kind,
    displayName: settings.displayName ?? modelId,
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    ...(settings.maxOutputTokens !== undefined ? { maxOutputTokens: settings.maxOutputTokens } : {}),
    capabilities: {
      tools: settings.tools ?? true,
      reasoning,
      images: settings.images ?? family?.images ?? false,
    },
    reasoningEfforts: reasoning ? [...(EFFORTS_BY_KIND[kind] ?? [])] : [],
    ...(settings.prices ? { prices: { ...settings.prices } } : {}),
  };
}

/**
 * The prices of a model, USD per million tokens: those configured in `providers.yaml`
 * (`providers.<name>.models.<id>.prices`), else undefined (the built-in catalog holds no
 * prices: published prices change too often to be built in).
 * @param catalog the loaded `providers.yaml`
 * @param modelId `provider/model-id`
 * @returns the prices, or undefined when the model, its provider or its prices are unknown (never throws)
 */
export function modelPrices(catalog: ProvidersFile, modelId: string): ModelPrices | undefined {
  const slash = modelId.indexOf('/');
  if (slash <= 0) return undefined;
  const prices = catalog.providers[modelId.slice(0, slash)]?.models?.[modelId.slice(slash + 1)]?.prices;
  return prices ? { ...prices } : undefined;
}

/** Lists the configured models, the default model first. */
export function listModels(providers: ProvidersFile): ModelInfo[] {
  const models = new Map<string, ModelInfo>();
  const add = (providerName: string, modelId: string) => {
    const provider = providers.providers[providerName];
    if (!provider || models.has(`${providerName}/${modelId}`)) return;
    models.set(`${providerName}/${modelId}`, describeModel(providerName, provider.kind, modelId, provider.models?.[modelId]));
  };
  if (providers.defaultModel) {
    const slash = providers.defaultModel.indexOf('/');
    add(providers.defaultModel.slice(0, slash), providers.defaultModel.slice(slash + 1));
  }
  for (const [providerName, provider] of Object.entries(providers.providers)) {
    for (const modelId of Object.keys(provider.models ?? {})) add(providerName, modelId);
  }
  return [...models.values()];
}

/** The context window of a model (configured, known family, or the fallback), in tokens. */
export function contextWindowOf(providers: ProvidersFile, providerName: string, modelId: string): number {
  const provider = providers.providers[providerName];
  return describeModel(providerName, provider?.kind ?? 'unknown', modelId, provider?.models?.[modelId]).contextWindow ?? FALLBACK_CONTEXT_WINDOW;
}

/**
 * What a model is asked for when it reasons: the configured settings, `{}` (defaults) for a
 * model configured `reasoning: true` or of a known reasoning family, undefined for a model
 * that does not reason (no reasoning is requested unless a turn asks for an effort).
 */
export function reasoningOf(providers: ProvidersFile, providerName: string, modelId: string): ReasoningSettings | undefined {
  const configured = providers.providers[providerName]?.models?.[modelId]?.reasoning;
  if (typeof configured === 'object') return configured;
  if (configured !== undefined) return configured ? {} : undefined;
  return KNOWN_FAMILIES.find((known) => known.pattern.test(modelId))?.reasoning ? {} : undefined;
}
