/**
 * What a client can do and what the server offers, exchanged in `initialize` (protocol
 * version 2). The server sends server-to-client requests and streaming deltas only to the
 * connections that declared they handle them.
 */
import { z } from 'zod';

/**
 * What a client handles. Every field is optional; what a client leaves out takes the default:
 * `approvals` false, `userInput` false, `deltas` true, `fs` false, `terminal` false.
 */
export const ClientCapabilitiesSchema = z.object({
  /** Answers the server-to-client request `approval/request` (otherwise it only gets the notifications). */
  approvals: z.boolean().optional(),
  /** Answers the server-to-client request `input/request`. */
  userInput: z.boolean().optional(),
  /** Wants `item/delta` streaming; false: only `item/started` and `item/completed`. */
  deltas: z.boolean().optional(),
  /**
   * Will browse the workspace with `fs/list | read | stat`. Informational: the methods answer
   * every authenticated connection (the server uses it only to describe its clients).
   */
  fs: z.boolean().optional(),
  /**
   * Will open terminals with `terminal/create` and read `terminal/output`. Informational, like
   * `fs`.
   */
  terminal: z.boolean().optional(),
});
/** What a client handles, as declared. */
export type ClientCapabilities = z.infer<typeof ClientCapabilitiesSchema>;

/** A client's capabilities with every default applied. */
export type ResolvedClientCapabilities = Required<ClientCapabilities>;

/** The capabilities of a client that declares nothing. */
export const DEFAULT_CLIENT_CAPABILITIES: ResolvedClientCapabilities = { approvals: false, userInput: false, deltas: true, fs: false, terminal: false };

/**
 * Applies the defaults to what a client declared.
 * @param declared `initialize` `params.capabilities`, absent when the client sent none
 */
export function resolveClientCapabilities(declared: ClientCapabilities | undefined): ResolvedClientCapabilities {
  return { ...DEFAULT_CLIENT_CAPABILITIES, ...Object.fromEntries(Object.entries(declared ?? {}).filter(([, value]) => value !== undefined)) };
}

/** What the server offers. */
export const ServerCapabilitiesSchema = z.object({
  /**
   * Method families the server supports, by the part of the method names before `/`
   * (`conversation`, `session`, `approval`, `input`…) plus `toolDetails` for typed `details`
   * on `tool_call` items.
   */
  features: z.array(z.string()),
});
/** What the server offers. */
export type ServerCapabilities = z.infer<typeof ServerCapabilitiesSchema>;
