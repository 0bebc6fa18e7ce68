/**
 * Checks the arguments of an MCP tool call against the tool's `inputSchema` (MCP specification
 * 2025-11-25, Tools) before the call goes to the server. Many servers never check arguments
 * themselves: a tool declared to take a string gets a number, or nothing, and answers as if all
 * were well. Refused here, the model reads which argument is wrong and can call again, as it
 * does with the built-in tools.
 *
 * A schema is the server's own, and may name a dialect, use vendor keywords or formats, refer
 * to documents elsewhere, or not be valid JSON Schema at all. None of that may make the tool
 * unusable: schemas are compiled leniently, and a tool whose schema still cannot be compiled
 * has its arguments passed on unchecked (with one warning).
 */
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import type { Logger } from '../logger.js';
import { formatKeyPath, jsonPointerPath } from '../key-path.js';
import { similarNames, unknownNameHint } from '../similar-names.js';
import { conciseFailureText } from './failure-text.js';

/** The JSON Schema dialects a tool's schema is compiled as. */
type Dialect = 'draft-2020-12' | 'draft-07';

/** Compiles one schema in one dialect. @throws Error when ajv cannot compile it */
type SchemaCompiler = (schema: Record<string, unknown>) => ValidateFunction;

const AJV_OPTIONS: Options = {
  // Vendor keywords, unknown formats and loose typing are common in servers' schemas.
  strict: false,
  // Every failing argument, so one retry can fix them all.
  allErrors: true,
  // Each error then carries the value it is about, quoted back as "(got …)".
  verbose: true,
  // Formats (`uri`, `date-time`…) are left to the server: checking them would need a package
  // the runtime does not depend on, and a format this side reads differently would refuse
  // arguments the server accepts.
  validateFormats: false,
  // The meta-schema would be compiled for every instance; keywords still refuse malformed
  // values of their own (`type: "strnig"`, `required: "a"`), which is what matters here.
  validateSchema: false,
  // ajv would write its warnings to the console.
  logger: false,
};

let loading: Promise<Record<Dialect, SchemaCompiler>> | undefined;

/**
 * Loads ajv with the first check, so a conversation that uses no MCP server never loads it.
 * Each schema gets an instance of its own: two tools' schemas registering the same `$id` must
 * not clash, and nothing compiled outlives the tool list it belongs to.
 */
function loadCompilers(): Promise<Record<Dialect, SchemaCompiler>> {
  loading ??= Promise.all([import('ajv'), import('ajv/dist/2020.js')]).then(([draft07, draft2020]) => ({
    'draft-07': (schema) => new draft07.Ajv(AJV_OPTIONS).compile(schema),
    'draft-2020-12': (schema) => new draft2020.Ajv2020(AJV_OPTIONS).compile(schema),
  }));
  return loading;
}

/**
 * The dialects to try, in order. MCP 2025-11-25 reads a schema without `$schema` as JSON Schema
 * 2020-12; older servers meant draft 7 without saying so, and the two differ (draft 7's array
 * form of `items` does not compile as 2020-12), so the other dialect is tried when the first
 * cannot compile the schema. Drafts 4 to 6 are closest to draft 7.
 */
function dialects(declared: unknown): Dialect[] {
  return typeof declared === 'string' && /draft-0[4-7]\b/.test(declared) ? ['draft-07', 'draft-2020-12'] : ['draft-2020-12', 'draft-07'];
}

/**
 * Compiles a tool's input schema.
 * @returns the validator, or why no dialect could compile the schema (the first dialect's reason)
 */
function compileInputSchema(compilers: Record<Dialect, SchemaCompiler>, inputSchema: unknown): { validate: ValidateFunction } | { problem: string } {
  if (typeof inputSchema !== 'object' || inputSchema === null || Array.isArray(inputSchema)) return { problem: 'the input schema is not a JSON object' };
  // The dialect is chosen here; left in, `$schema` would make ajv look up a meta-schema the
  // instance may not have.
  const { $schema: declared, ...schema } = inputSchema as Record<string, unknown>;
  let problem: string | undefined;
  for (const dialect of dialects(declared)) {
    try {
      return { validate: compilers[dialect](schema) };
    } catch (error) {
      problem ??= conciseFailureText((error as Error)?.message ?? String(error));
    }
  }
  return { problem: problem ?? 'unknown reason' };
}

/** The most problems named in one refusal; a call wrong in more places is wrong in its approach. */
const MAX_PROBLEMS = 20;

/** The longest excerpt of a value quoted back, in characters. */
const MAX_VALUE_CHARACTERS = 80;

/** The argument's key path (see `formatKeyPath`: `target.url`, `tags[1]`), `property` of it when given. */
function argumentPath(instancePath: string, root: unknown, property?: string): string {
  return formatKeyPath([...jsonPointerPath(instancePath, root), ...(property !== undefined ? [property] : [])]);
}

/** The names of the properties a failing object schema declares (ajv's `parentSchema` with `verbose`). */
function declaredProperties(error: ErrorObject): string[] {
  const properties = (error.parentSchema as { properties?: unknown } | undefined)?.properties;
  return properties !== null && typeof properties === 'object' && !Array.isArray(properties) ? Object.keys(properties) : [];
}

/** `; did you mean "x"?` for a string value near one of the allowed ones, else nothing. */
function nearestAllowed(value: unknown, allowed: readonly unknown[]): string {
  if (typeof value !== 'string') return '';
  const near = similarNames(value, allowed.filter((option): option is string => typeof option === 'string'))[0];
  return near !== undefined ? `; did you mean ${JSON.stringify(near)}?` : '';
}

/** A value as the model wrote it (JSON), cut to `MAX_VALUE_CHARACTERS`. */
function excerpt(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_VALUE_CHARACTERS ? `${text.slice(0, MAX_VALUE_CHARACTERS - 1)}…` : text;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** `a string or null` for the JSON types `string` and `null`. */
function typeNames(types: readonly string[]): string {
  return [...new Set(types)].map((type) => TYPE_NAMES[type] ?? type).join(' or ');
}

/** The types an ajv `type` error names (one type, or a union given as array or comma list). */
function errorTypes(error: ErrorObject): string[] {
  const type = (error.params as { type?: unknown }).type;
  return Array.isArray(type) ? type.map(String) : String(type).split(',');
}

/** What one failing keyword says, from "must" on, or undefined for ajv's own message. */
function requirement(error: ErrorObject, branches: readonly ErrorObject[]): string | undefined {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return `must be ${typeNames(errorTypes(error))}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(excerpt).join(', ')}`;
    case 'const':
      return `must be ${excerpt(params.allowedValue)}`;
    case 'anyOf':
    case 'oneOf':
      // The usual union (`anyOf: [{type: string}, {type: null}]`) reads as one list of types.
      if (branches.length > 0 && branches.every((branch) => branch.keyword === 'type' && branch.instancePath === error.instancePath)) {
        return `must be ${typeNames(branches.flatMap(errorTypes))}`;
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Words ajv's errors for the model, one line per problem, each naming the argument by its key
 * path (see `formatKeyPath`) in the form the built-in tools use (`argument "<key path>":
 * <problem>`): `argument "text": must be a string (got 5)`, `argument "target.url": required,
 * but missing`, `argument "target.extra": unknown argument (known: url)`, `argument "tags[1]":
 * must be one of "a", "b" (got "bb"; did you mean "b"?)`. An unknown argument is told the
 * declared one it most likely meant, or else the declared ones. The errors of the alternatives
 * of a failing `anyOf` or `oneOf` are folded into that one line, since which alternative the
 * model meant is unknown.
 * @param errors the validator's errors (ajv with `allErrors` and `verbose`)
 * @param args the arguments checked, which tell a list's index from a key of digits in ajv's
 *   paths (JSON Pointers); without them, a segment of digits is taken for an index
 */
export function describeArgumentProblems(errors: readonly ErrorObject[], args?: unknown): string[] {
  const combinators = errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  const inBranch = (error: ErrorObject) => combinators.some((combinator) => combinator !== error && error.schemaPath.startsWith(`${combinator.schemaPath}/`));
  const lines: string[] = [];
  for (const error of errors) {
    // A failing `if` only says that `then` or `else` failed, which has errors of its own.
    if (error.keyword === 'if' || inBranch(error)) continue;
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required' || error.keyword === 'dependentRequired' || error.keyword === 'dependencies') {
      const missing = argumentPath(error.instancePath, args, String(params.missingProperty));
      const given = params.property === undefined ? undefined : argumentPath(error.instancePath, args, String(params.property));
      lines.push(given === undefined ? `argument "${missing}": required, but missing` : `argument "${missing}": required when "${given}" is given, but missing`);
      continue;
    }
    if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') {
      const key = String(params.additionalProperty ?? params.unevaluatedProperty);
      lines.push(`argument "${argumentPath(error.instancePath, args, key)}": unknown argument${unknownNameHint(key, declaredProperties(error), true)}`);
      continue;
    }
    const path = argumentPath(error.instancePath, args);
    const branches = combinators.includes(error) ? errors.filter((branch) => branch.schemaPath.startsWith(`${error.schemaPath}/`)) : [];
    const said = requirement(error, branches) ?? error.message ?? `fails "${error.keyword}"`;
    const allowed = error.keyword === 'enum' ? (params.allowedValues as unknown[]) : error.keyword === 'const' ? [params.allowedValue] : [];
    // The whole arguments object would only repeat what the model sent.
    lines.push(path === '' ? `arguments: ${said}` : `argument "${path}": ${said} (got ${excerpt(error.data)}${nearestAllowed(error.data, allowed)})`);
  }
  const unique = [...new Set(lines)];
  if (unique.length <= MAX_PROBLEMS) return unique;
  return [...unique.slice(0, MAX_PROBLEMS), `… and ${unique.length - MAX_PROBLEMS} more problems`];
}

/**
 * The argument check of one conversation's MCP tools. A tool's schema is compiled on its first
 * call and kept with the tool list the server gave (a new listing compiles again), so calls
 * never compile.
 */
export class McpArgumentCheck {
  private readonly validators = new WeakMap<McpTool, Promise<ValidateFunction | undefined>>();

  /** @param logger where a schema that cannot be compiled is reported (once per tool listing) */
  constructor(private readonly logger?: Logger) {}

  /**
   * What is wrong with a call's arguments, one line per problem (see `describeArgumentProblems`).
   * @param server the server's name, for the warning
   * @param tool the tool as the server listed it
   * @param args the call's arguments (already known to be an object)
   * @returns no lines when the arguments fit the schema, or when the schema could not be compiled
   */
  async problems(server: string, tool: McpTool, args: Record<string, unknown>): Promise<string[]> {
    let validator = this.validators.get(tool);
    if (validator === undefined) {
      validator = this.compile(server, tool);
      this.validators.set(tool, validator);
    }
    const validate = await validator;
    if (validate === undefined || validate(args)) return [];
    return describeArgumentProblems(validate.errors ?? [], args);
  }

  private async compile(server: string, tool: McpTool): Promise<ValidateFunction | undefined> {
    const compiled = compileInputSchema(await loadCompilers(), tool.inputSchema);
    if ('validate' in compiled) return compiled.validate;
    this.logger?.warn({ mcpServer: server, tool: tool.name, problem: compiled.problem }, 'MCP tool arguments are not checked: its input schema could not be compiled');
    return undefined;
  }
}
