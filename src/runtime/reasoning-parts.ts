/**
 * How a model's reasoning becomes the fields of a `reasoning` item and of its `item/delta`
 * events. Providers give two sorts of reasoning text:
 *
 * - a readable summary, in parts: the Responses API's summary parts (`summary_index`),
 *   Anthropic's thinking blocks, Gemini's thought parts — each reasoning block the AI SDK
 *   reports is one part;
 * - the raw reasoning: Chat Completions servers (vLLM, DeepSeek, llama.cpp) send the model's
 *   own reasoning tokens as `reasoning_content`, which is not a summary.
 */
import type { ItemDelta, ItemOf } from '../protocol/index.js';
import type { ProviderConfig } from '../config/providers.js';
import type { ReasoningPart } from './model-call.js';

/** Whether a provider kind's reasoning text is raw reasoning rather than a summary. */
function givesRawReasoning(kind: ProviderConfig['kind']): boolean {
  return kind === 'openai-compatible';
}

/** The `item/delta` fields of a reasoning delta of this provider kind (`partIndex`: 0-based reasoning block). */
export function reasoningDelta(kind: ProviderConfig['kind'], text: string, partIndex: number): ItemDelta {
  return givesRawReasoning(kind) ? { reasoningRaw: text } : { reasoning: text, partIndex };
}

/**
 * The text fields of a reasoning item: `summaryParts` (one per reasoning block), `summary` (the
 * parts joined by a blank line, for readers that predate parts; for raw reasoning, the raw
 * text, so they still show something) and `rawText` for raw reasoning.
 */
export function reasoningText(kind: ProviderConfig['kind'], parts: ReasoningPart[]): Pick<ItemOf<'reasoning'>, 'summary' | 'summaryParts' | 'rawText'> {
  if (givesRawReasoning(kind)) {
    const rawText = parts.map((part) => part.text).join('');
    return { summary: rawText, summaryParts: [], rawText };
  }
  const summaryParts = parts.map((part) => part.text);
  return { summary: summaryParts.join('\n\n'), summaryParts };
}
