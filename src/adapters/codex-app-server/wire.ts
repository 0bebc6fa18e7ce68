/**
 * Messages of the Codex app-server protocol on the wire: JSON-RPC 2.0 without the `jsonrpc`
 * member (codex-cli 0.171.0, `codex app-server generate-json-schema`), and the errors the
 * adapter answers with. Shapes beyond the envelope are built by the mapping modules.
 */
import { z } from 'zod';
import { jsonSyntaxProblem } from '../../printable-text.js';
import { formatKeyPath } from '../../key-path.js';

/** A JSON-RPC id as Codex sends it: an integer or a string. */
export type CodexRequestId = number | string;

/** A message of either direction, as parsed from one line or one WebSocket frame. */
export interface CodexMessage {
  id?: CodexRequestId;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/**
 * Error codes the adapter uses. The JSON-RPC 2.0 ones as the specification defines them;
 * Codex answers a request before `initialize` with `-32600 "Not initialized"` and a second
 * `initialize` with `-32600 "Already initialized"` (codex-rs app-server message processor), so
 * the adapter does too.
 */
export const CodexErrorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/** A request the adapter refuses, with the JSON-RPC error to answer. */
export class CodexRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'CodexRpcError';
  }
}

/**
 * Parses a request's params with a zod schema.
 * @returns the parsed params
 * @throws CodexRpcError -32602 naming the method and each invalid field path (`turn/start: params.threadId: …`)
 */
export function parseParams<T>(method: string, schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => `${formatKeyPath(issue.path, 'params')}: ${issue.message}`);
  throw new CodexRpcError(CodexErrorCodes.invalidParams, `${method}: ${issues.join('; ')}`);
}

/**
 * Reads one message from its text.
 * @throws CodexRpcError -32700 when the text is not JSON, -32600 when it is not a JSON object
 */
export function parseCodexMessage(text: string): CodexMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CodexRpcError(CodexErrorCodes.parseError, `parse error: ${jsonSyntaxProblem(error)}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new CodexRpcError(CodexErrorCodes.invalidRequest, 'invalid request: a message must be a JSON object');
  const message = value as CodexMessage;
  if (message.id !== undefined && typeof message.id !== 'number' && typeof message.id !== 'string') throw new CodexRpcError(CodexErrorCodes.invalidRequest, 'invalid request: id must be an integer or a string');
  if (message.method !== undefined && typeof message.method !== 'string') throw new CodexRpcError(CodexErrorCodes.invalidRequest, 'invalid request: method must be a string');
  return message;
}
