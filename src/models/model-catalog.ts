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

/**
 * List prices of well-known models, USD per million tokens (input, cached input, output), as
 * their providers published them in 2025. Matched on the model id's start, most specific
 * first; the first match applies. Prices change: `providers.yaml` `prices` overrides these for
 * any model, and a model not listed here has no price unless configured.
 */
const KNOWN_PRICES: { pattern: RegExp; prices: ModelPrices }[] = [
  { pattern: /^gpt-5-nano/, prices: { inputPerMillionUsd: 0.05, cachedInputPerMillionUsd: 0.005, outputPerMillionUsd: 0.4 } },
  { pattern: /^gpt-5-mini/, prices: { inputPerMillionUsd: 0.25, cachedInputPerMillionUsd: 0.025, outputPerMillionUsd: 2 } },
  { pattern: /^gpt-5(?:-codex)?(?:-\d{4}-\d{2}-\d{2})?$/, prices: { inputPerMillionUsd: 1.25, cachedInputPerMillionUsd: 0.125, outputPerMillionUsd: 10 } },
  { pattern: /^gpt-4\.1-nano/, prices: { inputPerMillionUsd: 0.1, cachedInputPerMillionUsd: 0.025, outputPerMillionUsd: 0.4 } },
  { pattern: /^gpt-4\.1-mini/, prices: { inputPerMillionUsd: 0.4, cachedInputPerMillionUsd: 0.1, outputPerMillionUsd: 1.6 } },
  { pattern: /^gpt-4\.1(?:-\d{4}-\d{2}-\d{2})?$/, prices: { inputPerMillionUsd: 2, cachedInputPerMillionUsd: 0.5, outputPerMillionUsd: 8 } },
  { pattern: /^gpt-4o-mini/, prices: { inputPerMillionUsd: 0.15, cachedInputPerMillionUsd: 0.075, outputPerMillionUsd: 0.6 } },
  { pattern: /^gpt-4o(?:-\d{4}-\d{2}-\d{2})?$/, prices: { inputPerMillionUsd: 2.5, cachedInputPerMillionUsd: 1.25, outputPerMillionUsd: 10 } },
  { pattern: /^o4-mini/, prices: { inputPerMillionUsd: 1.1, cachedInputPerMillionUsd: 0.275, outputPerMillionUsd: 4.4 } },
  { pattern: /^o3(?:-\d{4}-\d{2}-\d{2})?$/, prices: { inputPerMillionUsd: 2, cachedInputPerMillionUsd: 0.5, outputPerMillionUsd: 8 } },
  // Opus 4.5 and later are priced lower than Opus 4 and 4.1.
  { pattern: /^claude-opus-4-[5-9]/, prices: { inputPerMillionUsd: 5, cachedInputPerMillionUsd: 0.5, outputPerMillionUsd: 25 } },
  { pattern: /^claude-opus-4/, prices: { inputPerMillionUsd: 15, cachedInputPerMillionUsd: 1.5, outputPerMillionUsd: 75 } },
  { pattern: /^claude-sonnet-4/, prices: { inputPerMillionUsd: 3, cachedInputPerMillionUsd: 0.3, outputPerMillionUsd: 15 } },
  { pattern: /^claude-3-5-haiku/, prices: { inputPerMillionUsd: 0.8, cachedInputPerMillionUsd: 0.08, outputPerMillionUsd: 4 } },
  { pattern: /^gemini-2\.5-flash-lite/, prices: { inputPerMillionUsd: 0.1, cachedInputPerMillionUsd: 0.025, outputPerMillionUsd: 0.4 } },
  { pattern: /^gemini-2\.5-flash/, prices: { inputPerMillionUsd: 0.3, cachedInputPerMillionUsd: 0.075, outputPerMillionUsd: 2.5 } },
];

/** The built-in list prices of a model id (without its provider), if it is a well-known one. */
export function knownPrices(modelId: string): ModelPrices | undefined {
  const known = KNOWN_PRICES.find((entry) => entry.pattern.test(modelId));
  return known ? { ...known.prices } : undefined;
}

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
    ...(settings.prices ? { prices: { ...settings.prices } } : withKnownPrices(modelId)),
  };
}

function withKnownPrices(modelId: string): { prices?: ModelPrices } {
  const prices = knownPrices(modelId);
  return prices ? { prices } : {};
}

/**
 * The prices of a model, USD per million tokens: those configured in `providers.yaml`
 * (`providers.<name>.models.<id>.prices`), else the built-in list prices of a well-known
 * model, else undefined.
 * @param catalog the loaded `providers.yaml`
 * @param modelId `provider/model-id`
 * @returns the prices, or undefined when the model, its provider or its prices are unknown (never throws)
 */
export function modelPrices(catalog: ProvidersFile, modelId: string): ModelPrices | undefined {
  const slash = modelId.indexOf('/');
  if (slash <= 0) return undefined;
  const prices = catalog.providers[modelId.slice(0, slash)]?.models?.[modelId.slice(slash + 1)]?.prices;
  return prices ? { ...prices } : knownPrices(modelId.slice(slash + 1));
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
