import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { jsonSyntaxProblem, printableText } from '../../printable-text.js';
import { formatKeyPath } from '../../key-path.js';

/**
 * One scripted tool call. `arguments` is either an object (sent JSON-encoded) or a raw string
 * sent as is, so a script can also reproduce a model that emits malformed arguments.
 */
const mockToolCallSchema = z
  .object({
    name: z.string().min(1),
    arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).default({}),
    id: z.string().min(1).optional(),
  })
  .strict();

/**
 * Scripted token counts. `cachedInputTokens` (read from the prompt cache) and
 * `cacheWriteInputTokens` (written to it) are parts of `inputTokens`; `reasoningTokens` is part of
 * `outputTokens`. Each wire encoder splits them the way its API reports them.
 */
const mockUsageSchema = z
  .object({
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
    cachedInputTokens: z.number().int().nonnegative().optional(),
    cacheWriteInputTokens: z.number().int().nonnegative().optional(),
    reasoningTokens: z.number().int().nonnegative().optional(),
  })
  .strict()
  .superRefine((usage, context) => {
    // Encoders subtract these parts from the totals (Anthropic, Gemini); a part larger than its
    // total would come out as a negative count on the wire.
    if ((usage.cachedInputTokens ?? 0) + (usage.cacheWriteInputTokens ?? 0) > usage.inputTokens) {
      context.addIssue({
        code: 'custom',
        message: 'cachedInputTokens + cacheWriteInputTokens cannot exceed inputTokens',
        path: ['cachedInputTokens'],
      });
    }
    if ((usage.reasoningTokens ?? 0) > usage.outputTokens) {
      context.addIssue({ code: 'custom', message: 'reasoningTokens cannot exceed outputTokens', path: ['reasoningTokens'] });
    }
  });

const mockErrorSchema = z
  .object({
    status: z.number().int().min(400).max(599),
    message: z.string().min(1),
    type: z.string().min(1).optional(),
    code: z.string().min(1).nullable().optional(),
    retryAfterSeconds: z.number().int().nonnegative().optional(),
  })
  .strict();

/**
 * A long answer generated instead of written out: `deltas` text deltas of `deltaLength`
 * characters each (see {@link generatedTextDeltas}), so a script can stream hundreds of
 * thousands of deltas without carrying their text.
 */
const mockGeneratedTextSchema = z
  .object({
    deltas: z.number().int().min(1).max(10_000_000),
    deltaLength: z.number().int().min(2).max(65_536).default(8),
  })
  .strict();

/**
 * A point where a streamed reply waits: before its delta event after the `afterDeltas`-th (or
 * before its end when it has no more deltas) until the test opens `gate`.
 */
const mockHoldSchema = z
  .object({
    afterDeltas: z.number().int().nonnegative(),
    gate: z.string().min(1),
  })
  .strict();

const mockResponseEntrySchema = z
  .object({
    text: z.string().optional(),
    deltas: z.array(z.string()).optional(),
    generatedText: mockGeneratedTextSchema.optional(),
    reasoning: z.string().optional(),
    reasoningDeltas: z.array(z.string()).optional(),
    /** Reasoning in several summary parts (Responses) or thinking blocks (Anthropic), each streamed word by word. */
    reasoningParts: z.array(z.string().min(1)).min(1).optional(),
    toolCalls: z.array(mockToolCallSchema).optional(),
    usage: mockUsageSchema.optional(),
    error: mockErrorSchema.optional(),
    repeat: z.number().int().min(1).optional(),
    delayMs: z.number().int().nonnegative().optional(),
    disconnectAfterDeltas: z.number().int().nonnegative().optional(),
    disconnectBeforeFinish: z.boolean().optional(),
    malformedEventAfterDeltas: z.number().int().nonnegative().optional(),
    streamError: mockErrorSchema.extend({ afterDeltas: z.number().int().nonnegative() }).strict().optional(),
    incompleteReason: z.enum(['max_output_tokens', 'content_filter']).optional(),
    holds: z.array(mockHoldSchema).optional(),
  })
  .strict()
  .superRefine((entry, context) => {
    if (entry.text !== undefined && entry.deltas !== undefined) {
      context.addIssue({ code: 'custom', message: 'use either text or deltas, not both', path: ['deltas'] });
    }
    if (entry.reasoningParts !== undefined && (entry.reasoning !== undefined || entry.reasoningDeltas !== undefined)) {
      context.addIssue({ code: 'custom', message: 'use either reasoningParts or reasoning/reasoningDeltas, not both', path: ['reasoningParts'] });
    }
    if (entry.generatedText !== undefined && (entry.text !== undefined || entry.deltas !== undefined)) {
      context.addIssue({ code: 'custom', message: 'use generatedText without text or deltas', path: ['generatedText'] });
    }
    if (entry.reasoning !== undefined && entry.reasoningDeltas !== undefined) {
      context.addIssue({
        code: 'custom',
        message: 'use either reasoning or reasoningDeltas, not both',
        path: ['reasoningDeltas'],
      });
    }
    const hasOutput = entry.text !== undefined || entry.deltas !== undefined || entry.generatedText !== undefined || entry.toolCalls !== undefined;
    const hasReplyOnlyField =
      entry.usage !== undefined ||
      entry.reasoning !== undefined ||
      entry.reasoningDeltas !== undefined ||
      entry.reasoningParts !== undefined ||
      entry.disconnectAfterDeltas !== undefined ||
      entry.disconnectBeforeFinish !== undefined ||
      entry.malformedEventAfterDeltas !== undefined ||
      entry.streamError !== undefined ||
      entry.holds !== undefined;
    if (entry.error !== undefined && (hasOutput || hasReplyOnlyField)) {
      context.addIssue({
        code: 'custom',
        message:
          'an error entry cannot also have text, deltas, generatedText, reasoning, reasoningDeltas, toolCalls, usage, disconnectAfterDeltas, disconnectBeforeFinish, malformedEventAfterDeltas, streamError or holds',
        path: ['error'],
      });
    }
    if (entry.error === undefined && !hasOutput) {
      context.addIssue({ code: 'custom', message: 'expected one of text, deltas, generatedText, toolCalls or error', path: [] });
    }
  });

/**
 * Zod schema of a mock provider script: `responses` answers model requests in order, whichever
 * API they arrive on; the top-level `delayMs` is the default pause before each streamed delta.
 */
export const mockScriptSchema = z
  .object({
    responses: z.array(mockResponseEntrySchema),
    delayMs: z.number().int().nonnegative().optional(),
    /** Model ids `GET /v1/models` lists (default: `mock-model` only). */
    models: z.array(z.string().min(1)).optional(),
  })
  .strict();

/** A parsed, validated mock provider script (see {@link mockScriptSchema}). */
export type MockScript = z.infer<typeof mockScriptSchema>;

/**
 * One entry of {@link MockScript.responses}: a reply (optional reasoning, then text and/or tool
 * calls) or an HTTP error.
 */
export type MockResponseEntry = MockScript['responses'][number];

/**
 * A scripted hold (see {@link mockHoldSchema}): the stream stops before its delta event after the
 * `afterDeltas`-th until `gate` is opened with `MockProviderServer.release`.
 */
export type MockHold = z.infer<typeof mockHoldSchema>;

/** A scripted tool call as written in the script. */
export type MockToolCall = z.infer<typeof mockToolCallSchema>;

/**
 * A scripted HTTP error: `status` (400–599), `message`, an optional error `type` and `code`, and
 * `retryAfterSeconds`, sent as the `Retry-After` header (whole seconds). Each API encodes it in its
 * own error body: OpenAI `{"error":{"message","type","param","code"}}`, Anthropic
 * `{"type":"error","error":{"type","message"}}` (a `type` that is not an Anthropic error type is
 * replaced by the one Anthropic uses for the status), Gemini `{"error":{"code","message","status"}}`
 * (the status name follows from the HTTP status; `type` and `code` are not used).
 */
export type MockError = z.infer<typeof mockErrorSchema>;

/**
 * Token counts reported to the client, in tokens. `cachedInputTokens` and `cacheWriteInputTokens`
 * are included in `inputTokens`, `reasoningTokens` in `outputTokens` (the OpenAI convention; the
 * Anthropic and Gemini encoders subtract them where their wire formats count them apart).
 */
export interface MockUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens: number;
  reasoningTokens: number;
}

/** A tool call ready to encode: id fixed, arguments as the exact JSON text and its stream pieces. */
export interface ResolvedToolCall {
  id: string;
  name: string;
  /** The complete arguments string, as the model would emit it. */
  argumentsText: string;
  /** `argumentsText` split into the pieces streamed one per event; they concatenate to it. */
  argumentDeltas: string[];
}

/**
 * A successful scripted reply after every default is filled in; the wire encoders turn it into
 * SSE events or a JSON body without making any decision of their own.
 */
export interface ResolvedReply {
  /** 1-based number of the model request this reply answers (used to derive stable ids). */
  requestNumber: number;
  /** Whether the reply has a text message at all (an empty `text: ""` still produces one). */
  hasText: boolean;
  /** Text deltas in streaming order; they concatenate to the full text. */
  textDeltas: string[];
  /** Whether the reply reasons before answering (`reasoning` or `reasoningDeltas` was scripted). */
  hasReasoning: boolean;
  /** Reasoning deltas in streaming order, sent before any text; they concatenate to the full reasoning. */
  reasoningDeltas: string[];
  /**
   * The same deltas grouped by reasoning part (`reasoningParts`; one group otherwise): the
   * Responses encoder sends each group as one summary part, the Anthropic encoder as one
   * thinking block; the other formats send them as one stream.
   */
  reasoningPartDeltas: string[][];
  /**
   * Opaque token standing for the reasoning, sent where the API has one: Anthropic's thinking
   * `signature`, Gemini's `thoughtSignature`, the Responses API's `encrypted_content`. Derived
   * from the request number, so tests can check that a client sends it back unchanged.
   */
  reasoningSignature: string;
  toolCalls: ResolvedToolCall[];
  usage: MockUsage;
  /**
   * When set, the server sends this many delta events of the stream and then destroys the socket
   * (a non-streamed request gets its socket destroyed before any answer).
   */
  disconnectAfterDeltas: number | undefined;
  /**
   * When true, the server sends every event before the one that finishes the answer (see
   * {@link ServerSentEvent.finishes}) and then destroys the socket: the whole output, tool calls
   * included, has arrived, but the answer never ends.
   */
  disconnectBeforeFinish: boolean;
  /**
   * When set, the delta event that follows this many delta events is sent malformed: its first
   * generated-content field (the text, reasoning or argument piece) carries a number instead of
   * a string, as a provider with a broken encoder would send it. The stream then goes on.
   */
  malformedEventAfterDeltas: number | undefined;
  /**
   * When set, the stream sends this many delta events, then the API's error event (Responses
   * `error`, Anthropic `error`, a Chat Completions or Gemini chunk holding `error`) and ends.
   */
  streamError: (MockError & { afterDeltas: number }) | undefined;
  /**
   * When set, the answer ends as cut short by the provider: the Responses API's
   * `response.incomplete` with `incomplete_details.reason` (the other APIs ignore it).
   */
  incompleteReason: 'max_output_tokens' | 'content_filter' | undefined;
  /**
   * Points where the stream waits for a gate to open, in script order: before the delta event
   * that follows `afterDeltas` delta events (before the end when fewer are sent). A non-streamed
   * answer waits for all its gates before it is sent.
   */
  holds: MockHold[];
}

/**
 * One server-sent event before framing. `event` becomes the `event:` line (Responses API and
 * Anthropic Messages; Chat Completions and Gemini send data lines only); `data` is JSON-encoded
 * into the `data:` line, except the literal `[DONE]` terminator of Chat Completions. `isDelta`
 * marks the events that carry generated content: the server paces them with `delayMs` and counts
 * them for `disconnectAfterDeltas`.
 */
export interface ServerSentEvent {
  event?: string;
  data: unknown;
  isDelta: boolean;
  /**
   * Marks the first event of the answer's end: the Responses `response.completed` (or
   * `response.incomplete`), Anthropic's `message_delta`, the Chat Completions chunk holding
   * `finish_reason`. Gemini marks none: its finish rides on the last content chunk.
   */
  finishes?: boolean;
}

/** Raised when a script file cannot be read, parsed or validated; the message names file and key path. */
export class MockScriptError extends Error {
  override readonly name = 'MockScriptError';
}

/**
 * Formats a zod issue path the way it is written in the script: `responses[2].toolCalls[0].name`.
 */
function formatIssuePath(path: readonly PropertyKey[]): string {
  return formatKeyPath(path) || '(root)';
}

/**
 * Parses and validates a mock provider script.
 *
 * @param text - File content: JSON when `fileName` ends in `.json`, YAML otherwise.
 * @param fileName - Name used in error messages (only its last segment is shown).
 * @returns The validated script.
 * @throws {MockScriptError} On a syntax error or a schema violation. Each problem is one line
 *   `file: key.path: message`, e.g. `script.yaml: responses[2].toolCalls[0].name: expected string, received number`.
 */
export function parseMockScript(text: string, fileName: string): MockScript {
  const shownName = basename(fileName);
  let raw: unknown;
  try {
    raw = extname(fileName).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    // The YAML library's message goes on with a code excerpt after its first line; the line number is in that first line.
    const problem = error instanceof Error && error.name === 'YAMLParseError' ? printableText(error.message.split('\n')[0] ?? '') : jsonSyntaxProblem(error);
    throw new MockScriptError(`${shownName}: cannot parse: ${problem}`);
  }
  const parsed = mockScriptSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (issue) => `${shownName}: ${formatIssuePath(issue.path)}: ${issue.message.replace(/^Invalid input: /, '')}`,
    );
    throw new MockScriptError(lines.join('\n'));
  }
  return parsed.data;
}

/**
 * Reads and validates a mock provider script file (see {@link parseMockScript}).
 *
 * @throws {MockScriptError} When the file cannot be read or is invalid.
 */
export async function loadMockScript(file: string): Promise<MockScript> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new MockScriptError(`${basename(file)}: cannot read: ${(error as Error).message}`);
  }
  return parseMockScript(text, file);
}

/**
 * Expands `repeat` so that element `n - 1` answers the n-th model request.
 */
export function expandMockScript(script: MockScript): MockResponseEntry[] {
  return script.responses.flatMap((entry) => Array.from({ length: entry.repeat ?? 1 }, () => entry));
}

export { argumentsAsObject, estimateTokens, generatedTextDeltas, resolveReply, splitIntoPieces } from './reply-resolution.js';
