/**
 * Turns `<provider>/<model-id>` names into AI SDK language models, using the providers of
 * `providers.yaml` (SPEC §6, §8). Each provider kind maps to its Vercel AI SDK package:
 * `openai` → Responses API, `openai-compatible` → Chat Completions, `anthropic` → Messages,
 * `google` → Gemini.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { LanguageModel } from 'ai';
import { resolveProviderApiKey } from '../config/provider-keys.js';
import { MissingSecretError, type ProviderConfig, type ProvidersFile, type ReasoningSettings } from '../config/providers.js';
import type { ModelInfo } from '../protocol/index.js';
import { contextWindowOf, listModels, reasoningOf } from './model-catalog.js';

/** A model ready to call, with the names it was resolved from. */
export interface ResolvedModel {
  /** `provider/model-id` as given. */
  name: string;
  providerName: string;
  modelId: string;
  /** Provider kind, for provider-specific request options (e.g. Anthropic prompt caching). */
  kind: ProviderConfig['kind'];
  /** Context window in tokens (configured, known, or a conservative fallback). */
  contextWindow: number;
  /** What is asked of the model's reasoning; undefined = the model does not reason (nothing is asked). */
  reasoning?: ReasoningSettings;
  /** Where and how the provider is reached, for the runtime's own OpenAI Responses client (`src/models/openai-responses/`). */
  connection: ProviderConnection;
  /**
   * The AI SDK model of the provider. Its package is imported on the first call, so a server
   * that never calls a provider never loads the SDK (start-up time and memory).
   */
  languageModel(): Promise<LanguageModel>;
}

/** The address, key and extra headers of a provider, as configured. */
export interface ProviderConnection {
  /** Base URL including the version path (e.g. `https://api.openai.com/v1`); undefined = the provider's default. */
  baseURL?: string;
  /** API key; undefined = none configured (the provider's own variable may supply one). */
  apiKey?: string;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
}

/** A model name that cannot be resolved; the message says why and what is available. */
export class UnknownModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownModelError';
  }
}

/**
 * Splits `<provider>/<model-id>` (the model id may itself contain `/`).
 * @throws UnknownModelError when there is no `/` or either side is empty
 */
export function parseModelName(name: string): { providerName: string; modelId: string } {
  const slash = name.indexOf('/');
  if (slash <= 0 || slash === name.length - 1) {
    throw new UnknownModelError(`model "${name}" must be named "<provider>/<model-id>"`);
  }
  return { providerName: name.slice(0, slash), modelId: name.slice(slash + 1) };
}

/**
 * The variable each kind's client reads its key from when none is given (the AI SDK providers'
 * defaults; the runtime's Responses client reads `OPENAI_API_KEY` too). `openai-compatible`
 * servers may need no key.
 */
const KEY_VARIABLES: Partial<Record<ProviderConfig['kind'], string>> = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY', google: 'GOOGLE_GENERATIVE_AI_API_KEY' };

async function createModel(providerName: string, provider: ProviderConfig, modelId: string, connection: ProviderConnection): Promise<LanguageModel> {
  switch (provider.kind) {
    case 'openai': {
      const { createOpenAI } = await import('@ai-sdk/openai');
      return createOpenAI({ ...connection, name: providerName }).responses(modelId);
    }
    case 'openai-compatible': {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      return createOpenAICompatible({ ...connection, name: providerName, baseURL: provider.baseURL ?? '', includeUsage: true }).chatModel(modelId);
    }
    case 'anthropic': {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      return createAnthropic(connection)(modelId);
    }
    case 'google': {
      const { createGoogleGenerativeAI } = await import('@ai-sdk/google');
      return createGoogleGenerativeAI(connection)(modelId);
    }
  }
}

/**
 * Resolves model names against the configured providers. Models are created lazily and
 * cached per name and key; keys (`env:` variables, stored keys) are looked up each time a model
 * is resolved, so a missing key only affects the provider that needs it.
 */
export class ModelRegistry {
  private readonly cache = new Map<string, ResolvedModel>();

  /**
   * @param providers the loaded `providers.yaml`
   * @param options.configDir where `credentials.json` (stored keys) is read from; without it no stored key is used
   */
  constructor(
    private readonly providers: ProvidersFile,
    private readonly options: { configDir?: string } = {},
  ) {}

  /** The catalog of configured models (`models/list`). */
  list(): ModelInfo[] {
    return listModels(this.providers);
  }

  /**
   * Where each provider with an OpenAI-style model list (`GET <baseURL>/models`) is reached:
   * providers of kind `openai` (default base URL `https://api.openai.com/v1`) and
   * `openai-compatible`, with their API key; `keyError` says why a key could not be read.
   */
  discoveryEndpoints(): { provider: string; kind: string; baseURL: string; apiKey?: string; keyError?: string }[] {
    return Object.entries(this.providers.providers).flatMap(([provider, config]) => {
      if (config.kind !== 'openai' && config.kind !== 'openai-compatible') return [];
      const baseURL = (config.baseURL ?? (config.kind === 'openai' ? 'https://api.openai.com/v1' : '')).replace(/\/+$/, '');
      if (baseURL === '') return [];
      try {
        const apiKey = resolveProviderApiKey(provider, config, this.options.configDir);
        return [{ provider, kind: config.kind, baseURL, ...(apiKey !== undefined ? { apiKey } : {}) }];
      } catch (error) {
        return [{ provider, kind: config.kind, baseURL, keyError: (error as Error).message }];
      }
    });
  }

  /** The loaded `providers.yaml` the catalog is made from (for `modelPrices`). */
  get catalog(): ProvidersFile {
    return this.providers;
  }

  /** The model used when none is named, if configured. */
  get defaultModel(): string | undefined {
    return this.providers.defaultModel;
  }

  /**
   * Resolves a model name (or the default when undefined).
   * @throws UnknownModelError when no model is named and there is no default, or the provider is not configured
   * @throws MissingSecretError when the provider's `env:` key is not set and no key is stored, or the stored keys cannot be read
   */
  resolve(name: string | undefined): ResolvedModel {
    const modelName = name ?? this.providers.defaultModel;
    if (!modelName) throw new UnknownModelError(noDefaultModel(this.options.configDir));
    const { providerName, modelId } = parseModelName(modelName);
    const provider = this.providers.providers[providerName];
    if (!provider) {
      const known = Object.keys(this.providers.providers);
      throw new UnknownModelError(
        `model "${modelName}": provider "${providerName}" is not configured in providers.yaml (configured: ${known.length > 0 ? known.join(', ') : 'none'})`,
      );
    }
    const reasoning = reasoningOf(this.providers, providerName, modelId);
    // The key is looked up on every resolve (each turn): a key stored or exported since is used at once.
    const apiKey = resolveProviderApiKey(providerName, provider, this.options.configDir);
    const sdkVariable = KEY_VARIABLES[provider.kind];
    // Said before the turn, as for an unset env: key; the provider's client would fail its first call with words of its own.
    if (apiKey === undefined && sdkVariable !== undefined && !process.env[sdkVariable]) {
      throw new MissingSecretError(
        `provider "${providerName}" (kind ${provider.kind}) has no API key: give providers.${providerName}.apiKey in providers.yaml (e.g. apiKey: env:${sdkVariable}), set ${sdkVariable} in the server's environment, or store one with: openvaala auth set ${providerName}`,
      );
    }
    const cacheKey = `${modelName}\u0000${apiKey ?? ''}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;
    const connection: ProviderConnection = { ...(apiKey !== undefined ? { apiKey } : {}), ...(provider.baseURL ? { baseURL: provider.baseURL } : {}), ...(provider.headers ? { headers: provider.headers } : {}) };
    let languageModel: Promise<LanguageModel> | undefined;
    const resolved: ResolvedModel = {
      name: modelName,
      providerName,
      modelId,
      kind: provider.kind,
      contextWindow: contextWindowOf(this.providers, providerName, modelId),
      ...(reasoning ? { reasoning } : {}),
      connection,
      languageModel: () => (languageModel ??= createModel(providerName, provider, modelId, connection)),
    };
    this.cache.set(cacheKey, resolved);
    return resolved;
  }
}

/** Why no model could be chosen: names the `providers.yaml` looked at, and says when there is none. */
function noDefaultModel(configDir: string | undefined): string {
  const base = 'no model given and providers.yaml has no defaultModel';
  if (configDir === undefined) return base;
  const file = path.join(configDir, 'providers.yaml');
  if (!existsSync(file)) return `${base}: ${file} does not exist; create it with a provider and a defaultModel (docs/configuration.md), or run \`openvaala auth set <provider>\``;
  return `${base} (${file}); set defaultModel there, or name a model with --model <provider>/<model>`;
}
