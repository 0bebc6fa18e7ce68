import { argumentsAsObject, type MockError, type MockUsage, type ResolvedReply, type ServerSentEvent } from './script.js';

/** What the Gemini encoders need besides the reply: the model name from the request URL. */
export interface GoogleContext {
  model: string;
}

/**
 * The `usageMetadata` of a Gemini `GenerateContentResponse`, counts in tokens.
 * `promptTokenCount` includes `cachedContentTokenCount`; `candidatesTokenCount` excludes the
 * thinking, counted apart in `thoughtsTokenCount`; `totalTokenCount` is the sum of prompt,
 * candidates and thoughts. The optional counts are omitted when zero, as Gemini does.
 */
export interface GoogleUsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  promptTokensDetails: Array<{ modality: 'TEXT'; tokenCount: number }>;
}

/** A part of a Gemini `Content`: text (a thought summary when `thought` is true) or a function call. */
export type GooglePart =
  | { text: string; thought?: true }
  | { functionCall: { id: string; name: string; args: unknown }; thoughtSignature?: string };

/** A Gemini `GenerateContentResponse`: one streamed chunk, or the whole non-streamed answer. */
export interface GoogleGenerateContentResponse {
  candidates: Array<{ content: { parts: GooglePart[]; role: 'model' }; finishReason?: 'STOP'; index: number }>;
  usageMetadata: GoogleUsageMetadata;
  modelVersion: string;
  responseId: string;
}

/** The error body of the Gemini API (a `google.rpc.Status`): `{"error": {"code", "message", "status", "details"?}}`. */
export interface GoogleErrorBody {
  error: { code: number; message: string; status: string; details?: unknown[] };
}

/** The `google.rpc.Code` name Google sends with an HTTP status (source: Google AIP-193, error codes). */
function googleStatusName(status: number): string {
  const names: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    409: 'ABORTED',
    429: 'RESOURCE_EXHAUSTED',
    499: 'CANCELLED',
    500: 'INTERNAL',
    501: 'UNIMPLEMENTED',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
  };
  return names[status] ?? 'UNKNOWN';
}

/**
 * Encodes an error as Gemini's error body (source: Gemini API troubleshooting, Google AIP-193):
 * `code` is the HTTP status, `status` its `google.rpc.Code` name (429 `RESOURCE_EXHAUSTED`,
 * 500 `INTERNAL`, 503 `UNAVAILABLE`, …). With `retryAfterSeconds`, `details` carries a
 * `google.rpc.RetryInfo` with `retryDelay` (e.g. `"2s"`), which is how Google says when to retry.
 */
export function googleErrorBody(error: MockError): GoogleErrorBody {
  return {
    error: {
      code: error.status,
      message: error.message,
      status: googleStatusName(error.status),
      ...(error.retryAfterSeconds !== undefined
        ? {
            details: [
              { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${error.retryAfterSeconds}s` },
            ],
          }
        : {}),
    },
  };
}

/** Gemini usage metadata for the scripted prompt and the given thought and candidate counts so far. */
function usageMetadata(usage: MockUsage, thoughtsTokens: number, candidatesTokens: number): GoogleUsageMetadata {
  return {
    promptTokenCount: usage.inputTokens,
    candidatesTokenCount: candidatesTokens,
    totalTokenCount: usage.inputTokens + candidatesTokens + thoughtsTokens,
    ...(usage.cachedInputTokens > 0 ? { cachedContentTokenCount: usage.cachedInputTokens } : {}),
    ...(thoughtsTokens > 0 ? { thoughtsTokenCount: thoughtsTokens } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.inputTokens }],
  };
}

/**
 * Converts scripted usage to Gemini's final `usageMetadata` (source: Gemini API reference,
 * `UsageMetadata`): `candidatesTokenCount` is the output minus the reasoning.
 */
export function toGoogleUsageMetadata(usage: MockUsage): GoogleUsageMetadata {
  return usageMetadata(usage, usage.reasoningTokens, usage.outputTokens - usage.reasoningTokens);
}

/** The function call parts; the first carries the thought signature when the reply reasoned, as Gemini does. */
function functionCallParts(reply: ResolvedReply): GooglePart[] {
  return reply.toolCalls.map((call, index) => ({
    functionCall: { id: call.id, name: call.name, args: argumentsAsObject(call.argumentsText) },
    ...(index === 0 && reply.hasReasoning ? { thoughtSignature: reply.reasoningSignature } : {}),
  }));
}

function responseId(reply: ResolvedReply): string {
  return `mock-response-${reply.requestNumber}`;
}

/**
 * Encodes a reply as the chunks of `streamGenerateContent` (source: Gemini API reference,
 * `GenerateContentResponse`), each a `data:` line only (no `event:` line, no terminator):
 *
 * - one chunk per reasoning delta, its part `{text, thought: true}`;
 * - one chunk per text delta, its part `{text}`;
 * - one chunk with all function calls, parts `{functionCall: {id, name, args}}` (Gemini sends a
 *   call whole, never split);
 * - the last chunk also has `finishReason: "STOP"` (tool calls included: Gemini has no tool-use
 *   reason). A reply without any of these is one chunk with an empty text part.
 *
 * Every chunk has `candidates[0].content.role: "model"`, `index: 0`, `modelVersion`,
 * `responseId` and a running `usageMetadata` (thought and candidate counts grow in proportion to
 * the characters sent, and end at the scripted totals), as Gemini reports usage on every chunk.
 */
export function encodeGoogleStream(reply: ResolvedReply, context: GoogleContext): ServerSentEvent[] {
  const finalUsage = toGoogleUsageMetadata(reply.usage);
  const thoughtsTotal = finalUsage.thoughtsTokenCount ?? 0;
  const candidatesTotal = finalUsage.candidatesTokenCount;
  const reasoningCharacters = reply.reasoningDeltas.join('').length;
  const candidateCharacters =
    reply.textDeltas.join('').length + reply.toolCalls.reduce((sum, call) => sum + call.argumentsText.length, 0);
  // Running counts: a share of the total in proportion to the characters already sent.
  const share = (total: number, done: number, all: number): number => (all === 0 ? total : Math.round((total * done) / all));

  const chunks: Array<{ parts: GooglePart[]; thoughts: number; candidates: number }> = [];
  let reasoningDone = 0;
  for (const text of reply.reasoningDeltas) {
    reasoningDone += text.length;
    const thoughts = share(thoughtsTotal, reasoningDone, reasoningCharacters);
    chunks.push({ parts: [{ text, thought: true }], thoughts, candidates: 0 });
  }
  let candidatesDone = 0;
  for (const text of reply.textDeltas) {
    candidatesDone += text.length;
    const candidates = share(candidatesTotal, candidatesDone, candidateCharacters);
    chunks.push({ parts: [{ text }], thoughts: thoughtsTotal, candidates });
  }
  if (reply.toolCalls.length > 0) {
    chunks.push({ parts: functionCallParts(reply), thoughts: thoughtsTotal, candidates: candidatesTotal });
  }
  if (chunks.length === 0) chunks.push({ parts: [{ text: '' }], thoughts: thoughtsTotal, candidates: candidatesTotal });

  return chunks.map((chunk, index): ServerSentEvent => {
    const isLast = index === chunks.length - 1;
    const data: GoogleGenerateContentResponse = {
      candidates: [
        { content: { parts: chunk.parts, role: 'model' }, ...(isLast ? { finishReason: 'STOP' as const } : {}), index: 0 },
      ],
      usageMetadata: isLast ? finalUsage : usageMetadata(reply.usage, chunk.thoughts, chunk.candidates),
      modelVersion: context.model,
      responseId: responseId(reply),
    };
    return { data, isDelta: true };
  });
}

/**
 * Encodes a reply as the non-streamed `generateContent` answer (source: Gemini API reference,
 * `GenerateContentResponse`): one candidate whose parts are the whole reasoning
 * (`thought: true`), the whole text and the function calls, `finishReason: "STOP"`, and the final
 * `usageMetadata`.
 */
export function encodeGoogleResponse(reply: ResolvedReply, context: GoogleContext): GoogleGenerateContentResponse {
  const parts: GooglePart[] = [];
  if (reply.hasReasoning) parts.push({ text: reply.reasoningDeltas.join(''), thought: true });
  if (reply.hasText) parts.push({ text: reply.textDeltas.join('') });
  parts.push(...functionCallParts(reply));
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: toGoogleUsageMetadata(reply.usage),
    modelVersion: context.model,
    responseId: responseId(reply),
  };
}
