/**
 * What the Codex method handlers need from their connection: the runtime client, following a
 * conversation (subscribing and translating its events), sending notifications, and mapping a
 * thread id given by the client. Handlers answer with the Codex result, or throw
 * `CodexRpcError` / `RuntimeClientError` (the connection turns both into JSON-RPC errors).
 */
import type { RuntimeClient } from '../../client/runtime-client.js';
import { CodexIdError, fromCodexId, type CodexMappedPrefix } from '../../protocol/codex-ids.js';
import type { MethodResult } from '../../protocol/index.js';
import { CodexErrorCodes, CodexRpcError } from './wire.js';

/** A handler of one Codex request method. */
export type CodexMethodHandler = (params: unknown, context: CodexMethodContext) => Promise<object>;

/** The connection as handlers see it. */
export interface CodexMethodContext {
  runtime: RuntimeClient;
  /** Subscribes the connection to a conversation (once) and translates its events from then on; returns its current state. */
  follow(conversationId: string): Promise<MethodResult<'conversation/get'>>;
  /** The conversations this connection follows (Codex's loaded threads). */
  followed(): string[];
  /** Sends a Codex notification, in order with the translated events. */
  notify(method: string, params: Record<string, unknown>): void;
  /** The working directory the adapter runs in (for `thread/start` without `cwd`). */
  cwd: string;
}

/**
 * The OpenVaala id of a Codex id given in a request.
 * @throws CodexRpcError -32602 naming the method and field when it is not a UUID
 */
export function openVaalaId(method: string, field: string, codexId: string, prefix: CodexMappedPrefix): string {
  try {
    return fromCodexId(codexId, prefix);
  } catch (error) {
    if (error instanceof CodexIdError) throw new CodexRpcError(CodexErrorCodes.invalidParams, `${method}: params.${field}: ${error.message}`);
    throw error;
  }
}
