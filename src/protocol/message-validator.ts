/**
 * Checks whole wire messages of one connection against the protocol's JSON Schema document
 * (JSON Schema 2020-12, validated with ajv 8). A response carries no method, so the
 * validator remembers the method of each request by id (JSON-RPC 2.0 §5: a response has the
 * id of its request) and checks the response's `result` against that method's `Result`.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { formatKeyPath, jsonPointerPath } from '../key-path.js';
import { pascalName } from './schema-names.js';

/** Which way a message went, seen from the client. */
export type MessageDirection = 'sent' | 'received';

/** The outcome of checking one message. */
export interface MessageCheck {
  /** The `$defs` name the message was checked against. */
  definition: string;
  /** The method the message belongs to (a response's is its request's), when known. */
  method: string | undefined;
  /** Empty when valid; otherwise one line per problem: `<key path> <what is wrong>` (`params.turn must have …`). */
  problems: string[];
}

/** Compiled definitions of one schema document, shared by any number of connections. */
export class ProtocolSchema {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly id: string;

  /**
   * @param document the document `buildProtocolJsonSchema` built (as committed in
   *   `schema/openvaala-protocol.schema.json`)
   * @param options `checkDocument: false` skips checking the whole document against the JSON
   *   Schema 2020-12 meta-schema up front (about 50 ms), for a document already checked
   *   elsewhere; each definition is still compiled in strict mode when first used
   * @throws Error when the document is not valid JSON Schema 2020-12 (ajv strict mode)
   */
  constructor(
    readonly document: Record<string, unknown>,
    options: { checkDocument?: boolean } = {},
  ) {
    // Union types (`["string", "null"]`) are standard JSON Schema; strict mode refuses the rest.
    // Unoptimised code compiles in about half the time, which matters more here (once per
    // process) than the validation speed.
    this.ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, code: { optimize: false }, validateSchema: options.checkDocument ?? true });
    this.id = String(document.$id);
    // Only the definitions: compiling the root's union would compile every definition up
    // front, where each check needs only its own.
    const { anyOf: _root, ...definitions } = document;
    this.ajv.addSchema(definitions);
  }

  /** Whether the document names a definition. */
  has(definition: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.document.$defs ?? {}, definition);
  }

  /** The document's definition of that name (its JSON Schema object), or undefined. */
  definition(name: string): unknown {
    return this.has(name) ? (this.document.$defs as Record<string, unknown>)[name] : undefined;
  }

  /**
   * Checks a value against one named definition.
   * @returns one line per problem (`<key path> <message>`), empty when valid
   * @throws Error when the document has no such definition
   */
  check(definition: string, value: unknown): string[] {
    let validate = this.compiled.get(definition);
    if (!validate) {
      if (!this.has(definition)) throw new Error(`the protocol schema has no definition ${definition}`);
      validate = this.ajv.getSchema(`${this.id}#/$defs/${definition}`);
      if (!validate) throw new Error(`the protocol schema has no definition ${definition}`);
      this.compiled.set(definition, validate);
    }
    if (validate(value)) return [];
    return describeErrors(validate.errors ?? [], value);
  }
}

/**
 * ajv errors as lines, the most specific first, without the noise of every union branch; each
 * names its place by key path (see `formatKeyPath`: `params.input[1].text`).
 * @param value the value the errors are about, which tells a list's index from a key of digits
 */
function describeErrors(errors: NonNullable<ValidateFunction['errors']>, value: unknown): string[] {
  const deepest = Math.max(...errors.map((error) => error.instancePath.split('/').length));
  const specific = errors.filter((error) => error.instancePath.split('/').length === deepest);
  const lines = (specific.length > 0 ? specific : errors).map((error) => `${formatKeyPath(jsonPointerPath(error.instancePath, value)) || '(message)'} ${error.message ?? error.keyword}${error.params && 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : ''}`);
  return [...new Set(lines)].slice(0, 8);
}

/**
 * The messages of one connection, checked in order. Keep one per connection: it pairs each
 * response with the request it answers.
 */
export class ConnectionMessageValidator {
  /** Method of each request the client sent, by id, until its response arrives. */
  private readonly clientRequests = new Map<string | number, string>();
  /** Method of each request the server sent, by id, until the client answers. */
  private readonly serverRequestIds = new Map<string | number, string>();

  /** @param schema the compiled protocol schema */
  constructor(private readonly schema: ProtocolSchema) {}

  /**
   * The definition of a method's message of one kind, or `fallback` when the method is not one
   * of this protocol version. The document has, for each method (`buildProtocolJsonSchema`), a
   * `<Name>Request`, `<Name>ServerRequest` or `<Name>Notification` whose `method` is that
   * method's name, and for requests a `<Name>Response` or `<Name>ServerRequestResponse`. Read
   * from the document rather than the method tables, so checking a message loads none of the
   * server's schema code.
   * @param kind the suffix of the definition wanted
   * @param messageKind the suffix of the definition that carries the method's name
   */
  private definitionOf(method: string | undefined, kind: string, messageKind: string, fallback: string): string {
    if (method === undefined) return fallback;
    const name = pascalName(method);
    const carrier = this.schema.definition(`${name}${messageKind}`) as { properties?: { method?: { const?: unknown } } } | undefined;
    if (carrier?.properties?.method?.const !== method) return fallback;
    return this.schema.has(`${name}${kind}`) ? `${name}${kind}` : fallback;
  }

  /**
   * Checks one message.
   * @param direction `sent` by the client or `received` from the server
   * @param message the parsed message; undefined when the text was not JSON
   */
  check(direction: MessageDirection, message: unknown): MessageCheck {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      return { definition: direction === 'sent' ? 'ClientMessage' : 'ServerMessage', method: undefined, problems: ['(message) is not a JSON object'] };
    }
    const { id, method } = message as { id?: unknown; method?: unknown };
    const hasId = typeof id === 'string' || typeof id === 'number';
    let definition: string;
    let named: string | undefined = typeof method === 'string' ? method : undefined;
    if (direction === 'sent') {
      if (named !== undefined) {
        if (hasId) this.clientRequests.set(id, named);
        definition = this.definitionOf(named, 'Request', 'Request', 'ClientRequest');
      } else {
        named = hasId ? this.serverRequestIds.get(id) : undefined;
        if (hasId) this.serverRequestIds.delete(id);
        definition = 'error' in message ? 'ErrorResponse' : this.definitionOf(named, 'ServerRequestResponse', 'ServerRequest', 'Response');
      }
    } else if (named !== undefined) {
      if (hasId) {
        this.serverRequestIds.set(id, named);
        definition = this.definitionOf(named, 'ServerRequest', 'ServerRequest', 'ServerRequest');
      } else {
        definition = this.definitionOf(named, 'Notification', 'Notification', 'ServerNotification');
      }
    } else {
      named = hasId ? this.clientRequests.get(id) : undefined;
      if (hasId) this.clientRequests.delete(id);
      definition = 'error' in message ? 'ErrorResponse' : this.definitionOf(named, 'Response', 'Request', 'Response');
    }
    // An unknown name fails every branch of the union; saying so is clearer than all of them.
    if (named !== undefined && typeof method === 'string' && ['ClientRequest', 'ServerRequest', 'ServerNotification'].includes(definition)) {
      return { definition, method: named, problems: [`method ${JSON.stringify(named.slice(0, 100))} is not a ${definition === 'ServerNotification' ? 'notification' : definition === 'ServerRequest' ? 'server-to-client request' : 'method'} of this protocol version`] };
    }
    return { definition, method: named, problems: this.schema.check(definition, message) };
  }
}
