/**
 * The hand-written guide of docs/protocol.md names each method's params in tables
 * (`| method | params | result |`) and in sentences (`` `session/dequeue` (`conversationId`,
 * `sessionId?`, `inputId`) `` or `` `session/input` takes `conversationId`, `sessionId?`, … ``),
 * marking optional ones with `?`. Every field named there must exist in the method's zod
 * params schema with the same requiredness, and a table row must name every required field,
 * so the guide cannot ask for a field the server does not need, or leave out one it refuses
 * to go without.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { DOCS_PATH, REFERENCE_BEGIN } from '../../src/protocol/generate-docs.js';
import { SCHEMA_PATH } from '../../src/protocol/generate-schema.js';
import { pascalName } from '../../src/protocol/schema-names.js';
import { methods } from '../../src/protocol/index.js';

const root = path.resolve(import.meta.dirname, '../..');
const document = readFileSync(path.join(root, DOCS_PATH), 'utf8');
const guide = document.slice(0, document.indexOf(REFERENCE_BEGIN));

/** Fields a piece of the guide names for a method: name → optional. */
interface Documented {
  method: string;
  /** Where it was read, for the messages. */
  where: string;
  fields: Map<string, boolean>;
  /** Whether it claims to name every param (a table's params column does; a sentence may pick some). */
  complete: boolean;
}

/** The backticked field names of a params description, outside parentheses: `name` or `name?`. */
function fieldNames(text: string): Map<string, boolean> {
  let depth = 0;
  let outside = '';
  for (const character of text) {
    if (character === '(') depth += 1;
    else if (character === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0) outside += character;
  }
  const fields = new Map<string, boolean>();
  for (const match of outside.matchAll(/`([a-z][A-Za-z0-9]*)(\?)?`/g)) fields.set(match[1]!, match[2] === '?');
  return fields;
}

/** The methods named in a table's first cell: `` `a/b` `` each. */
function methodsIn(cell: string): string[] {
  return [...cell.matchAll(/`([a-z]+\/[A-Za-z/]+)`/g)].map((match) => match[1]!).filter((name) => Object.hasOwn(methods, name));
}

/** Every place the guide names a method's params. */
function documentedParams(): Documented[] {
  const found: Documented[] = [];
  let paramsColumn: number | undefined;
  for (const [index, line] of guide.split('\n').entries()) {
    if (!line.startsWith('|')) {
      paramsColumn = undefined;
    } else {
      const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim());
      if (cells[0] === 'method') paramsColumn = cells.indexOf('params') === -1 ? undefined : cells.indexOf('params');
      else if (paramsColumn !== undefined && !/^-+$/.test(cells[0] ?? '')) {
        const params = cells[paramsColumn] ?? '';
        const fields = params === '—' ? new Map<string, boolean>() : fieldNames(params);
        for (const method of methodsIn(cells[0] ?? '')) found.push({ method, where: `${DOCS_PATH}:${index + 1}`, fields, complete: true });
      }
    }
    // Sentences: "`m` (`a`, `b?`)" and "`m` takes `a`, `b?`, …".
    for (const match of line.matchAll(/`([a-z]+\/[A-Za-z]+)` \((`[a-z][A-Za-z0-9]*\??`(?:, `[a-z][A-Za-z0-9]*\??`)*)\)/g)) {
      if (Object.hasOwn(methods, match[1]!)) found.push({ method: match[1]!, where: `${DOCS_PATH}:${index + 1}`, fields: fieldNames(match[2]!), complete: false });
    }
  }
  const takes = /`([a-z]+\/[A-Za-z]+)` takes ((?:[^.]|\.(?!\s))*)\./g;
  for (const match of guide.matchAll(takes)) {
    if (!Object.hasOwn(methods, match[1]!)) continue;
    const line = guide.slice(0, match.index).split('\n').length;
    found.push({ method: match[1]!, where: `${DOCS_PATH}:${line}`, fields: fieldNames(match[2]!.split(/ The result /)[0]!), complete: false });
  }
  return found;
}

/** A JSON Schema object. */
type JsonSchema = { properties?: Record<string, unknown>; required?: string[]; oneOf?: JsonSchema[]; anyOf?: JsonSchema[]; $ref?: string };
const definitions = (JSON.parse(readFileSync(path.join(root, SCHEMA_PATH), 'utf8')) as { $defs: Record<string, JsonSchema> }).$defs;

/**
 * The params of a method as the committed JSON Schema (generated from the zod schemas) has
 * them: name → optional. Of a union of objects, a field is required when every variant requires it.
 */
function schemaParams(method: string): Map<string, boolean> {
  const resolve = (schema: JsonSchema): JsonSchema => (schema.$ref ? resolve(definitions[schema.$ref.replace('#/$defs/', '')]!) : schema);
  const params = resolve(definitions[`${pascalName(method)}Params`]!);
  const variants = (params.oneOf ?? params.anyOf ?? [params]).map(resolve);
  const fields = new Map<string, boolean>();
  for (const variant of variants) for (const name of Object.keys(variant.properties ?? {})) fields.set(name, !variants.every((other) => other.required?.includes(name)));
  return fields;
}

/** The params a method's zod schema lets a client leave out (top-level fields of an object schema). */
function zodOptionalParams(method: string): Map<string, boolean> | undefined {
  const shape = (methods[method as keyof typeof methods].params as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) return undefined;
  return new Map(Object.entries(shape).map(([name, field]) => [name, field.safeParse(undefined).success]));
}

describe('the committed JSON Schema of method params', () => {
  it('requires exactly the fields the server requires (a field with a default is optional)', () => {
    const problems: string[] = [];
    for (const method of Object.keys(methods)) {
      const server = zodOptionalParams(method);
      if (!server) continue;
      const committed = schemaParams(method);
      for (const [name, optional] of server) if (committed.get(name) !== optional) problems.push(`${method}: \`${name}\` is ${optional ? 'optional' : 'required'} for the server, ${committed.get(name) ? 'optional' : 'required'} in ${SCHEMA_PATH}`);
    }
    expect(problems).toEqual([]);
  });
});

describe(`params named in the guide of ${DOCS_PATH}`, () => {
  const documented = documentedParams();

  it('are read from the tables and sentences of the guide', () => {
    expect(new Set(documented.map((entry) => entry.method)).size).toBeGreaterThan(25);
    expect(documented.map((entry) => entry.method)).toEqual(expect.arrayContaining(['session/input', 'session/dequeue', 'fs/read', 'terminal/create', 'users/invite', 'config/update']));
  });

  it('exist in the method schemas, required exactly when the schema requires them', () => {
    const problems: string[] = [];
    for (const entry of documented) {
      const actual = schemaParams(entry.method);
      for (const [name, optional] of entry.fields) {
        if (!actual.has(name)) problems.push(`${entry.where}: ${entry.method} has no param \`${name}\``);
        else if (actual.get(name) !== optional) problems.push(`${entry.where}: ${entry.method} \`${name}\` is ${actual.get(name) ? 'optional' : 'required'} (write \`${name}${actual.get(name) ? '?' : ''}\`)`);
      }
      if (entry.complete) {
        for (const [name, optional] of actual) if (!optional && !entry.fields.has(name)) problems.push(`${entry.where}: ${entry.method} requires \`${name}\`, which the row does not name`);
      }
    }
    expect(problems).toEqual([]);
  });
});
