/**
 * Compaction (SPEC §6): when the context nears the model's window, the model is asked for a
 * summary, recorded as a `context_summary` item; later requests are built from the summary,
 * the latest user request and the items after it. History is never rewritten: the items
 * before the summary stay in the log.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ModelMessage } from 'ai';
import { z } from 'zod';
import { newId } from '../ids.js';
import type { Item, TokenUsage } from '../protocol/index.js';
import type { ResolvedModel } from '../models/model-registry.js';
import type { AgentEnvironment } from './agent.js';
import type { Tool } from '../tools/tool.js';
import { buildModelMessages, keptByCompaction } from './context-builder.js';
import { callModel } from './model-call.js';

const COMPACTION_PROMPT = readFileSync(fileURLToPath(new URL('./prompts/compact.txt', import.meta.url)), 'utf8').trim();

/** Rough token count of a value: its JSON length / 4 (the usual rule of thumb for English and code). */
export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value ?? '').length / 4);
}

/**
 * Tokens one image counts as, whatever its size in bytes: providers scale an image down before
 * the model reads it (Anthropic: about width × height / 750 tokens, at most about 1,600;
 * OpenAI: 85 plus 170 per 512-pixel tile of the scaled image, about 1,100 for 1024 × 1024).
 */
export const IMAGE_TOKENS = 1_600;

/**
 * Rough token count of model messages as the provider reads them: their text by
 * {@link estimateTokens}, each image as {@link IMAGE_TOKENS}, each other file as its size in
 * bytes / 4. Images and files travel as bytes; written out as JSON, a `Uint8Array` of 500 KB
 * became millions of characters, which read as a context far over any window.
 */
export function estimateMessageTokens(messages: ModelMessage[]): number {
  let images = 0;
  let fileBytes = 0;
  const text = JSON.stringify(messages, function (this: unknown, key: string, value: unknown) {
    const part = this as { type?: unknown } | null;
    if (key === 'image' && part?.type === 'image') {
      images++;
      return '';
    }
    if (key === 'data' && part?.type === 'file') {
      fileBytes += value instanceof Uint8Array ? value.byteLength : typeof value === 'string' ? Math.ceil((value.length * 3) / 4) : 0;
      return '';
    }
    return value;
  });
  return Math.ceil(text.length / 4) + images * IMAGE_TOKENS + Math.ceil(fileBytes / 4);
}

/**
 * Tracks how large the next request will be: the provider-reported size of the last request
 * and answer, plus an estimate of the items added since, measured as the model reads them (a
 * tool result cut to its cap, an image as {@link IMAGE_TOKENS}), not as they are stored (a
 * stored command's whole output, twice: in the item and in its details).
 */
export class ContextMeter {
  private reportedTokens: number | undefined;
  private itemsAtReport = 0;
  private awaitingFirstReport = false;
  private firstRequestAfterCompaction: number | undefined;

  /** Records the usage the provider reported for a call made with `itemCount` items. */
  report(usage: TokenUsage, itemCount: number): void {
    this.reportedTokens = usage.inputTokens + usage.outputTokens;
    this.itemsAtReport = itemCount;
    if (this.awaitingFirstReport) {
      this.firstRequestAfterCompaction = usage.inputTokens;
      this.awaitingFirstReport = false;
    }
  }

  /**
   * Forgets the last report (after compaction the next request is much smaller) and notes
   * that the next reported request is the first after a compaction.
   */
  reset(): void {
    this.reportedTokens = undefined;
    this.itemsAtReport = 0;
    this.awaitingFirstReport = true;
    this.firstRequestAfterCompaction = undefined;
  }

  /**
   * Input tokens the provider reported for the first request after the latest compaction
   * (undefined before that request). When it is over the threshold, the compaction did not
   * help: the provider counts the kept parts larger than the estimate did.
   */
  get inputTokensAfterCompaction(): number | undefined {
    return this.firstRequestAfterCompaction;
  }

  /**
   * Estimated size of a request built from these items and the system prompt, in tokens.
   * @param toMessages converts items into the request's messages (as `buildModelMessages` does for this session)
   */
  estimate(items: Item[], system: string, toMessages: (items: Item[]) => ModelMessage[]): number {
    if (this.reportedTokens === undefined) return estimateTokens(system) + estimateMessageTokens(toMessages(items));
    const added = items.slice(this.itemsAtReport);
    return this.reportedTokens + (added.length === 0 ? 0 : estimateMessageTokens(toMessages(added)));
  }
}

/** One part of a request with its estimated size. */
export interface ContextPart {
  /** `system prompt`, `12 tool schemas`, `skill "name"`, `AGENTS.md /path`, `latest request`, `summary`. */
  label: string;
  /** Estimated size, tokens. */
  tokens: number;
}

/** Estimated tokens of the tools' names, descriptions and JSON schemas as sent to the model. */
export function toolSchemaTokens(tools: Tool[]): number {
  return estimateTokens(tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: z.toJSONSchema(tool.parameters, { unrepresentable: 'any' }) })));
}

/**
 * The parts of a request that compaction cannot shrink, largest first: the system prompt,
 * the tool schemas, the standing instructions (AGENTS.md, loaded skills), the latest request,
 * and the latest summary when `withSummary` is set (after a compaction).
 */
export function measureKeptContext(items: Item[], system: string, tools: Tool[], withSummary = false): ContextPart[] {
  const kept = keptByCompaction(items);
  const parts: ContextPart[] = [
    { label: 'system prompt', tokens: estimateTokens(system) },
    { label: `${tools.length} tool schemas`, tokens: toolSchemaTokens(tools) },
  ];
  for (const item of kept.standing) {
    if (item.kind !== 'instruction') continue;
    parts.push({ label: item.source === 'skill' ? `skill "${item.name}"` : `AGENTS.md ${item.name}`, tokens: estimateMessageTokens(buildModelMessages([item])) });
  }
  if (kept.latestRequest) parts.push({ label: 'latest request', tokens: estimateMessageTokens(buildModelMessages([kept.latestRequest])) });
  const summary = withSummary ? items.findLast((item) => item.kind === 'context_summary') : undefined;
  if (summary) parts.push({ label: 'summary', tokens: estimateMessageTokens(buildModelMessages([summary])) });
  return parts.sort((left, right) => right.tokens - left.tokens);
}

const formatTokens = (tokens: number) => Math.round(tokens).toLocaleString('en-US');

/**
 * The error that ends a turn whose context compaction cannot bring under the threshold: it
 * names the total, the threshold, the overage and each part, largest first, in tokens.
 * @param afterCompaction whether a compaction was just made (its summary is one of the parts)
 * @param reportedTokens the provider's count of the request, when known (it replaces the estimated total)
 */
export function contextDoesNotFitMessage(parts: ContextPart[], threshold: number, model: Pick<ResolvedModel, 'name' | 'contextWindow'>, afterCompaction: boolean, reportedTokens?: number): string {
  const total = reportedTokens ?? parts.reduce((sum, part) => sum + part.tokens, 0);
  const limit = threshold * model.contextWindow;
  const listed = parts.filter((part) => part.tokens > 0).map((part) => `${part.label} (~${formatTokens(part.tokens)} tokens)`).join(', ');
  return (
    `the context does not fit${afterCompaction ? ' even after compaction' : ''}: ` +
    (reportedTokens !== undefined ? `the first request after it was ${formatTokens(total)} tokens as the provider counted them, over` : `what compaction keeps is ~${formatTokens(total)} tokens, over`) +
    ` the compaction threshold of ${formatTokens(limit)} tokens ` +
    `(${Math.round(threshold * 100)} % of the ${formatTokens(model.contextWindow)}-token window of ${model.name}) by ~${formatTokens(total - limit)} tokens: ${listed}. ` +
    'Use a model with a larger context window, or load fewer or smaller skills and AGENTS.md files.'
  );
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
  const messages: ModelMessage[] = [...buildModelMessages(history, { model: environment.model.name, toolOutputLimitBytes: environment.toolOutputLimitBytes, readAttachment: environment.readAttachment }), { role: 'user', content: COMPACTION_PROMPT }];
  const itemId = newId('item');
  const createdAt = Date.now();
  environment.itemStarted(itemId, 'context_summary', {});
  // After an attempt broke off, the retry's summary is not streamed into the same item (it would
  // follow the cut-off text): the completed item carries the whole summary.
  let cutOff = false;
  const result = await callModel(environment.model, { system: environment.system, messages, tools: [] }, environment.signal, {
    onTextDelta: (text) => {
      if (!cutOff) environment.itemDelta(itemId, { text });
    },
    onCutOff: () => {
      cutOff = true;
    },
    onRetry: (failure, attempt, delayMs) => environment.modelRetrying?.({ attempt, maxRetries: environment.retryPolicy.maxRetries, delayMs, httpStatus: failure.httpStatus, message: failure.message }),
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
