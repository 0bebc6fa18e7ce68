/**
 * Compaction (SPEC §6): when the context nears the model's window, the model is asked for a
 * summary, recorded as a `context_summary` item; later requests are built from the summary,
 * the latest user request and the items after it. History is never rewritten: the items
 * before the summary stay in the log.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ModelMessage } from 'ai';
import { newId } from '../ids.js';
import type { Item, TokenUsage } from '../protocol/index.js';
import type { AgentEnvironment } from './agent.js';
import { buildModelMessages } from './context-builder.js';
import { callModel } from './model-call.js';

const COMPACTION_PROMPT = readFileSync(fileURLToPath(new URL('./prompts/compact.txt', import.meta.url)), 'utf8').trim();

/** Rough token count of a value: its JSON length / 4 (the usual rule of thumb for English and code). */
export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value ?? '').length / 4);
}

/**
 * Tracks how large the next request will be: the provider-reported size of the last request
 * and answer, plus an estimate of the items added since.
 */
export class ContextMeter {
  private reportedTokens: number | undefined;
  private itemsAtReport = 0;

  /** Records the usage the provider reported for a call made with `itemCount` items. */
  report(usage: TokenUsage, itemCount: number): void {
    this.reportedTokens = usage.inputTokens + usage.outputTokens;
    this.itemsAtReport = itemCount;
  }

  /** Forgets the last report (after compaction the next request is much smaller). */
  reset(): void {
    this.reportedTokens = undefined;
    this.itemsAtReport = 0;
  }

  /** Estimated tokens of a request built from these items (and the system prompt), in tokens. */
  estimate(items: Item[], system: string, messages: () => ModelMessage[]): number {
    if (this.reportedTokens === undefined) return estimateTokens(system) + estimateTokens(messages());
    return this.reportedTokens + estimateTokens(items.slice(this.itemsAtReport));
  }
}

/**
 * Asks the model to summarise the session so far and records the summary. `pre_compact`
 * hooks run first, so context they add is part of what is summarised.
 * @param trigger `auto` (the context neared the window) or `manual` (`session/compact`), told to the hooks
 * @returns the usage of the summary call
 * @throws ModelCallError when the summary call fails after its retries
 */
export async function compactHistory(environment: AgentEnvironment, trigger: 'auto' | 'manual' = 'auto'): Promise<TokenUsage> {
  await environment.hooks?.beforeCompaction(trigger);
  const history = environment.history();
  const last = history.at(-1);
  if (!last) throw new Error('nothing to compact: the session has no items');
  const messages: ModelMessage[] = [...buildModelMessages(history, { toolOutputLimitBytes: environment.toolOutputLimitBytes }), { role: 'user', content: COMPACTION_PROMPT }];
  const itemId = newId('item');
  const createdAt = Date.now();
  environment.itemStarted(itemId, 'context_summary', {});
  const result = await callModel(environment.model, { system: environment.system, messages, tools: {} }, environment.signal, {
    onTextDelta: (text) => environment.itemDelta(itemId, { text }),
  }, environment.retryPolicy);
  await environment.record({
    id: itemId,
    sessionId: environment.sessionId,
    turnId: environment.turnId,
    createdAt,
    completedAt: Date.now(),
    kind: 'context_summary',
    status: 'completed',
    text: result.text,
    lastItemId: last.id,
  });
  return result.usage;
}
