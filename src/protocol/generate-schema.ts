/**
 * The protocol as one JSON Schema 2020-12 document (SPEC §5: defined once in zod, exported as
 * JSON Schema). `npm run generate:schema` writes it to `schema/openvaala-protocol.schema.json`
 * and regenerates the reference part of `docs/protocol.md` from it, so clients in other
 * languages, the tests and the documentation all read the same definitions.
 *
 * Shape of the document: every shared entity (each exported `…Schema` of the protocol module:
 * `Item`, each item kind, `Conversation`, `Session`, `Turn`, …) is one named definition under
 * `$defs`, referenced with `$ref` wherever it is used. Each method has `<Name>Params`,
 * `<Name>Result`, and the wire envelopes `<Name>Request` / `<Name>Response`; each notification
 * `<Name>NotificationParams` and `<Name>Notification`; each server-to-client request
 * `<Name>ServerRequestParams`, `<Name>ServerRequestResult`, `<Name>ServerRequest` and
 * `<Name>ServerRequestResponse`. The JSON-RPC 2.0 envelope (`ClientRequest`,
 * `ServerNotification`, `ServerRequest`, `Response`, `ErrorResponse`, `ClientMessage`,
 * `ServerMessage`) makes the document's root validate any whole wire message.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import * as protocol from './index.js';
import { ErrorCodes } from './json-rpc.js';
import { methods, notifications, PROTOCOL_VERSION, serverRequests } from './methods.js';
import { DOCS_PATH, withGeneratedReference } from './generate-docs.js';
import { pascalName } from './schema-names.js';

/** Where the generated schema is committed, relative to the project root. */
export const SCHEMA_PATH = 'schema/openvaala-protocol.schema.json';

/** A JSON Schema object as produced here. */
export type JsonSchema = Record<string, unknown>;

/** Exported zod schemas that are wire-handling internals, not protocol entities. */
const NOT_ENTITIES = new Set(['IncomingMessageSchema', 'ResponseMessageSchema']);

/** The `$ref` to a named definition. */
function ref(name: string): JsonSchema {
  return { $ref: `#/$defs/${name}` };
}

/** Whether a generated object schema has required properties (so `params` cannot be omitted). */
function hasRequired(schema: JsonSchema | undefined): boolean {
  return Array.isArray(schema?.required) && (schema.required as unknown[]).length > 0;
}

/**
 * `schema` with the `required` lists of `input` (the same schema generated as zod's input),
 * at every depth; everything else (`additionalProperties: false` above all) stays as it is.
 */
function withRequiredOf(schema: unknown, input: unknown): unknown {
  if (Array.isArray(schema)) return schema.map((entry, index) => withRequiredOf(entry, Array.isArray(input) ? input[index] : undefined));
  if (typeof schema !== 'object' || schema === null || typeof input !== 'object' || input === null) return schema;
  const other = input as JsonSchema;
  const merged: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key !== 'required') merged[key] = withRequiredOf(value, other[key]);
    else if (other.required !== undefined) merged.required = other.required;
  }
  return merged;
}

/**
 * Builds the protocol's JSON Schema document (JSON Schema 2020-12).
 * @throws Error when two definitions would get the same name (two exports, or a method and a
 *   notification, mapping to one PascalCase name), so no definition silently replaces another
 */
export function buildProtocolJsonSchema(): JsonSchema {
  const registry = z.registry<{ id: string }>();
  const idOf = (schema: z.ZodType): string | undefined => registry.get(schema)?.id;
  const taken = new Set<string>();
  const register = (schema: z.ZodType, id: string): string => {
    const existing = idOf(schema);
    if (existing !== undefined) return existing;
    if (taken.has(id)) throw new Error(`two protocol definitions are both named ${id}`);
    taken.add(id);
    // Metadata given with `.meta()` (JSON Schema keywords zod cannot infer, such as an `anyOf`
    // of required fields) goes into the definition too.
    registry.add(schema, { ...z.globalRegistry.get(schema), id });
    return id;
  };

  // Shared entities first, so methods refer to them by name instead of repeating them.
  for (const [exportName, value] of Object.entries(protocol)) {
    if (!exportName.endsWith('Schema') || NOT_ENTITIES.has(exportName) || !(value instanceof z.ZodType)) continue;
    register(value, exportName.slice(0, -'Schema'.length));
  }
  // Item kinds added to the union without an exported schema of their own still get a name.
  for (const option of protocol.ItemSchema.options as readonly z.ZodObject[]) {
    const kind = (option.shape.kind as z.ZodLiteral<string>).value;
    register(option, `${pascalName(kind)}Item`);
  }

  const methodIds: Record<string, { params: string; result: string }> = {};
  for (const [name, method] of Object.entries(methods)) {
    methodIds[name] = { params: register(method.params, `${pascalName(name)}Params`), result: register(method.result, `${pascalName(name)}Result`) };
  }
  const notificationIds: Record<string, string> = {};
  for (const [name, schema] of Object.entries(notifications)) notificationIds[name] = register(schema, `${pascalName(name)}NotificationParams`);
  const serverRequestIds: Record<string, { params: string; result: string }> = {};
  for (const [name, request] of Object.entries(serverRequests)) {
    serverRequestIds[name] = { params: register(request.params, `${pascalName(name)}ServerRequestParams`), result: register(request.result, `${pascalName(name)}ServerRequestResult`) };
  }

  const jsonSchemaOptions = { target: 'draft-2020-12', unrepresentable: 'any', uri: (id: string) => `#/$defs/${id}` } as const;
  const generated = z.toJSONSchema(registry, jsonSchemaOptions).schemas;
  // What clients send is read as zod's input: there a field with a default may be left out
  // (`users/invite` without `role`), where what the server sends always has it.
  const asInput = z.toJSONSchema(registry, { ...jsonSchemaOptions, io: 'input' }).schemas;
  for (const id of [...Object.values(methodIds).map((ids) => ids.params), ...Object.values(serverRequestIds).map((ids) => ids.result)]) {
    if (asInput[id] !== undefined && generated[id] !== undefined) generated[id] = withRequiredOf(generated[id], asInput[id]) as typeof generated[string];
  }
  const defs: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(generated)) {
    const { $schema: _schema, $id: _id, id: _registryId, ...rest } = schema as JsonSchema;
    defs[id] = rest;
  }

  const envelope = (name: string, schema: JsonSchema): void => {
    if (defs[name] !== undefined) throw new Error(`two protocol definitions are both named ${name}`);
    defs[name] = schema;
  };
  const jsonrpc = { const: '2.0' };
  envelope('ProtocolVersion', { description: 'The protocol version this document describes (`initialize` refuses any other).', const: PROTOCOL_VERSION });
  envelope('RequestId', { description: 'JSON-RPC 2.0 request id: a string or a number.', type: ['string', 'number'] });
  envelope('JsonRpcError', {
    type: 'object',
    properties: { code: { type: 'integer', enum: [...new Set(Object.values(ErrorCodes))] }, message: { type: 'string' }, data: {} },
    required: ['code', 'message'],
    additionalProperties: false,
    // A conflict always says why, in a form a program can test.
    if: { properties: { code: { const: ErrorCodes.conflict } } },
    then: { properties: { data: ref('ConflictErrorData') }, required: ['data'] },
  });
  envelope('ErrorResponse', {
    description: 'A JSON-RPC 2.0 error response; `id` is null when the request could not be read.',
    type: 'object',
    properties: { jsonrpc, id: { anyOf: [ref('RequestId'), { type: 'null' }] }, error: ref('JsonRpcError') },
    required: ['jsonrpc', 'id', 'error'],
    additionalProperties: false,
  });
  envelope('Response', {
    description: 'A JSON-RPC 2.0 success response; its `result` has the shape of the requested method\'s `<Name>Result` (see `<Name>Response`).',
    type: 'object',
    properties: { jsonrpc, id: ref('RequestId'), result: {} },
    required: ['jsonrpc', 'id', 'result'],
    additionalProperties: false,
  });

  const request = (method: string, paramsId: string): JsonSchema => ({
    type: 'object',
    properties: { jsonrpc, id: ref('RequestId'), method: { const: method }, params: ref(paramsId) },
    required: ['jsonrpc', 'id', 'method', ...(hasRequired(defs[paramsId]) ? ['params'] : [])],
    additionalProperties: false,
  });
  const response = (resultId: string): JsonSchema => ({
    type: 'object',
    properties: { jsonrpc, id: ref('RequestId'), result: ref(resultId) },
    required: ['jsonrpc', 'id', 'result'],
    additionalProperties: false,
  });
  const clientRequests: JsonSchema[] = [];
  for (const [name, ids] of Object.entries(methodIds)) {
    envelope(`${pascalName(name)}Request`, request(name, ids.params));
    envelope(`${pascalName(name)}Response`, response(ids.result));
    clientRequests.push(ref(`${pascalName(name)}Request`));
  }
  const serverNotifications: JsonSchema[] = [];
  for (const [name, id] of Object.entries(notificationIds)) {
    envelope(`${pascalName(name)}Notification`, {
      type: 'object',
      properties: { jsonrpc, method: { const: name }, params: ref(id) },
      required: ['jsonrpc', 'method', 'params'],
      additionalProperties: false,
    });
    serverNotifications.push(ref(`${pascalName(name)}Notification`));
  }
  const serverRequestEnvelopes: JsonSchema[] = [];
  for (const [name, ids] of Object.entries(serverRequestIds)) {
    envelope(`${pascalName(name)}ServerRequest`, { ...request(name, ids.params), required: ['jsonrpc', 'id', 'method', 'params'] });
    envelope(`${pascalName(name)}ServerRequestResponse`, response(ids.result));
    serverRequestEnvelopes.push(ref(`${pascalName(name)}ServerRequest`));
  }
  envelope('ClientRequest', { description: 'Any request a client sends.', oneOf: clientRequests });
  envelope('ServerNotification', { description: 'Any notification the server sends.', oneOf: serverNotifications });
  envelope('ServerRequest', { description: 'Any request the server sends to a client.', oneOf: serverRequestEnvelopes });
  envelope('ClientMessage', { description: 'Any message a client sends: a request, or the answer to a server request.', anyOf: [ref('ClientRequest'), ref('Response'), ref('ErrorResponse')] });
  envelope('ServerMessage', { description: 'Any message the server sends.', anyOf: [ref('ServerNotification'), ref('ServerRequest'), ref('Response'), ref('ErrorResponse')] });

  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://openvaala.invalid/schema/openvaala-protocol-v${PROTOCOL_VERSION}.schema.json`,
    title: `OpenVaala runtime protocol, version ${PROTOCOL_VERSION}`,
    description:
      'JSON-RPC 2.0 over WebSocket. The root validates any whole wire message; `$defs` names every entity, method (Params, Result, Request, Response), notification and server request. Generated by `npm run generate:schema`; do not edit.',
    anyOf: [ref('ClientMessage'), ref('ServerMessage')],
    $defs: Object.fromEntries(Object.entries(defs).sort(([a], [b]) => a.localeCompare(b))),
  };
}

/** The committed file's exact text for a schema document (2-space JSON, final newline). */
export function schemaFileText(schema: JsonSchema = buildProtocolJsonSchema()): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/**
 * Writes the schema file and regenerates the reference part of the protocol document.
 * @param root the project root
 * @returns the paths written
 */
export function writeGeneratedProtocolFiles(root: string): string[] {
  const schema = buildProtocolJsonSchema();
  const schemaPath = path.join(root, SCHEMA_PATH);
  mkdirSync(path.dirname(schemaPath), { recursive: true });
  writeFileSync(schemaPath, schemaFileText(schema));
  const docsPath = path.join(root, DOCS_PATH);
  writeFileSync(docsPath, withGeneratedReference(readFileSync(docsPath, 'utf8'), schema));
  return [schemaPath, docsPath];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const written of writeGeneratedProtocolFiles(path.resolve(process.argv[2] ?? '.'))) console.log(`wrote ${written}`);
}
