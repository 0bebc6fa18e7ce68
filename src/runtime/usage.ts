/**
 * Token usage of model calls and what it costs. Prices come from an injected lookup so the
 * source of prices (the models catalog, a pricing table) can change without touching turns.
 */
import type { ModelInfo, ModelPrices, NotificationParams, TokenUsage } from '../protocol/index.js';

/** The prices of a `provider/model`, USD per million tokens; undefined when unknown (no cost is then reported). */
export type PriceLookup = (model: string) => ModelPrices | undefined;

function isPrices(value: unknown): value is ModelPrices {
  if (!value || typeof value !== 'object') return false;
  const prices = value as Record<string, unknown>;
  const price = (key: string) => typeof prices[key] === 'number' && Number.isFinite(prices[key]) && (prices[key] as number) >= 0;
  return price('inputPerMillionUsd') && price('outputPerMillionUsd') && (prices.cachedInputPerMillionUsd === undefined || price('cachedInputPerMillionUsd'));
}

/**
 * The default lookup: the `prices` field of the model's catalog entry, when the catalog
 * gives one (read from the catalog in force at each call, so a reload applies).
 * @param catalog the models catalog in force (`models/list`)
 */
export function catalogPrices(catalog: () => ModelInfo[]): PriceLookup {
  return (model) => {
    const prices = (catalog().find((entry) => entry.id === model) as (ModelInfo & { prices?: unknown }) | undefined)?.prices;
    return isPrices(prices) ? prices : undefined;
  };
}

/**
 * What `usage` costs at `prices`, USD: uncached input at the input price, cached input at the
 * cached price (default: the input price), output (reasoning included) at the output price.
 */
export function costOf(usage: TokenUsage, prices: ModelPrices): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  return (uncached * prices.inputPerMillionUsd + cached * (prices.cachedInputPerMillionUsd ?? prices.inputPerMillionUsd) + usage.outputTokens * prices.outputPerMillionUsd) / 1_000_000;
}

/** Adds two usages (the optional counts only when either has them). */
export function addUsage(total: TokenUsage, step: TokenUsage): TokenUsage {
  return {
    inputTokens: total.inputTokens + step.inputTokens,
    outputTokens: total.outputTokens + step.outputTokens,
    totalTokens: total.totalTokens + step.totalTokens,
    ...(total.cachedInputTokens !== undefined || step.cachedInputTokens !== undefined ? { cachedInputTokens: (total.cachedInputTokens ?? 0) + (step.cachedInputTokens ?? 0) } : {}),
    ...(total.reasoningTokens !== undefined || step.reasoningTokens !== undefined ? { reasoningTokens: (total.reasoningTokens ?? 0) + (step.reasoningTokens ?? 0) } : {}),
  };
}

/**
 * The `session/usage` notification for a model call that returned.
 * @param where the call's conversation, session, turn, and the session log's head (seq)
 * @param model the model called: its name and context window (tokens)
 * @param prices the model's prices, when known (then `costUsd` is the turn's cost so far)
 */
export function usageReport(
  where: { conversationId: string; sessionId: string; turnId: string; seq: number },
  model: { name: string; contextWindow: number },
  lastCall: TokenUsage,
  turnTotal: TokenUsage,
  prices: ModelPrices | undefined,
): NotificationParams<'session/usage'> {
  return {
    ...where,
    model: model.name,
    lastCall,
    turnTotal,
    // What the next request carries at least: this request and the answer to it.
    contextTokens: lastCall.inputTokens + lastCall.outputTokens,
    contextWindow: model.contextWindow,
    ...(prices ? { costUsd: costOf(turnTotal, prices) } : {}),
  };
}
