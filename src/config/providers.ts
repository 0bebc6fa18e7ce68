/**
 * `providers.yaml` (SPEC §8, contract): the model providers and the default model.
 *
 * ```yaml
 * providers:
 *   openai: { kind: openai, apiKey: env:OPENAI_API_KEY }
 *   local:  { kind: openai-compatible, baseURL: http://127.0.0.1:11434/v1 }
 * defaultModel: openai/gpt-5.5
 * ```
 */
import path from 'node:path';
import { z } from 'zod';
import { headerProblems, httpUrl } from './web-addresses.js';
import { EVEN_WITH_OTHER_PROBLEMS, isRecord, loadYamlFile } from './yaml-file.js';

/** The provider kinds the runtime can talk to. */
export const ProviderKindSchema = z.enum(['openai', 'anthropic', 'google', 'openai-compatible']);

import { ReasoningEffortSchema, type ReasoningEffort } from '../protocol/methods.js';

export { ReasoningEffortSchema, type ReasoningEffort };

/**
 * What a reasoning model is asked for (each provider kind maps it to its own request fields;
 * see `src/models/reasoning.ts`).
 */
export const ReasoningSettingsSchema = z.strictObject({
  /** Effort (default `medium`). */
  effort: ReasoningEffortSchema.optional(),
  /** Thinking budget in tokens for Anthropic and Gemini (default: from the effort); Anthropic's minimum is 1024. */
  budgetTokens: z.number().int().min(1024).optional(),
  /** Readable reasoning summaries (OpenAI Responses `reasoning.summary`, Gemini `includeThoughts`); default `auto`. */
  summary: z.enum(['auto', 'concise', 'detailed', 'none']).optional(),
});
/** What a reasoning model is asked for. */
export type ReasoningSettings = z.infer<typeof ReasoningSettingsSchema>;

/**
 * What a model costs, in US dollars per million tokens: input, output, and input read from the
 * provider's prompt cache (when the provider bills it differently).
 */
export const ModelPricesSchema = z.strictObject({
  inputPerMillionUsd: z.number().nonnegative(),
  outputPerMillionUsd: z.number().nonnegative(),
  cachedInputPerMillionUsd: z.number().nonnegative().optional(),
});
/** What a model costs, USD per million tokens. */
export type ModelPrices = z.infer<typeof ModelPricesSchema>;

/** What is known of one model of a provider (all optional; the built-in catalog fills gaps). */
export const ModelSettingsSchema = z.strictObject({
  /** Name shown to people (default: the model id). */
  displayName: z.string().min(1).optional(),
  /** Context window in tokens. */
  contextWindow: z.number().int().positive().optional(),
  /** Most tokens the model writes in one answer. */
  maxOutputTokens: z.number().int().positive().optional(),
  /** Prices in USD per million tokens, for cost accounting. */
  prices: ModelPricesSchema.optional(),
  tools: z.boolean().optional(),
  /** Whether the model reasons (`true`: with the default settings), or how it is asked to. */
  reasoning: z.union([z.boolean(), ReasoningSettingsSchema]).optional(),
  images: z.boolean().optional(),
});
/** What is known of one model of a provider. */
export type ModelSettings = z.infer<typeof ModelSettingsSchema>;

/** One provider entry. */
export const ProviderConfigSchema = z.strictObject({
  kind: ProviderKindSchema,
  /** API key, literally or as `env:NAME`. */
  apiKey: z.string().optional(),
  /** Base URL of the API (defaults to the provider's public endpoint; required for openai-compatible). */
  baseURL: httpUrl().optional(),
  /** Extra HTTP headers sent with every request. */
  headers: z.record(z.string(), z.string()).optional(),
  /** Models of this provider listed by `models/list`, with their settings (an extension of SPEC §8's format). */
  models: z.record(z.string(), ModelSettingsSchema).optional(),
}).superRefine((provider: unknown, context) => {
  if (isRecord(provider)) for (const problem of headerProblems(provider.headers, ['headers'])) context.addIssue({ code: 'custom', ...problem });
  if (isRecord(provider) && provider.kind === 'openai-compatible' && !provider.baseURL) {
    context.addIssue({ code: 'custom', path: ['baseURL'], message: 'required for kind openai-compatible' });
  }
}, EVEN_WITH_OTHER_PROBLEMS);
/** One provider entry. */
export type ProviderConfig = z.infer<typeof ProviderConfigSchema>;

/** The whole `providers.yaml`. */
export const ProvidersFileSchema = z
  .strictObject({
    providers: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'provider names use letters, digits, ".", "_" and "-"'), ProviderConfigSchema),
    /** `<provider>/<model-id>` used when none is given. */
    defaultModel: z.string().regex(/^[^/]+\/.+$/, 'expected "<provider>/<model-id>"').optional(),
  })
  .superRefine((file: unknown, context) => {
    if (isRecord(file) && typeof file.defaultModel === 'string' && isRecord(file.providers)) {
      const providerName = file.defaultModel.split('/')[0] ?? '';
      if (!(providerName in file.providers)) {
        context.addIssue({ code: 'custom', path: ['defaultModel'], message: `names provider "${providerName}", which is not defined under providers` });
      }
    }
  }, EVEN_WITH_OTHER_PROBLEMS);
/** The whole `providers.yaml`. */
export type ProvidersFile = z.infer<typeof ProvidersFileSchema>;

/** File name of the providers configuration inside the config directory. */
export const PROVIDERS_FILE = 'providers.yaml';

/**
 * Loads `providers.yaml` from a config directory. A missing file means no providers.
 * @throws ConfigError naming the file, line and key path of the first problems
 */
export async function loadProvidersFile(configDir: string): Promise<ProvidersFile> {
  return loadYamlFile(path.join(configDir, PROVIDERS_FILE), ProvidersFileSchema, () => ({ providers: {} }));
}

/**
 * A secret the configuration refers to is not available (an `env:NAME` variable that is unset
 * in the server's environment, and no stored key). The user's to fix, so its message is shown
 * to clients as it is.
 */
export class MissingSecretError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MissingSecretError';
  }
}

/**
 * Resolves a secret value: `env:NAME` reads the environment variable NAME.
 * @throws MissingSecretError naming the variable and where it was referenced when it is unset
 */
export function resolveSecret(value: string | undefined, where: string, environment: NodeJS.ProcessEnv = process.env): string | undefined {
  if (value === undefined || !value.startsWith('env:')) return value;
  const name = value.slice(4);
  const resolved = environment[name];
  if (resolved === undefined || resolved === '') {
    throw new MissingSecretError(`${where}: environment variable ${name} is not set`);
  }
  return resolved;
}
