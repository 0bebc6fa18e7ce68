/**
 * Collects one streamed model answer (SPEC §6) from the parts either client emits: its text,
 * reasoning blocks with the provider data needed to send them back, tool calls, usage and the
 * failure that ended it; and says in words what of a broken answer the transcript keeps.
 */
import type { TokenUsage } from '../protocol/index.js';
import type { ModelCallHandlers, ModelCallResult, ReasoningPart } from './model-call.js';
import { StreamedText } from './streamed-text.js';

/** Token counts in the AI SDK's shape, as its `finish` part and the runtime's own client give them. */
type SdkUsage = { inputTokens?: number; outputTokens?: number; totalTokens?: number; inputTokenDetails?: { cacheReadTokens?: number }; outputTokenDetails?: { reasoningTokens?: number } };

/** The AI SDK's usage in the protocol's shape (missing counts are 0; the total is their sum when not given). */
function toUsage(usage: SdkUsage): TokenUsage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
    ...(usage.inputTokenDetails?.cacheReadTokens !== undefined ? { cachedInputTokens: usage.inputTokenDetails.cacheReadTokens } : {}),
    ...(usage.outputTokenDetails?.reasoningTokens !== undefined ? { reasoningTokens: usage.outputTokenDetails.reasoningTokens } : {}),
  };
}

/**
 * The part of a tool call's provider metadata worth keeping for replay. OpenAI's item ids are
 * left out: they point at responses stored by OpenAI, which the runtime does not rely on (it
 * sends the whole history), and would make the SDK send references instead of the calls.
 */
function replayableMetadata(metadata: unknown): { providerMetadata?: Record<string, Record<string, unknown>> } {
  if (!metadata || typeof metadata !== 'object') return {};
  const kept = Object.fromEntries(Object.entries(metadata as Record<string, Record<string, unknown>>).filter(([provider]) => provider !== 'openai'));
  return Object.keys(kept).length > 0 ? { providerMetadata: kept } : {};
}

type Metadata = Record<string, Record<string, unknown>> | undefined;

/** The stream parts the collector reads, in the AI SDK's shape (which the runtime's own client emits too). */
export type CollectedPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-start' | 'reasoning-end'; id: string; providerMetadata?: Metadata }
  | { type: 'reasoning-delta'; id: string; text: string; providerMetadata?: Metadata }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown; providerMetadata?: Metadata }
  | { type: 'finish'; totalUsage: SdkUsage; finishReason: string }
  | { type: 'error'; error: unknown };

/** Collects one streamed answer: text, reasoning blocks with their metadata, tool calls, usage, failure. */
export class ResponseCollector {
  /** The answer as collected so far (read its text through {@link result}). */
  readonly outcome: ModelCallResult = { text: '', reasoning: '', reasoningParts: [], toolCalls: [], usage: toUsage({}), finishReason: 'unknown' };
  /** The first failure the stream reported, if any. */
  failure: unknown;
  /**
   * The answer's text while it streams: `+=` on `outcome.text` kept one rope node per delta (about
   * 50 bytes each, 200,000 deltas ≈ 10 MiB) alive until the answer ended; see {@link StreamedText}.
   */
  private readonly text = new StreamedText();
  private readonly openReasoning = new Map<string, ReasoningPart>();

  /** @param handlers told of each text and reasoning delta as it arrives */
  constructor(private readonly handlers: ModelCallHandlers) {}

  /** The answer so far, its text joined into one flat string. */
  result(): ModelCallResult {
    if (this.outcome.text.length !== this.text.length) this.outcome.text = this.text.toString();
    return this.outcome;
  }

  private merge(target: ReasoningPart, metadata: unknown): void {
    if (metadata && typeof metadata === 'object') {
      target.providerMetadata = { ...target.providerMetadata, ...(metadata as Record<string, Record<string, unknown>>) };
    }
  }

  /** Folds one part into the answer; parts of other types (step boundaries, sources…) are ignored. */
  handle(part: CollectedPart): void {
    switch (part.type) {
      case 'text-delta':
        this.text.append(part.text);
        this.handlers.onTextDelta?.(part.text);
        break;
      case 'reasoning-start': {
        const block: ReasoningPart = { text: '' };
        this.merge(block, part.providerMetadata);
        this.openReasoning.set(part.id, block);
        this.outcome.reasoningParts.push(block);
        break;
      }
      case 'reasoning-end': {
        const block = this.openReasoning.get(part.id);
        if (block) this.merge(block, part.providerMetadata);
        break;
      }
      case 'reasoning-delta':
        this.outcome.reasoning += part.text;
        {
          const block = this.openReasoning.get(part.id);
          if (block) {
            block.text += part.text;
            this.merge(block, part.providerMetadata);
          }
          const index = block ? this.outcome.reasoningParts.indexOf(block) : this.outcome.reasoningParts.length - 1;
          this.handlers.onReasoningDelta?.(part.text, Math.max(index, 0));
        }
        break;
      case 'tool-call':
        this.outcome.toolCalls.push({ callId: part.toolCallId, toolName: part.toolName, arguments: part.input, ...replayableMetadata(part.providerMetadata) });
        break;
      case 'finish':
        this.outcome.usage = toUsage(part.totalUsage);
        this.outcome.finishReason = part.finishReason;
        break;
      case 'error':
        this.failure ??= part.error;
        break;
      default:
        break;
    }
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * What of a broken answer stays in the transcript, in words for the turn's error: the text and
 * reasoning that arrived (recorded as `failed` items, shown as cut off and never sent back to the
 * model), and the tool calls that were not run (a call runs only once its answer is whole).
 * @param outcome what the last attempt streamed
 * @param earlierCutOffs attempts before it that had streamed output (also kept, cut off)
 * @returns e.g. `kept the 20 characters of text that arrived, marked cut off; 1 tool call not run`
 */
export function describeKept(outcome: ModelCallResult, earlierCutOffs = 0): string {
  const kept = [...(outcome.text ? [`the ${outcome.text.length} characters of text`] : []), ...(outcome.reasoning ? ['the reasoning'] : [])];
  const earlier = earlierCutOffs > 0 ? ` (as is what ${plural(earlierCutOffs, 'earlier attempt')} streamed)` : '';
  const said = kept.length > 0 ? `kept ${kept.join(' and ')} that arrived, marked cut off${earlier}` : `no text had arrived${earlier ? `; kept what ${plural(earlierCutOffs, 'earlier attempt')} streamed, marked cut off` : ''}`;
  return outcome.toolCalls.length > 0 ? `${said}; ${plural(outcome.toolCalls.length, 'tool call')} not run` : said;
}
