import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCS_PATH, REFERENCE_BEGIN, withGeneratedReference } from '../../src/protocol/generate-docs.js';
import { buildProtocolJsonSchema, SCHEMA_PATH } from '../../src/protocol/generate-schema.js';
import { ErrorCodes, ItemSchema, methods, notifications, serverRequests } from '../../src/protocol/index.js';
import { ConnectionMessageValidator, ProtocolSchema } from '../../src/protocol/message-validator.js';

const root = path.resolve(import.meta.dirname, '../..');
const document = readFileSync(path.join(root, DOCS_PATH), 'utf8');
const guide = document.slice(0, document.indexOf(REFERENCE_BEGIN));
const schema = new ProtocolSchema(JSON.parse(readFileSync(path.join(root, SCHEMA_PATH), 'utf8')) as Record<string, unknown>);

/** The first cells (in backticks) of the table rows of one `###` section of the guide. */
function firstColumn(section: string): string[] {
  const start = guide.indexOf(`\n### ${section}\n`);
  expect(start, `section "${section}" in ${DOCS_PATH}`).toBeGreaterThan(-1);
  const body = guide.slice(start + section.length + 6).split(/\n#{2,3} /)[0] ?? '';
  return [...body.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]!);
}

/** The JSON code blocks of a piece of Markdown, parsed. */
function jsonBlocks(markdown: string): unknown[] {
  return [...markdown.matchAll(/```json\n([\s\S]*?)\n```/g)].map((match) => JSON.parse(match[1]!) as unknown);
}

describe(DOCS_PATH, () => {
  it('has the reference the protocol module generates', () => {
    expect(withGeneratedReference(document, buildProtocolJsonSchema()) === document, `the reference in ${DOCS_PATH} is stale: run \`npm run generate:schema\` and commit the result`).toBe(true);
  });

  it('lists exactly the error codes of ErrorCodes, and mentions no other', () => {
    const table = document.slice(document.indexOf('### Error codes'));
    const listed = Object.fromEntries([...table.matchAll(/^\| (-32\d{3}) \| `(\w+)` \|/gm)].map((match) => [match[2], Number(match[1])]));
    expect(listed).toEqual(ErrorCodes);
    const known = new Set<number>(Object.values(ErrorCodes));
    const mentioned = [...document.matchAll(/-32\d{3}\b/g)].map((match) => Number(match[0]));
    expect(mentioned.filter((code) => !known.has(code))).toEqual([]);
  });

  it('maps every item kind, notification and server request to Codex app-server and ACP', () => {
    const kinds = [...ItemSchema.options.map((option) => option.shape.kind.value), 'plan'];
    expect(firstColumn('Item kinds').sort()).toEqual(expect.arrayContaining(kinds.sort()));
    const coming = ['conversation/created', 'conversation/deleted', 'conversation/synced', 'session/usage', 'plan/updated', 'input/requested', 'input/resolved', 'terminal/output', 'approval/requested', 'approval/resolved', 'turn/retrying'];
    expect(firstColumn('Notifications')).toEqual(expect.arrayContaining([...Object.keys(notifications), ...coming]));
    expect(firstColumn('Server-to-client requests')).toEqual(expect.arrayContaining(Object.keys(serverRequests)));
    // Every row says something in both columns.
    const start = guide.indexOf('## Mapping to Codex app-server and ACP');
    for (const row of guide.slice(start).matchAll(/^\| `[^`]+` \|(.*)\|(.*)\|$/gm)) {
      expect(row[1]!.trim().length, row[0]).toBeGreaterThan(0);
      expect(row[2]!.trim().length, row[0]).toBeGreaterThan(0);
    }
  });

  it('shows a worked session whose every message matches the schema, in order', () => {
    const start = guide.indexOf('<!-- worked-session');
    const end = guide.indexOf('<!-- end of worked session -->');
    const messages = jsonBlocks(guide.slice(start, end));
    expect(messages.length).toBeGreaterThan(15);
    const validator = new ConnectionMessageValidator(schema);
    const seen: string[] = [];
    for (const message of messages) {
      const { id, method } = message as { id?: unknown; method?: string };
      // Client requests have numeric ids; the client's answers reuse the server's string ids.
      const sent = (method !== undefined && Object.hasOwn(methods, method) && typeof id === 'number') || (method === undefined && typeof id === 'string');
      const check = validator.check(sent ? 'sent' : 'received', message);
      expect(check.problems, `${JSON.stringify(message).slice(0, 200)} (${check.definition})`).toEqual([]);
      seen.push(check.definition);
    }
    expect(seen).toEqual(expect.arrayContaining(['ConversationCreateResponse', 'ConversationSubscribeResponse', 'SessionInputResponse', 'ApprovalRequestServerRequest', 'ApprovalRequestServerRequestResponse', 'ItemDeltaNotification', 'TurnCompletedNotification']));
    // And the other examples of the guide are whole, valid messages too.
    for (const message of jsonBlocks(guide.slice(0, start) + guide.slice(end))) expect(schema.check('ClientMessage', message).length === 0 || schema.check('ServerMessage', message).length === 0, JSON.stringify(message)).toBe(true);
  });
});

/** Every const, enum value, method (`x-method`) and property name of a JSON Schema document: the names it defines. */
function namesIn(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const entry of value) namesIn(entry, into);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, entry] of Object.entries(value)) {
      // ACP names its methods with `x-method`.
      if ((key === 'const' || key === 'x-method') && typeof entry === 'string') into.add(entry);
      if (key === 'enum' && Array.isArray(entry)) for (const option of entry) if (typeof option === 'string') into.add(option);
      if (key === 'properties' && typeof entry === 'object' && entry !== null) for (const name of Object.keys(entry)) into.add(name);
      namesIn(entry, into);
    }
  }
  return into;
}

describe('the mapping table', () => {
  const readJson = (file: string) => JSON.parse(readFileSync(path.join(root, file), 'utf8')) as unknown;
  const codex = namesIn([readJson('../shared/fixtures/codex-app-server/codex_app_server_protocol.v2.schemas.json'), readJson('../shared/fixtures/codex-app-server/codex_app_server_protocol.schemas.json')]);
  const acp = namesIn(readJson('node_modules/@agentclientprotocol/sdk/schema/v1/schema.json'));
  // OpenVaala's own names, quoted in the table to say what maps to what.
  const ours = new Set<string>([...ItemSchema.options.map((option) => option.shape.kind.value), 'plan', 'allow_once', 'allow_session', 'allow_prefix', 'deny', 'text', 'reasoning', 'output', 'exec_command', 'write_stdin', 'apply_patch', 'spawn_agent', 'send_input', 'wait_agent', 'close_agent', ...Object.keys(notifications)]);

  it('names only variants and notifications that exist in the Codex app-server and ACP schemas', () => {
    const start = guide.indexOf('## Mapping to Codex app-server and ACP');
    const unknown: string[] = [];
    for (const row of guide.slice(start).matchAll(/^\| `[^`]+` \|(.*)\|(.*)\|$/gm)) {
      for (const [cell, names, protocol] of [[row[1]!, codex, 'Codex'], [row[2]!, acp, 'ACP']] as const) {
        for (const token of cell.matchAll(/`([a-z][A-Za-z_/]*)`/g)) {
          if (!ours.has(token[1]!) && !names.has(token[1]!)) unknown.push(`${protocol}: ${token[1]}`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });
});
