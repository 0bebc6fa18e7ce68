/**
 * Lists the key paths of a configuration file's schema, so the configuration reference can be
 * checked against the schemas (every key documented, no key documented that does not exist).
 *
 * A key path joins keys with `.`: a record's keys (`additionalProperties`) are written `<name>`,
 * an array's items `[]` (`providers.<name>.baseURL`, `hooks.pre_tool_use[].matcher`). The
 * branches of a union (`anyOf`, `oneOf`) are merged, so `executors.<name>.host` is listed once
 * though only `kind: ssh` has it. An array's items are not listed apart from the array itself
 * (`hooks.stop`), only the keys inside them (`hooks.stop[].command`).
 */
import { z } from 'zod';

/** One key path of a schema. */
export interface SchemaKeyPath {
  /** `providers.<name>.baseURL`. */
  path: string;
  /** JSON Schema types the value may have (`string`, `integer`, `object`, …), sorted. */
  types: string[];
  /** Defaults the schema itself gives (a default applied later by the runtime is not known here). */
  defaults: unknown[];
}

/** The part of JSON Schema that `z.toJSONSchema` produces for configuration schemas. */
interface JsonSchemaNode {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, JsonSchemaNode>;
  additionalProperties?: boolean | JsonSchemaNode;
  items?: JsonSchemaNode;
  anyOf?: JsonSchemaNode[];
  oneOf?: JsonSchemaNode[];
  allOf?: JsonSchemaNode[];
  $ref?: string;
  $defs?: Record<string, JsonSchemaNode>;
}

function isContainer(node: JsonSchemaNode): boolean {
  return node.properties !== undefined || typeof node.additionalProperties === 'object' || node.items !== undefined;
}

/**
 * The key paths of a zod schema, in the order of its properties.
 * @param schema the schema of one configuration file
 */
export function schemaKeyPaths(schema: z.ZodType): SchemaKeyPath[] {
  const root = z.toJSONSchema(schema, { unrepresentable: 'any' }) as JsonSchemaNode;
  const found = new Map<string, { types: Set<string>; defaults: unknown[] }>();

  const resolve = (node: JsonSchemaNode): JsonSchemaNode => {
    if (node.$ref === undefined) return node;
    const name = /^#\/\$defs\/(.+)$/.exec(node.$ref)?.[1];
    const target = name !== undefined ? root.$defs?.[name] : undefined;
    if (!target) throw new Error(`cannot resolve ${node.$ref}`);
    return target;
  };

  /** The node and the branches of its unions, flattened. */
  const branches = (node: JsonSchemaNode): JsonSchemaNode[] => {
    const resolved = resolve(node);
    const nested = [...(resolved.anyOf ?? []), ...(resolved.oneOf ?? []), ...(resolved.allOf ?? [])];
    return [resolved, ...nested.flatMap(branches)];
  };

  const record = (path: string, node: JsonSchemaNode): void => {
    const entry = found.get(path) ?? { types: new Set<string>(), defaults: [] };
    found.set(path, entry);
    for (const branch of branches(node)) {
      for (const type of [branch.type ?? []].flat()) entry.types.add(type);
      if (branch.default !== undefined) entry.defaults.push(branch.default);
    }
  };

  const visit = (prefix: string, node: JsonSchemaNode, seen: ReadonlySet<JsonSchemaNode>): void => {
    for (const branch of branches(node)) {
      if (seen.has(branch)) continue;
      const inside = new Set(seen).add(branch);
      for (const [key, child] of Object.entries(branch.properties ?? {})) {
        const path = prefix ? `${prefix}.${key}` : key;
        record(path, child);
        visit(path, child, inside);
      }
      if (typeof branch.additionalProperties === 'object') {
        const path = prefix ? `${prefix}.<name>` : '<name>';
        record(path, branch.additionalProperties);
        visit(path, branch.additionalProperties, inside);
      }
      if (branch.items !== undefined && branches(branch.items).some(isContainer)) {
        visit(`${prefix}[]`, branch.items, inside);
      }
    }
  };

  visit('', root, new Set());
  return [...found].map(([path, { types, defaults }]) => ({ path, types: [...types].sort(), defaults }));
}
