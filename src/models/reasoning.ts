/**
 * Turns a model's reasoning settings (`providers.yaml`, `models.<id>.reasoning`) and a turn's
 * effort override (`session/input` `reasoningEffort`) into each provider kind's request fields,
 * as the AI SDK provider options that produce them:
 *
 * | kind | request fields |
 * | --- | --- |
 * | `openai` (Responses) | `reasoning: {effort, summary}`, `include: ["reasoning.encrypted_content"]`, `store: false` |
 * | `openai-compatible` (Chat Completions) | `reasoning_effort` |
 * | `anthropic` (Messages) | `thinking: {type: "enabled", budget_tokens}` (`max_tokens` grows by the budget) |
 * | `google` (Gemini) | `generationConfig.thinkingConfig: {thinkingBudget, includeThoughts}` |
 *
 * Responses requests are sent with `store: false` and ask for the encrypted reasoning, so the
 * runtime, which keeps the history, can send the reasoning back itself (sources: OpenAI
 * Responses API reference, "Reasoning models"; Anthropic "Extended thinking"; Gemini
 * "Thinking").
 */
import type { ProviderConfig, ReasoningEffort, ReasoningSettings } from '../config/providers.js';

/** Provider options in the AI SDK's shape: provider name → options. */
export type ReasoningProviderOptions = Record<string, Record<string, unknown>>;

/** Effort asked for when none is configured, for a model that reasons. */
export const DEFAULT_REASONING_EFFORT: ReasoningEffort = 'medium';

/** Thinking budget (tokens) per effort, for the kinds that take a budget (Anthropic, Gemini). */
export const THINKING_BUDGET_TOKENS: Record<Exclude<ReasoningEffort, 'none'>, number> = {
  minimal: 1024,
  low: 4096,
  medium: 16_384,
  high: 32_768,
};

/**
 * The provider options that ask a model for reasoning.
 * @param kind the provider kind
 * @param settings the model's reasoning settings; undefined = a model that does not reason
 * @param effortOverride a turn's effort, which wins over the configured effort (and asks a model not known to reason to reason)
 * @returns undefined when nothing is to be asked (a model that does not reason and no override)
 */
export function reasoningProviderOptions(kind: ProviderConfig['kind'], settings: ReasoningSettings | undefined, effortOverride?: ReasoningEffort): ReasoningProviderOptions | undefined {
  // A model that does not reason is asked nothing unless a turn asks it to reason: `none` would be a parameter it may not know.
  if (settings === undefined && (effortOverride === undefined || effortOverride === 'none')) return undefined;
  const effort = effortOverride ?? settings?.effort ?? DEFAULT_REASONING_EFFORT;
  const summary = settings?.summary ?? 'auto';
  // An explicit budget holds for the configured effort; a turn asking another effort gets that effort's budget.
  const budget = effort === 'none' ? 0 : effortOverride === undefined && settings?.budgetTokens !== undefined ? settings.budgetTokens : THINKING_BUDGET_TOKENS[effort];
  switch (kind) {
    case 'openai':
      if (effort === 'none') return { openai: { reasoningEffort: 'none' } };
      return {
        openai: {
          // Models the SDK does not know (other servers speaking the Responses API) are still treated as reasoning models.
          forceReasoning: true,
          reasoningEffort: effort,
          ...(summary !== 'none' ? { reasoningSummary: summary } : {}),
          store: false,
          include: ['reasoning.encrypted_content'],
        },
      };
    case 'openai-compatible':
      return { openaiCompatible: { reasoningEffort: effort } };
    case 'anthropic':
      return effort === 'none' ? undefined : { anthropic: { thinking: { type: 'enabled', budgetTokens: budget } } };
    case 'google':
      return { google: { thinkingConfig: { thinkingBudget: budget, includeThoughts: effort !== 'none' && summary !== 'none' } } };
  }
}
