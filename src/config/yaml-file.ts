/**
 * Parsing of YAML configuration files with errors that name the file, the line and the key
 * path (e.g. `providers.yaml:4: providers.local.baseURL: required for kind openai-compatible`);
 * every problem of a file is reported at once.
 */
import { lstat, readFile, stat } from 'node:fs/promises';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { z } from 'zod';
import { explainIssue } from '../validation-issues.js';
import { decodeConfigText, expansionProblems, type StringValue } from './config-text.js';
import { formatKeyPath } from '../key-path.js';
import { locateYamlError } from './yaml-syntax-errors.js';

/** A configuration file that failed to parse or validate; `problems` lists every issue. */
export class ConfigError extends Error {
  /**
   * @param file path of the file
   * @param problems one entry per issue, each with line (1-based, when known) and key path
   * @param parsed the unchecked content, when the file was valid YAML
   */
  constructor(
    readonly file: string,
    readonly problems: { line?: number; keyPath: string; message: string }[],
    /** What the file held when it parsed as YAML but failed validation (unchecked), and where its keys are. */
    readonly parsed?: { value: unknown; lineOf: (keyPath: PropertyKey[]) => number | undefined },
  ) {
    super(problems.map((problem) => `${file}${problem.line ? `:${problem.line}` : ''}: ${problem.keyPath || '(root)'}: ${problem.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}

function nodeAt(root: Node | null | undefined, keyPath: PropertyKey[]): Node | undefined {
  let node: Node | null | undefined = root;
  let deepest: Node | undefined = root ?? undefined;
  for (const key of keyPath) {
    if (isMap(node)) node = node.get(String(key), true) as Node | undefined;
    else if (isSeq(node)) node = node.get(Number(key), true) as Node | undefined;
    else break;
    if (!node) break;
    deepest = node;
  }
  return deepest;
}

/** Offset of the key that leads to a path (its own line), else of the deepest node found. */
function keyOffset(root: Node | null | undefined, keyPath: PropertyKey[]): number | undefined {
  const last = keyPath.at(-1);
  const parent = nodeAt(root, keyPath.slice(0, -1));
  if (last !== undefined && isMap(parent)) {
    const pair = parent.items.find((item) => (item.key as { value?: unknown } | null)?.value === String(last));
    const range = (pair?.key as Node | undefined)?.range;
    if (range) return range[0];
  }
  return nodeAt(root, keyPath)?.range?.[0];
}

export { yamlSyntaxMessage } from './yaml-syntax-errors.js';

/** The most a configuration file may hold, in bytes: far above any real one, and it keeps a mistaken path from being read whole. */
export const CONFIGURATION_FILE_MAX_BYTES = 4 * 1024 * 1024;

/** Words for a file system entry that is not a regular file. */
function entryKind(stats: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Reads a configuration file's bytes. Only a regular file (or a symbolic link to one) is read:
 * a FIFO or a device would block the read or never end it.
 * @returns the bytes, or undefined when nothing exists at the path (the file's defaults apply)
 * @throws ConfigError naming the file when it is a dangling symbolic link, not a regular file,
 *   larger than {@link CONFIGURATION_FILE_MAX_BYTES}, or cannot be read
 */
export async function readConfigurationBytes(file: string): Promise<Buffer | undefined> {
  const refuse = (message: string): ConfigError => new ConfigError(file, [{ keyPath: '', message }]);
  try {
    await lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw refuse(`cannot read: ${(error as Error).message}`);
  }
  let stats: Awaited<ReturnType<typeof stat>>;
  try {
    stats = await stat(file);
  } catch (error) {
    // lstat found it, so this is a symbolic link whose target is missing: not the same as no file.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw refuse('a symbolic link to a file that does not exist');
    throw refuse(`cannot read: ${(error as Error).message}`);
  }
  if (!stats.isFile()) throw refuse(`cannot read: it is ${entryKind(stats)}, not a regular file`);
  if (stats.size > CONFIGURATION_FILE_MAX_BYTES) throw refuse(`cannot read: ${stats.size} bytes, over the ${CONFIGURATION_FILE_MAX_BYTES} bytes a configuration file may hold`);
  try {
    return await readFile(file);
  } catch (error) {
    throw refuse(`cannot read: ${(error as Error).message}`);
  }
}

/** Every string value of a document with its key path and line (keys themselves are left out). */
function stringValues(root: Node | null | undefined, lineCounter: LineCounter): StringValue[] {
  const values: StringValue[] = [];
  const visit = (node: unknown, keyPath: (string | number)[], siblings?: unknown[], index?: number): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        visit(pair.value, [...keyPath, key]);
      }
    } else if (isSeq(node)) {
      const items = node.items.map((item) => (isScalar(item) ? item.value : undefined));
      node.items.forEach((item, position) => visit(item, [...keyPath, position], items, position));
    } else if (isScalar(node) && typeof node.value === 'string' && node.range) {
      values.push({ keyPath, value: node.value, line: lineCounter.linePos(node.range[0]).line, ...(siblings ? { siblings, index } : {}) });
    }
  };
  visit(root, []);
  return values;
}

/** A parsed and validated file, with a way to find the line of any key path in it. */
export interface ParsedYamlFile<T> {
  value: T;
  /** 1-based line of the key that leads to a key path (or of the deepest node found), if any. */
  lineOf(keyPath: PropertyKey[]): number | undefined;
}

/**
 * Decodes, parses and validates a configuration file, collecting every problem: encoding and
 * line endings, YAML syntax, values that look like environment variable expansion, and the
 * schema's issues, all reported together.
 * @param input the file's bytes, or its text when already decoded
 * @throws ConfigError naming the file, line and key path of every problem
 */
export function parseYamlDocument<T>(file: string, input: string | Uint8Array, schema: z.ZodType<T>): ParsedYamlFile<T> {
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    const decoded = decodeConfigText(input);
    if (decoded.problems.length > 0) throw new ConfigError(file, decoded.problems);
    text = decoded.text;
  }
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: true });
  if (document.errors.length > 0) {
    const syntaxProblems = document.errors.map((error) => ({ ...locateYamlError(error, document, text, lineCounter), keyPath: '(YAML syntax)' }));
    throw new ConfigError(file, [...shellVariableHints(text, syntaxProblems), ...syntaxProblems]);
  }
  const lineOf = (keyPath: PropertyKey[]): number | undefined => {
    const offset = keyOffset(document.contents, keyPath);
    return offset !== undefined ? lineCounter.linePos(offset).line : undefined;
  };
  const problems: { line?: number; keyPath: string; message: string }[] = expansionProblems(file, stringValues(document.contents, lineCounter));
  let raw: unknown;
  try {
    raw = document.toJS() ?? {};
  } catch (error) {
    // Resolving aliases can fail after a clean parse: the library refuses a document whose
    // aliases would expand without bound, and an alias to an anchor that does not exist.
    const message = /excessive alias count/i.test((error as Error).message) ? 'its aliases (*name) expand to too many nodes; the library refuses such a document, which would take unbounded memory' : (error as Error).message;
    throw new ConfigError(file, [{ keyPath: '(YAML)', message }]);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    for (const { keyPath, message } of parsed.error.issues.flatMap((issue) => explainIssue(issue, { root: raw, schema }))) problems.push({ line: lineOf(keyPath), keyPath: formatKeyPath(keyPath), message: withBooleanHint(message, valueAt(raw, keyPath)) });
  }
  if (problems.length > 0) throw new ConfigError(file, problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)), { value: raw, lineOf });
  return { value: parsed.data as T, lineOf };
}

/** The value at a key path of a parsed document, if there is one. */
function valueAt(root: unknown, keyPath: PropertyKey[]): unknown {
  let value = root;
  for (const key of keyPath) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** The words YAML 1.1 read as booleans and YAML 1.2 (this parser) reads as text. */
const YAML_1_1_BOOLEANS = /^(?:y|yes|n|no|on|off)$/i;

/** A boolean written `yes`/`no`/`on`/`off` is text here: the message says what to write instead. */
function withBooleanHint(message: string, value: unknown): string {
  if (typeof value !== 'string' || !YAML_1_1_BOOLEANS.test(value) || !/expected boolean/.test(message)) return message;
  return `${message}; write true or false ("${value}" is text in YAML 1.2, which this file is read as)`;
}

/** One problem found by a schema, where it is and what to say. */

/**
 * A shell-style `${NAME}` on a line the parser failed on is most likely the cause: in a flow
 * mapping (`{ apiKey: ${KEY} }`) its `{` opens a mapping, and the errors that follow name
 * only tokens. Said first, at its line, with what to write instead.
 */
function shellVariableHints(text: string, syntaxProblems: { line?: number }[]): { line: number; keyPath: string; message: string }[] {
  const lines = text.split('\n');
  const failedLines = [...new Set(syntaxProblems.flatMap((problem) => (problem.line === undefined ? [] : [problem.line])))].sort((a, b) => a - b);
  for (const line of failedLines) {
    const name = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(lines[line - 1] ?? '')?.[1];
    if (name !== undefined) {
      return [{ line, keyPath: '(YAML syntax)', message: `\${${name}} is not YAML (its "{" starts a mapping) and is not expanded: write the value as env:${name} (a whole-value reference, where the key accepts one), or quote it` }];
    }
  }
  return [];
}

/** How a required value's type is said to a person editing YAML (zod's names are TypeScript's). */

/**
 * Parses YAML text and validates it with a zod schema (see `parseYamlDocument`).
 * @throws ConfigError naming the file, line and key path of every problem
 */
export function parseYamlFile<T>(file: string, input: string | Uint8Array, schema: z.ZodType<T>): T {
  return parseYamlDocument(file, input, schema).value;
}

/**
 * Reads, decodes and validates one configuration file.
 * @param whenMissing the value when the file does not exist
 * @throws ConfigError naming the file, line and key path of every problem, or why it cannot be read
 */
export async function loadYamlFile<T>(file: string, schema: z.ZodType<T>, whenMissing: () => T): Promise<T> {
  const bytes = await readConfigurationBytes(file);
  if (bytes === undefined) return whenMissing();
  return parseYamlFile(file, bytes, schema);
}

/**
 * Options for a `superRefine` of a whole file or entry that must run even when other parts
 * of the value already failed, so that one run reports every problem (zod skips refinements
 * of a value with issues unless told otherwise). Such a refinement must expect malformed input.
 */
export const EVEN_WITH_OTHER_PROBLEMS = { when: () => true };

/** True for a plain object (what a YAML mapping becomes); guards refinements that run on malformed input. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
