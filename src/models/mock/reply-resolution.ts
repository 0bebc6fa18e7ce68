/**
 * Resolution of a scripted reply: the deltas, tool-call ids and arguments, reasoning and usage
 * the mock provider streams for one script entry. Kept apart from the script's schema and
 * loading, which only say what a script may contain.
 */
import type { MockResponseEntry, MockUsage, ResolvedReply, ResolvedToolCall } from './script.js';

/**
 * Splits text into at most `pieceCount` pieces of about equal length, cutting between code
 * points so no piece carries half of a surrogate pair.
 */
export function splitIntoPieces(text: string, pieceCount: number): string[] {
  const codePoints = Array.from(text);
  if (codePoints.length === 0) return [];
  const size = Math.ceil(codePoints.length / Math.max(1, pieceCount));
  const pieces: string[] = [];
  for (let start = 0; start < codePoints.length; start += size) {
    pieces.push(codePoints.slice(start, start + size).join(''));
  }
  return pieces;
}

/**
 * The text deltas of a `generatedText` entry: delta `i` (from 0) is the number `i` padded on
 * the left with `x` to `deltaLength - 1` characters, then a space — so every delta is exactly
 * `deltaLength` characters while `i` has fewer than `deltaLength` digits, and a client can tell
 * a lost, doubled or reordered delta from the text it assembled.
 *
 * @param generated - The entry's `generatedText`: how many deltas, how long each.
 * @returns The deltas in streaming order.
 */
export function generatedTextDeltas(generated: { deltas: number; deltaLength: number }): string[] {
  const deltas = new Array<string>(generated.deltas);
  for (let index = 0; index < generated.deltas; index++) deltas[index] = `${String(index).padStart(generated.deltaLength - 1, 'x')} `;
  return deltas;
}

/** Word-sized deltas (each word keeps its trailing whitespace) so streaming is visible. */
function splitIntoWords(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

/** Rough token estimate used when the script gives no usage: one token per four characters. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The tool-call arguments as the object that APIs without an arguments string carry (Anthropic's
 * `input`, Gemini's `args`): the parsed JSON when it is an object, otherwise the raw text itself,
 * so a script reproducing malformed arguments still reaches the client.
 */
export function argumentsAsObject(argumentsText: string): unknown {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return argumentsText;
}

/** Number of pieces tool-call arguments are streamed in, so clients must reassemble them. */
const ARGUMENT_PIECE_COUNT = 3;

/**
 * Fills in every default of a successful scripted reply: word deltas from `text` and `reasoning`,
 * tool-call ids (`call_<request>_<index>`), JSON-encoded arguments split into pieces, the
 * reasoning signature, and estimated usage when none is scripted (input from the request body's
 * characters, output from the reply's including its reasoning, reasoning from the reasoning's,
 * four characters a token). Scripted usage is taken as is, missing details being 0.
 *
 * @param entry - A script entry without `error`.
 * @param requestNumber - 1-based number of the request being answered.
 * @param requestBody - The parsed request body, for the input token estimate.
 */
export function resolveReply(entry: MockResponseEntry, requestNumber: number, requestBody: unknown): ResolvedReply {
  const textDeltas =
    entry.deltas ??
    (entry.generatedText !== undefined ? generatedTextDeltas(entry.generatedText) : entry.text !== undefined ? splitIntoWords(entry.text) : []);
  const reasoningPartDeltas = entry.reasoningParts?.map(splitIntoWords) ?? [entry.reasoningDeltas ?? (entry.reasoning !== undefined ? splitIntoWords(entry.reasoning) : [])];
  const reasoningDeltas = reasoningPartDeltas.flat();
  const reasoningText = reasoningDeltas.join('');
  const toolCalls = (entry.toolCalls ?? []).map((call, index): ResolvedToolCall => {
    const argumentsText = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    return {
      id: call.id ?? `call_${requestNumber}_${index}`,
      name: call.name,
      argumentsText,
      argumentDeltas: splitIntoPieces(argumentsText, ARGUMENT_PIECE_COUNT),
    };
  });
  const outputText =
    reasoningText + textDeltas.join('') + toolCalls.map((call) => call.name + call.argumentsText).join('');
  const requestText = requestBody === undefined ? '' : JSON.stringify(requestBody);
  const usage: MockUsage = entry.usage
    ? {
        inputTokens: entry.usage.inputTokens,
        outputTokens: entry.usage.outputTokens,
        cachedInputTokens: entry.usage.cachedInputTokens ?? 0,
        cacheWriteInputTokens: entry.usage.cacheWriteInputTokens ?? 0,
        reasoningTokens: entry.usage.reasoningTokens ?? 0,
      }
    : {
        inputTokens: estimateTokens(requestText),
        outputTokens: estimateTokens(outputText),
        cachedInputTokens: 0,
        cacheWriteInputTokens: 0,
        reasoningTokens: estimateTokens(reasoningText),
      };
  return {
    requestNumber,
    hasText: entry.text !== undefined || entry.deltas !== undefined || entry.generatedText !== undefined,
    textDeltas,
    hasReasoning: entry.reasoning !== undefined || entry.reasoningDeltas !== undefined || entry.reasoningParts !== undefined,
    reasoningDeltas,
    reasoningPartDeltas,
    reasoningSignature: Buffer.from(`openvaala-mock-reasoning-${requestNumber}`).toString('base64'),
    toolCalls,
    usage,
    disconnectAfterDeltas: entry.disconnectAfterDeltas,
    disconnectBeforeFinish: entry.disconnectBeforeFinish ?? false,
    malformedEventAfterDeltas: entry.malformedEventAfterDeltas,
    streamError: entry.streamError,
    holds: entry.holds ?? [],
    incompleteReason: entry.incompleteReason,
  };
}
