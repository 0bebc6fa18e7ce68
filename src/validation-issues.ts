/**
 * zod's validation issues in the words a person fixing the input needs, for configuration files
 * and protocol params alike: a missing key said as missing, an unknown key at the key itself, a
 * value matching none of a union's forms told what is wrong with the one form of its type (not
 * zod's bare "Invalid input").
 */
import type { z } from 'zod';
import { similarNames } from './similar-names.js';

/** The value a failed parse was given, and the schema it was parsed with (when the caller has it). */
export interface ParsedInput {
  /** The whole value that was parsed. */
  root: unknown;
  /** The schema `root` was parsed with: where the known keys of a mapping are found. */
  schema?: z.ZodType;
}

/**
 * The known key an unknown one most likely meant: the nearest by edit distance, letter case
 * ignored (`baseUrl` for `baseURL` is the commonest slip), or undefined when none is near.
 */
function nearestKey(key: string, known: readonly string[]): string | undefined {
  const lower = known.map((name) => name.toLowerCase());
  const near = similarNames(key.toLowerCase(), lower)[0];
  return near === undefined ? undefined : known[lower.indexOf(near)];
}

/** One issue: where (the key path) and what. */
export interface ExplainedIssue {
  keyPath: PropertyKey[];
  message: string;
}

/** zod's type names in words. */
const TYPE_WORDS: Record<string, string> = { record: 'a mapping of names', object: 'a mapping', array: 'a list', string: 'a string', number: 'a number', int: 'an integer', boolean: 'true or false' };

/** The type a zod `invalid_type` issue says it received (`received string` in its message). */
function receivedType(issue: z.core.$ZodIssue): string | undefined {
  return /received (\w+)/.exec(issue.message)?.[1];
}

/** A value as JSON (what a person wrote), cut to 80 characters; values JSON cannot write as text. */
function quoted(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** The value at `keyPath` in `root`, or undefined when the path leads nowhere. */
function valueAt(root: unknown, keyPath: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of keyPath) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * A tag (`kind: dockr`, or none) that selects none of a discriminated union's forms, said with
 * the value found and the values allowed, instead of zod's "Invalid discriminator value".
 */
function explainDiscriminator(issue: z.core.$ZodIssue & { options?: unknown[] }, parsed: ParsedInput | undefined): ExplainedIssue {
  const options = (issue.options ?? []).map(String);
  const allowed = options.map((option) => `"${option}"`).join(', ');
  if (!parsed) return { keyPath: issue.path, message: `must be one of ${allowed}` };
  const value = valueAt(parsed.root, issue.path);
  if (value === undefined) return { keyPath: issue.path, message: `required, but missing (one of ${allowed})` };
  const near = typeof value === 'string' ? similarNames(value, options)[0] : undefined;
  return { keyPath: issue.path, message: `${JSON.stringify(value)} is not one of ${allowed}${near ? ` (did you mean "${near}"?)` : ''}` };
}

/**
 * Says a schema's issue in the words a person editing the file needs: an unknown key at the
 * key itself (each at its own line, not at the mapping holding it); a bad record key with the
 * naming rule it broke, not "Invalid key in record"; a value matching none of a union's forms
 * with the problems of the one form of its type (`reasoning: { effort: extreme }` is told the
 * efforts allowed), or the types allowed when its type fits none, not "Invalid input"; a
 * discriminator (`kind`) missing or naming no form, with the value found and those allowed;
 * an unknown key with the known key of its mapping it most likely meant, when the schema is given.
 * @param issue one of the issues of a failed parse
 * @param parsed the whole value that was parsed (to quote a bad discriminator) and the schema
 *   it was parsed with (to suggest a known key); omit when unknown
 */
export function explainIssue(issue: z.core.$ZodIssue, parsed?: ParsedInput): ExplainedIssue[] {
  // A schema's own message for it (`mcp.yaml`'s transport) says more than the generic one.
  if (issue.code === 'invalid_union' && (issue as { note?: string }).note === 'No matching discriminator' && issue.message.startsWith('Invalid discriminator value')) return [explainDiscriminator(issue, parsed)];
  // "expected record, received undefined" is zod's way of saying a required key is not there.
  if (issue.code === 'invalid_type' && receivedType(issue) === 'undefined') return [{ keyPath: issue.path, message: `required, but missing (${TYPE_WORDS[issue.expected] ?? issue.expected} expected)` }];
  // zod says a missing key of fixed values ("Invalid option: expected one of …") as if a wrong value were there.
  if (issue.code === 'invalid_value' && parsed && issue.path.length > 0 && valueAt(parsed.root, issue.path) === undefined) {
    return [{ keyPath: issue.path, message: `required, but missing (one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')})` }];
  }
  // zod's "Invalid option: expected one of …" names neither the value found nor the one meant.
  if (issue.code === 'invalid_value' && issue.values.length > 0) {
    const allowed = `${issue.values.length > 1 ? 'one of ' : ''}${issue.values.map(quoted).join(', ')}`;
    if (!parsed) return [{ keyPath: issue.path, message: `must be ${allowed}` }];
    const value = valueAt(parsed.root, issue.path);
    const near = typeof value === 'string' ? similarNames(value, issue.values.filter((option): option is string => typeof option === 'string'))[0] : undefined;
    return [{ keyPath: issue.path, message: `${quoted(value)} is not ${allowed}${near !== undefined ? ` (did you mean "${near}"?)` : ''}` }];
  }
  if (issue.code === 'unrecognized_keys') {
    const known = parsed?.schema ? knownKeysAt(parsed.schema, issue.path, parsed.root).filter((name) => !issue.keys.includes(name)) : [];
    return issue.keys.map((key) => {
      const near = nearestKey(key, known);
      return { keyPath: [...issue.path, key], message: `Unrecognized key: "${key}"${near ? ` (did you mean "${near}"?)` : ''}` };
    });
  }
  if (issue.code === 'invalid_key') return [{ keyPath: issue.path, message: issue.issues.map((inner) => inner.message).join('; ') }];
  // A schema's own message for a union (`skills: expected a path …, or a list of such paths`) is kept: it says more than the types.
  if (issue.code === 'invalid_union' && issue.errors.length > 0 && issue.message === 'Invalid input') {
    const wrongType = (branch: z.core.$ZodIssue[]): boolean => branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0);
    const fitting = issue.errors.filter((branch) => !wrongType(branch));
    if (fitting.length === 1) return (fitting[0] as z.core.$ZodIssue[]).flatMap((inner) => explainIssue({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue, parsed));
    if (fitting.length === 0) {
      const expected = [...new Set(issue.errors.flatMap((branch) => branch.flatMap((inner) => (inner.code === 'invalid_type' && inner.path.length === 0 ? [inner.expected] : []))))];
      const received = receivedType(issue.errors[0]?.[0] as z.core.$ZodIssue);
      if (expected.length > 0 && received === 'undefined') return [{ keyPath: issue.path, message: `required, but missing (${expected.map((type) => TYPE_WORDS[type] ?? type).join(' or ')} expected)` }];
      if (expected.length > 0) return [{ keyPath: issue.path, message: `expected ${expected.join(' or ')}${received ? `, received ${received}` : ''}` }];
    }
  }
  return [{ keyPath: issue.path, message: issue.message }];
}

/** What a schema's definition holds, of the parts the walk below reads (zod 4's `_zod.def`). */
interface SchemaDefinition {
  type: string;
  shape?: Record<string, SchemaNode>;
  innerType?: SchemaNode;
  in?: SchemaNode;
  valueType?: SchemaNode;
  element?: SchemaNode;
  options?: SchemaNode[];
  discriminator?: string;
  getter?: () => SchemaNode;
  left?: SchemaNode;
  right?: SchemaNode;
  catchall?: SchemaNode;
  items?: SchemaNode[];
  rest?: SchemaNode | null;
}

/** A schema as the walk below sees it. */
interface SchemaNode {
  _zod: { def: SchemaDefinition };
}

/** Schemas that wrap another without changing which keys a mapping may hold. */
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional', 'success']);

/**
 * The schemas `value` is checked against at this point, wrappers removed: for a union, the
 * forms that could apply (for a discriminated one, those whose tag matches `value`'s).
 */
function formsOf(schema: SchemaNode, value: unknown, depth = 0): SchemaNode[] {
  const definition = schema._zod.def;
  if (depth > 64) return [];
  if (WRAPPERS.has(definition.type) && definition.innerType) return formsOf(definition.innerType, value, depth + 1);
  if (definition.type === 'pipe' && definition.in) return formsOf(definition.in, value, depth + 1);
  if (definition.type === 'lazy' && definition.getter) return formsOf(definition.getter(), value, depth + 1);
  if (definition.type === 'intersection' && definition.left && definition.right) return [...formsOf(definition.left, value, depth + 1), ...formsOf(definition.right, value, depth + 1)];
  if (definition.type === 'union' && definition.options) {
    const tag = definition.discriminator;
    const tagValue = tag !== undefined && value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[tag] : undefined;
    const matching = definition.options.filter((option) => {
      const tagSchema = tag !== undefined ? option._zod.def.shape?.[tag] : undefined;
      return tagSchema === undefined || (tagSchema as unknown as z.ZodType).safeParse(tagValue).success;
    });
    return (matching.length > 0 ? matching : definition.options).flatMap((option) => formsOf(option, value, depth + 1));
  }
  return [schema];
}

/**
 * The keys the schema knows for the mapping at `keyPath` of `root` (those of every form that
 * could apply there), for "did you mean" suggestions on an unknown key.
 * @param schema the schema `root` was parsed with
 * @param keyPath where the mapping is: keys of mappings and records, indexes of lists
 * @returns the known keys, each once; empty when the path leads to no mapping of fixed keys
 */
export function knownKeysAt(schema: z.ZodType, keyPath: readonly PropertyKey[], root: unknown): string[] {
  let nodes = formsOf(schema as unknown as SchemaNode, root);
  let value = root;
  for (const key of keyPath) {
    value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
    const next: SchemaNode[] = [];
    for (const node of nodes) {
      const definition = node._zod.def;
      const child = definition.type === 'object' ? definition.shape?.[String(key)] : definition.type === 'record' ? definition.valueType : definition.type === 'array' ? definition.element : undefined;
      if (child) next.push(...formsOf(child, value));
    }
    nodes = next;
  }
  return [...new Set(nodes.flatMap((node) => (node._zod.def.type === 'object' ? Object.keys(node._zod.def.shape ?? {}) : [])))];
}

/** The schemas that check the item at `index` of a list, by the list schemas that could apply. */
function itemSchemas(nodes: readonly SchemaNode[], index: number): SchemaNode[] {
  return nodes.flatMap((node) => {
    const definition = node._zod.def;
    if (definition.type === 'array' && definition.element) return [definition.element];
    if (definition.type === 'tuple') return [definition.items?.[index] ?? definition.rest ?? undefined].filter((item): item is SchemaNode => item !== undefined);
    return [];
  });
}

/**
 * The keys of `root` that no schema there takes: zod's plain `z.object` drops a key it does not
 * know without a word, so a misspelt optional key (`strat_line`) would be ignored and the input
 * read as if it were not there. A mapping that takes any key (a record, a loose object) has no
 * unknown keys, and a strict object's are left to zod, which refuses them itself. Where the
 * schema allows several forms (a union), a key is unknown when none of them takes it.
 * @param schema the schema `root` is checked against
 * @param root the value to check, as received
 * @returns one `unrecognized_keys` issue for each mapping with such keys, at the mapping's path,
 *   in the form zod gives for a strict object (so `explainIssue` tells them the same way)
 */
export function unknownKeyIssues(schema: z.ZodType, root: unknown): z.core.$ZodIssue[] {
  const issues: z.core.$ZodIssue[] = [];
  const visit = (nodes: SchemaNode[], value: unknown, path: PropertyKey[], depth: number): void => {
    if (depth > 64 || nodes.length === 0 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      value.forEach((item, index) => visit(itemSchemas(nodes, index).flatMap((child) => formsOf(child, item)), item, [...path, index], depth + 1));
      return;
    }
    const mapping = value as Record<string, unknown>;
    const objects = nodes.filter((node) => node._zod.def.type === 'object');
    const records = nodes.filter((node) => node._zod.def.type === 'record');
    const takesAnyKey = records.length > 0 || objects.some((node) => node._zod.def.catchall !== undefined);
    const keys = Object.keys(mapping).filter((key) => mapping[key] !== undefined);
    const unknown = takesAnyKey || objects.length === 0 ? [] : keys.filter((key) => !objects.some((node) => Object.hasOwn(node._zod.def.shape ?? {}, key)));
    if (unknown.length > 0) issues.push({ code: 'unrecognized_keys', keys: unknown, path, message: `Unrecognized key${unknown.length > 1 ? 's' : ''}: ${unknown.map((key) => `"${key}"`).join(', ')}`, input: mapping } as z.core.$ZodIssue);
    for (const key of keys) {
      const children = [...objects.flatMap((node) => node._zod.def.shape?.[key] ?? []), ...records.flatMap((node) => node._zod.def.valueType ?? [])];
      visit(children.flatMap((child) => formsOf(child, mapping[key])), mapping[key], [...path, key], depth + 1);
    }
  };
  visit(formsOf(schema as unknown as SchemaNode, root), root, [], 0);
  return issues;
}
