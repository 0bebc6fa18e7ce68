/**
 * Checks Codex app-server messages against the JSON Schema bundles of codex-cli 0.171.0
 * (`../shared/fixtures/codex-app-server/`, read from the project root; a missing file fails the
 * test). Each message is checked against the definition for what it is: a client request
 * (`ClientRequest`), client notification (`ClientNotification`), server notification
 * (`ServerNotification`), server request (`ServerRequest`), a successful answer (the method's
 * `…Response` definition, found from its `…Params` reference) or an error (`JSONRPCError`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';

/** The fixtures folder of the Codex app-server protocol. */
export const CODEX_FIXTURES = path.resolve('..', 'shared', 'fixtures', 'codex-app-server');

/** One message on the wire, as the transcripts record it. */
export interface WireEntry {
  dir: 'c->s' | 's->c';
  msg: { id?: number | string | null; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string } };
}

type Bundle = { definitions: Record<string, { oneOf?: { properties: { method: { enum: string[] }; params?: { $ref: string } } }[] }> & { v2: Record<string, unknown> } };

function readBundle(name: string): Bundle {
  // readFileSync throws for a missing file: the test fails, it does not skip.
  return JSON.parse(readFileSync(path.join(CODEX_FIXTURES, name), 'utf8')) as Bundle;
}

/** Validators for every kind of message, built once per test file. */
export class CodexSchema {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  private readonly responseRefs = new Map<string, string>();
  private readonly v2ResponseNames = new Map<string, string>();
  private readonly cache = new Map<string, ValidateFunction>();

  constructor() {
    const main = readBundle('codex_app_server_protocol.schemas.json');
    const v2 = readBundle('codex_app_server_protocol.v2.schemas.json');
    this.ajv.addSchema(main, 'codex');
    this.ajv.addSchema(v2, 'codex-v2');
    const definitions = main.definitions;
    for (const group of ['ClientRequest', 'ServerRequest'] as const) {
      for (const variant of definitions[group]!.oneOf!) {
        const method = variant.properties.method.enum[0]!;
        const ref = variant.properties.params?.$ref;
        // A method without params names its answer after itself: `configRequirements/read` → `ConfigRequirementsReadResponse`.
        const derived = `${method.split('/').map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('')}Response`;
        const responseRef = ref ? ref.replace(/Params$/, 'Response') : derived in definitions.v2 ? `#/definitions/v2/${derived}` : `#/definitions/${derived}`;
        this.responseRefs.set(`${group}:${method}`, responseRef);
        // A v2 method's answer is also checked against the separate v2 bundle.
        if (responseRef.startsWith('#/definitions/v2/')) this.v2ResponseNames.set(`${group}:${method}`, responseRef.slice('#/definitions/v2/'.length));
      }
    }
  }

  private validator(ref: string): ValidateFunction {
    let validate = this.cache.get(ref);
    if (!validate) {
      validate = this.ajv.getSchema(ref);
      if (!validate) throw new Error(`the schema bundle has no definition ${ref}`);
      this.cache.set(ref, validate);
    }
    return validate;
  }

  /** The definitions a message must match (as `bundle#pointer` refs), given the method of the request an answer answers. */
  definitionsFor(entry: WireEntry, answeredMethod?: string): string[] {
    const { msg, dir } = entry;
    const client = dir === 'c->s';
    if (msg.method !== undefined) {
      if (msg.id !== undefined) return [client ? 'codex#/definitions/ClientRequest' : 'codex#/definitions/ServerRequest'];
      return [client ? 'codex#/definitions/ClientNotification' : 'codex#/definitions/ServerNotification'];
    }
    if (msg.error !== undefined) return ['codex#/definitions/JSONRPCError'];
    if (!answeredMethod) throw new Error(`an answer (id ${String(msg.id)}) to no known request`);
    // A server answers client requests; a client answers server requests.
    const key = `${client ? 'ServerRequest' : 'ClientRequest'}:${answeredMethod}`;
    const ref = this.responseRefs.get(key);
    if (!ref) throw new Error(`the schema bundle has no response definition for ${key}`);
    const refs = [`codex${ref}`];
    const v2Name = this.v2ResponseNames.get(key);
    if (v2Name) refs.push(`codex-v2#/definitions/${v2Name}`);
    return refs;
  }

  /** The schema errors of a value against one definition (`codex#/definitions/v2/ThreadItem`); empty when valid. */
  errorsAgainst(ref: string, value: unknown): string[] {
    const validate = this.validator(ref);
    return validate(value) ? [] : [`${ref}: ${this.ajv.errorsText(validate.errors?.slice(0, 5))}`];
  }

  /** The schema errors of one message (empty when it is valid). */
  errors(entry: WireEntry, answeredMethod?: string): string[] {
    const found: string[] = [];
    for (const ref of this.definitionsFor(entry, answeredMethod)) {
      const validate = this.validator(ref);
      const value = entry.msg.method === undefined && entry.msg.error === undefined ? entry.msg.result : entry.msg;
      if (!validate(value)) found.push(`${ref}: ${this.ajv.errorsText(validate.errors?.slice(0, 5))}`);
    }
    return found;
  }

  /**
   * Checks a whole conversation of messages, pairing answers with their requests by id and
   * direction; returns one line per invalid message.
   */
  check(entries: readonly WireEntry[]): string[] {
    const clientRequests = new Map<string, string>();
    const serverRequests = new Map<string, string>();
    const problems: string[] = [];
    for (const entry of entries) {
      const { msg } = entry;
      let answered: string | undefined;
      if (msg.method !== undefined && msg.id !== undefined && msg.id !== null) (entry.dir === 'c->s' ? clientRequests : serverRequests).set(String(msg.id), msg.method);
      if (msg.method === undefined && msg.id !== undefined && msg.id !== null) answered = (entry.dir === 's->c' ? clientRequests : serverRequests).get(String(msg.id));
      const errors = this.errors(entry, answered);
      if (errors.length > 0) problems.push(`${entry.dir} ${JSON.stringify(msg).slice(0, 300)}\n    ${errors.join('\n    ')}`);
    }
    return problems;
  }
}

/** The recorded transcript `transcript-<name>.jsonl`. */
export function readTranscript(name: string): WireEntry[] {
  return readFileSync(path.join(CODEX_FIXTURES, `transcript-${name}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as WireEntry);
}
