/**
 * JSON-RPC 2.0 framing (https://www.jsonrpc.org/specification) for the runtime protocol, and
 * the formatting of validation errors so they name the method and the field path.
 */
import { z } from 'zod';

export { DATA_DIRECTORY_MARK, ErrorCodes } from './error-codes.js';
import { ErrorCodes } from './error-codes.js';
import { similarNames } from '../similar-names.js';
import { formatKeyPath } from '../key-path.js';
import { explainIssue, knownKeysAt } from '../validation-issues.js';
/** A JSON-RPC error code the runtime sends. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * Why a request was refused with `conflict` (-32009), machine-readable, in `error.data.reason`
 * so a client can react without parsing the message. Clients MUST treat a reason they do not
 * know as a plain conflict: later versions add reasons.
 *
 * - `session_closed`: the session was closed and takes no more input.
 * - `provider_key_missing`: the model's provider needs a key the server does not have.
 * - `platform_off`: a `users/*` or `account/*` method on a server without platform mode.
 * - `last_administrator`: the change would leave the platform without an administrator.
 * - `already_claimed`: `users/claim` on a platform that has users.
 * - `email_taken`: a user with that email address exists.
 * - `log_damaged`: a log of the conversation cannot be read, or its metadata log holds no valid
 *   conversation entry; the message names the file and what is wrong with it.
 * - `conversation_exists`: `conversation/import` of an archive whose conversation is stored
 *   here already; the message names it and its title.
 */
export const StateConflictReasonSchema = z.enum([
  'session_closed',
  'provider_key_missing',
  'turn_running',
  'rewind_in_progress',
  'conversation_deleted',
  'no_running_turn',
  'turn_mismatch',
  'input_started',
  'terminal_limit',
  'no_terminal_support',
  'terminal_ended',
  'file_too_large',
  'not_a_git_repository',
  'git_unavailable',
  'platform_off',
  'last_administrator',
  'already_claimed',
  'email_taken',
  'invitation_invalid',
  'no_worktree',
  'worktree_present',
  'worktree_dirty',
  'worktree_not_on_base',
  'merge_conflict',
  'owner_unreachable',
  'browser_disabled',
  'browser_not_running',
  'cost_limit_reached',
  'log_damaged',
  'conversation_exists',
]);
/** Why a request was refused with `conflict`. */
export type StateConflictReason = z.infer<typeof StateConflictReasonSchema>;

/** `error.data` of a `conflict` (-32009) error. */
export const ConflictErrorDataSchema = z.object({
  reason: StateConflictReasonSchema,
  /** The files at issue: conflicting (`merge_conflict`) or uncommitted (`worktree_dirty`), relative to the checkout. */
  files: z.array(z.string()).optional(),
});
/** `error.data` of a `conflict` (-32009) error. */
export type ConflictErrorData = z.infer<typeof ConflictErrorDataSchema>;

/** An error to send back as a JSON-RPC error response (JSON-RPC 2.0 §5.1). */
export class RpcError extends Error {
  /**
   * @param code one of `ErrorCodes`
   * @param message human-readable, naming the method and what was wrong
   * @param data optional structured details (e.g. the validation issues, a conflict's reason)
   */
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }

  /**
   * A `conflict` (-32009) error with its machine-readable reason in `data.reason`.
   * @param message human-readable, naming the method
   * @param reason why the current state refuses the request
   */
  static conflict(message: string, reason: StateConflictReason): RpcError {
    return new RpcError(ErrorCodes.conflict, message, { reason } satisfies ConflictErrorData);
  }
}

/**
 * An `unauthorized` (-32001) error: the connection has not proven it holds the server token.
 * @param method the method the connection sent (or `undefined` when the message named none)
 * @param why what was missing or wrong, e.g. `not the server's token`
 */
export function unauthorized(method: string | undefined, why: string): RpcError {
  return new RpcError(ErrorCodes.unauthorized, `${method !== undefined ? `${method.slice(0, 100)}: ` : ''}unauthorized: ${why}`);
}

/**
 * A `forbidden` (-32003) error: an authenticated connection touched something that belongs to
 * another connection. No method of protocol version 2 touches such things; terminals, which
 * belong to the connection that opened them, refuse every other connection with it.
 * @param method the method of the refused request
 * @param what the thing touched, as the client named it, e.g. `terminal term_01…`
 */
export function forbidden(method: string, what: string): RpcError {
  return new RpcError(ErrorCodes.forbidden, `${method}: forbidden: ${what} belongs to another connection`);
}

/** A JSON-RPC request (with id) or notification (without). */
export const IncomingMessageSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string(),
  params: z.unknown().optional(),
});

/** A JSON-RPC response to one of our own requests (server-to-client requests come later). */
export const ResponseMessageSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).nullable(),
  result: z.unknown().optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});

/** A response message as sent on the wire. */
export type ResponseMessage = z.infer<typeof ResponseMessageSchema>;

/**
 * Formats zod issues as `method: params.a[0].b: message` lines, one per problem (key paths as
 * `formatKeyPath` writes them).
 * @param method the JSON-RPC method whose params failed
 * @param params the params that failed (to quote a bad value), when known
 */
export function describeParamsErrors(method: string, error: z.ZodError, params?: unknown): string {
  return describeIssues(method, paramsIssues(error, params));
}

/** One problem of params: where (keys and indexes under `params`) and what. */
interface ParamsIssue {
  path: readonly PropertyKey[];
  message: string;
}

/** Issues as `method: params.a[0].b: message`, joined by `; `. */
function describeIssues(method: string, issues: readonly ParamsIssue[]): string {
  return issues.map((issue) => `${method}: ${formatKeyPath(issue.path, 'params')}: ${issue.message}`).join('; ');
}

/** Issues as the error's `data.issues` lists them: each path as text. */
function issuesData(issues: readonly ParamsIssue[]): { path: string[]; message: string }[] {
  return issues.map((issue) => ({ path: issue.path.map(String), message: issue.message }));
}

/** The issues of params that failed validation, as said to the client (see `validation-issues.ts`): path and message each. */
function paramsIssues(error: z.ZodError, params?: unknown, schema?: z.ZodType): ParamsIssue[] {
  return error.issues.flatMap((issue) => explainIssue(issue, params === undefined ? undefined : { root: params, ...(schema ? { schema } : {}) })).map((issue) => ({ path: issue.keyPath, message: issue.message }));
}

/**
 * Validates params against a schema.
 * @throws RpcError `invalidParams` naming the method and each failing field path.
 */
export function parseParams<T>(method: string, schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) {
    const issues = paramsIssues(parsed.error, params ?? {}, schema);
    throw new RpcError(ErrorCodes.invalidParams, describeIssues(method, issues), { issues: issuesData(issues) });
  }
  return parsed.data;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The key paths of fields in `input` that validation left out of `parsed`: zod objects drop
 * keys they do not know, so a misspelt optional field (`modle` for `model`) would otherwise be
 * ignored without a word. Records keep every key, so only fields no schema names are found.
 * @param input the params as received
 * @param parsed what the schema made of them
 */
export function droppedFields(input: unknown, parsed: unknown, path: PropertyKey[] = []): PropertyKey[][] {
  if (Array.isArray(input) && Array.isArray(parsed)) {
    return input.length === parsed.length ? input.flatMap((value, index) => droppedFields(value, parsed[index], [...path, index])) : [];
  }
  if (!isPlainObject(input) || !isPlainObject(parsed)) return [];
  return Object.keys(input).flatMap((key) => (Object.hasOwn(parsed, key) ? droppedFields(input[key], parsed[key], [...path, key]) : input[key] === undefined ? [] : [[...path, key]]));
}

/**
 * Validates params against a schema and refuses fields it does not know (see {@link droppedFields}),
 * as the committed JSON Schema does (`additionalProperties: false`).
 * @param method the method, for the messages
 * @param schema the params' schema; the keys it knows where an unknown field is are the names
 *   suggested for it
 * @throws RpcError `invalidParams` naming the method and each failing or unknown field path
 */
export function parseParamsStrictly<T>(method: string, schema: z.ZodType<T>, params: unknown): T {
  const parsed = parseParams(method, schema, params);
  const dropped = droppedFields(params ?? {}, parsed);
  if (dropped.length === 0) return parsed;
  const issues = dropped.map((path) => {
    const known = knownKeysAt(schema, path.slice(0, -1), params ?? {});
    const suggestion = similarNames(String(path.at(-1)), known)[0];
    return { path, message: `unknown field${suggestion !== undefined ? ` (did you mean "${suggestion}"?)` : ''}` };
  });
  throw new RpcError(ErrorCodes.invalidParams, describeIssues(method, issues), { issues: issuesData(issues) });
}
