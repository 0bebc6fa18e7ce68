/**
 * The reference part of `docs/protocol.md` (every method with params and result, every
 * notification, every server request, every entity, the error codes), rendered from the same
 * JSON Schema document as `schema/openvaala-protocol.schema.json` so the two cannot disagree.
 * Written between two marker lines by `npm run generate:schema`; the hand-written guide
 * around it is kept as it is.
 */
import { ErrorCodes, StateConflictReasonSchema, type StateConflictReason } from './json-rpc.js';
import { methods, notifications, serverRequests } from './methods.js';
import { pascalName } from './schema-names.js';
import * as protocolExports from './index.js';

/** A JSON Schema object. */
type JsonSchema = Record<string, unknown>;

/** Where the protocol document is, relative to the project root. */
export const DOCS_PATH = 'docs/protocol.md';
/** The line that starts the generated reference. */
export const REFERENCE_BEGIN = '<!-- BEGIN GENERATED REFERENCE: edit src/protocol, then run `npm run generate:schema` -->';
/** The line that ends the generated reference. */
export const REFERENCE_END = '<!-- END GENERATED REFERENCE -->';

/** What each error code means; typed by `ErrorCodes`, so a new code cannot go undocumented. */
const ERROR_MEANINGS: Record<keyof typeof ErrorCodes, string> = {
  parseError: 'the message is not JSON',
  invalidRequest: 'not a JSON-RPC 2.0 request (or a binary frame)',
  methodNotFound: 'unknown method',
  invalidParams: 'invalid params; the message names the method and each field path (`conversation/create: params.cwd: …`), `data.issues` lists them; a field the method does not take is refused too (`conversation/create: params.modle: unknown field (did you mean "model"?)`; not for `initialize`, whose capabilities a newer client may extend); also `initialize` with another protocol version',
  internalError: 'the request failed inside the server; the message is only `<method>: internal error (reference <8 hex digits> in the server log)`',
  unauthorized: 'not authenticated; sent just before the connection is closed with 1008: on a connection whose upgrade carried no token, for any message before an `initialize` with the server\'s `token` (the message names the method), `initialize` without `token` included; on any connection, for `initialize` with a wrong `token`. A wrong token in the upgrade itself is HTTP 401 instead, before any message',
  notInitialized: 'an authenticated connection sent another method before `initialize`',
  forbidden: 'the connection is authenticated, but what it touched belongs to another connection: a terminal is used only by the connection that opened it (`terminal/input | resize | close` with another connection\'s terminal id)',
  notFound: 'a named conversation, session or approval does not exist',
  conflict: 'valid, but refused in the current state; `data.reason` says why (below)',
};

/** What each conflict reason means; typed by the reason enum, so a new reason cannot go undocumented. */
const CONFLICT_REASONS: Record<StateConflictReason, string> = {
  session_closed: 'the session was closed and takes no more input',
  provider_key_missing: 'the model\'s provider needs a key the server does not have (set it, then retry)',
  turn_running: 'a turn runs or input is queued in the conversation (`conversation/rewind`): interrupt it or wait for `turn/completed`',
  rewind_in_progress: 'the session\'s history is being rewound; retry when `conversation/rewind` has answered',
  conversation_deleted: 'the conversation is being deleted',
  no_running_turn: 'a `turnId` or `expectedTurnId` was given and no turn runs',
  turn_mismatch: 'a `turnId` or `expectedTurnId` was given and another turn runs',
  input_started: '`session/dequeue` of an input that already started its turn (or was read as steering)',
  terminal_limit: 'the connection has as many terminals open as it may; close one first',
  no_terminal_support: 'the executor has no PTY (the virtual executor)',
  terminal_ended: 'input to a terminal whose process has ended',
  file_too_large: '`fs/read` of a file over 64 MiB on an executor that reads whole files (the virtual one)',
  not_a_git_repository: '`workspace/gitLog` or `workspace/gitShow` in a working directory that is not inside a git repository (the message quotes git)',
  platform_off: 'a `users/*` or `account/*` method on a server without platform mode (`serve --platform`)',
  last_administrator: '`users/setRole` or `users/remove` that would leave the platform without an administrator',
  already_claimed: '`users/claim` on a platform that already has users',
  email_taken: '`users/invite` of an email address that already has a user',
  invitation_invalid: 'an invitation code that is unknown, used or expired',
  git_unavailable: '`workspace/gitLog`, `workspace/gitShow`, `worktree/*` or `conversation/create` with `worktree` on an executor where the `git` command is not installed',
  no_worktree: '`worktree/*` for a conversation made without `worktree`, or whose worktree was discarded',
  worktree_present: '`conversation/delete` of a conversation in a git worktree without `removeWorktree: true` (the message names the worktree and branch)',
  worktree_dirty: '`worktree/merge` or `worktree/rebase` while the worktree or the main checkout has uncommitted changes (the message lists them)',
  worktree_not_on_base: '`worktree/merge` while the main checkout has another branch than the base branch checked out',
  browser_disabled: '`browser/screenshot`, `browser/input` for a conversation that is not offered the agent\'s browser (`server.yaml` `browser.enabled` off, or the conversation works on another executor than `local`, or in a sandbox)',
  browser_not_running: '`browser/screenshot` while the conversation\'s browser is stopped (`browser/state` says so; `browser/input` starts it)',
  merge_conflict: '`worktree/merge` or `worktree/rebase` that conflicts; it was aborted, nothing changed; `data.files` lists the conflicting files',
  owner_unreachable: 'several servers share one PostgreSQL schema and the server that owns the conversation cannot be reached while it still holds the conversation (the message names its URL and why); retry, or fix the cluster configuration',
  cost_limit_reached: '`session/input` or `session/compact` (or a scheduled run) that would start a new turn in a project whose month total reached its pausing threshold `pauseUsd`; the message names the project, the month, its total and the threshold',
  conversation_exists: '`conversation/import` of an archive whose conversation id is stored on this server already (the same archive imported twice, or a conversation that never left); the message names the conversation and its title, and nothing is written. Import with `asNew: true` for a copy under new ids',
  log_damaged: 'a method that opens or reads a conversation (`conversation/get`, `conversation/export`, `session/input` and the others) whose logs are damaged beyond what reads skip: a log file cannot be read (it is a directory, a named pipe or a dangling link, or reading it fails), or the metadata log holds no valid conversation entry; the message names the file and what is wrong, and nothing is written to the logs. A damaged metadata log also takes the conversation out of `conversation/list` until it is repaired (server stopped) and `openvaala reindex` has run',
};

function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/**
 * The fields of which an object schema requires at least one (an `anyOf` whose branches each
 * only require fields), or undefined when the schema is not such an object.
 */
function requiredAlternatives(schema: JsonSchema | undefined): string[] | undefined {
  if (schema?.type !== 'object' || !Array.isArray(schema.anyOf)) return undefined;
  const names = (schema.anyOf as JsonSchema[]).map((branch) => (Array.isArray(branch.required) && branch.required.length === 1 ? String(branch.required[0]) : undefined));
  return names.every((name) => name !== undefined) ? (names as string[]) : undefined;
}

/** The sentence naming the fields of which at least one is required. */
function alternativesNote(names: string[]): string {
  return `at least one of ${names.map((name) => `\`${name}\``).join(', ')} is required`;
}

/** A compact, readable type for a schema (links to named definitions). */
export function renderType(schema: JsonSchema | undefined, depth = 0): string {
  if (schema === undefined) return 'any';
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/$defs/', '');
    return `[${name}](#${name.toLowerCase()})`;
  }
  if ('const' in schema) return `\`${JSON.stringify(schema.const)}\``;
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((value) => `\`${JSON.stringify(value)}\``).join(' | ');
  const alternatives = requiredAlternatives(schema);
  if (alternatives) return `${renderType({ ...schema, anyOf: undefined }, depth)} (${alternativesNote(alternatives)})`;
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (union) return union.map((option) => renderType(option, depth)).join(' | ');
  const type = schema.type;
  if (Array.isArray(type)) return type.join(' | ');
  if (type === 'array') return `${renderType(schema.items as JsonSchema | undefined, depth)}[]`;
  if (type === 'object') {
    const properties = schema.properties as Record<string, JsonSchema> | undefined;
    if (properties && Object.keys(properties).length > 0) {
      if (depth > 1) return 'object';
      const required = new Set((schema.required as string[] | undefined) ?? []);
      return `{ ${Object.entries(properties)
        .map(([key, value]) => `${key}${required.has(key) ? '' : '?'}: ${renderType(value, depth + 1)}`)
        .join(', ')} }`;
    }
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') return `{ [key: string]: ${renderType(schema.additionalProperties as JsonSchema, depth + 1)} }`;
    return '{}';
  }
  if (typeof type === 'string') return type;
  return 'any';
}

/** A field table of an object schema, or one line when it has no fields. */
function fieldTable(schema: JsonSchema | undefined): string {
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  if (Object.keys(properties).length === 0) return schema?.type === 'object' ? '_no fields_ (`{}`)\n' : `${renderType(schema)}\n`;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  // A notes column only where some field has a description (zod `.describe()` / `.meta()`).
  const notes = Object.values(properties).some((value) => typeof value.description === 'string');
  const rows = Object.entries(properties).map(([key, value]) => `| \`${key}\` | ${escapeCell(renderType(value))} | ${required.has(key) ? 'yes' : 'no'} |${notes ? ` ${escapeCell(String(value.description ?? ''))} |` : ''}`);
  const alternatives = requiredAlternatives(schema);
  const table = [`| field | type | required |${notes ? ' notes |' : ''}`, `| --- | --- | --- |${notes ? ' --- |' : ''}`, ...rows].join('\n') + '\n';
  return alternatives ? `${table}\nOf the optional fields, ${alternativesNote(alternatives)}.\n` : table;
}

/** The definition a `$ref` points to (the schema itself when it is not a reference). */
function resolve(defs: Record<string, JsonSchema>, schema: JsonSchema): JsonSchema | undefined {
  return typeof schema.$ref === 'string' ? defs[schema.$ref.replace('#/$defs/', '')] : schema;
}

/**
 * Renders the reference section from a schema document built by `buildProtocolJsonSchema`.
 * @returns Markdown, starting with {@link REFERENCE_BEGIN} and ending with {@link REFERENCE_END}
 */
export function renderReference(schema: JsonSchema): string {
  const defs = schema.$defs as Record<string, JsonSchema>;
  const params = (envelope: string) => resolve(defs, ((defs[envelope]?.properties ?? {}) as Record<string, JsonSchema>).params ?? {});
  const result = (envelope: string) => resolve(defs, ((defs[envelope]?.properties ?? {}) as Record<string, JsonSchema>).result ?? {});
  const out: string[] = [REFERENCE_BEGIN, '', `## Reference (protocol version ${String((defs.ProtocolVersion as { const: number }).const)})`, ''];
  out.push('Generated from `src/protocol/` with the JSON Schema `schema/openvaala-protocol.schema.json`; each type links to its named definition there (`$defs`).', '');

  out.push('### Error codes', '', '| code | name | meaning |', '| --- | --- | --- |');
  for (const [name, code] of Object.entries(ErrorCodes)) out.push(`| ${code} | \`${name}\` | ${escapeCell(ERROR_MEANINGS[name as keyof typeof ErrorCodes])} |`);
  out.push('', 'Reasons of `conflict` (-32009), in `error.data.reason` (a client treats a reason it does not know as a plain conflict):', '', '| reason | meaning |', '| --- | --- |');
  for (const reason of StateConflictReasonSchema.options) out.push(`| \`${reason}\` | ${escapeCell(CONFLICT_REASONS[reason])} |`);
  out.push('');

  out.push('### Methods', '');
  for (const name of Object.keys(methods)) {
    const base = pascalName(name);
    out.push(`#### \`${name}\``, '', `Params (\`${base}Params\`):`, '', fieldTable(params(`${base}Request`)), `Result (\`${base}Result\`):`, '', fieldTable(result(`${base}Response`)));
  }

  out.push('### Notifications', '', 'Sent by the server, without `id`. A client MUST ignore a notification method it does not know.', '');
  for (const name of Object.keys(notifications)) out.push(`#### \`${name}\``, '', fieldTable(params(`${pascalName(name)}Notification`)));

  out.push('### Server-to-client requests', '', 'Sent by the server with an `id` (a string); the client answers with a JSON-RPC response carrying that `id`.', '');
  for (const name of Object.keys(serverRequests)) {
    const base = `${pascalName(name)}ServerRequest`;
    out.push(`#### \`${name}\``, '', 'Params:', '', fieldTable(params(base)), 'The client answers with:', '', fieldTable(result(`${base}Response`)));
  }

  out.push('### Entities', '');
  const envelopes = /(Params|Result|Request|Response|Notification|Message|ProtocolVersion|RequestId|JsonRpcError)$/;
  for (const [name, definition] of Object.entries(defs)) {
    // An exported `<Name>Schema` is an entity even when its name ends like an envelope (ApprovalRequest).
    if (envelopes.test(name) && !Object.prototype.hasOwnProperty.call(protocolExports, `${name}Schema`)) continue;
    out.push(`#### ${name}`, '');
    const variants = requiredAlternatives(definition) ? undefined : ((definition.oneOf ?? definition.anyOf) as JsonSchema[] | undefined);
    if (variants) out.push(`One of: ${variants.map((variant) => renderType(variant)).join(', ')}.`, '');
    else out.push(fieldTable(definition));
  }
  out.push(REFERENCE_END);
  return out.join('\n');
}

/**
 * The protocol document with its generated reference replaced (or appended when the markers
 * are missing).
 * @param document the current text of `docs/protocol.md`
 * @param schema the schema document to render
 */
export function withGeneratedReference(document: string, schema: JsonSchema): string {
  const reference = renderReference(schema);
  const begin = document.indexOf(REFERENCE_BEGIN);
  const end = document.indexOf(REFERENCE_END);
  if (begin === -1 || end === -1 || end < begin) return `${document.trimEnd()}\n\n${reference}\n`;
  return `${document.slice(0, begin)}${reference}${document.slice(end + REFERENCE_END.length)}`;
}
