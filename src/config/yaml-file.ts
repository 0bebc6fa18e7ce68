/**
 * Parsing of YAML configuration files with errors that name the file, the line and the key
 * path (e.g. `providers.yaml:4: providers.local.baseURL: required for kind openai-compatible`);
 * every problem of a file is reported at once.
 */
import { readFile } from 'node:fs/promises';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { z } from 'zod';
import { decodeConfigText, expansionProblems, type StringValue } from './config-text.js';

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

/** Clearer words for YAML errors users meet most, by the `yaml` library's error code. */
const SYNTAX_MESSAGES: Record<string, string> = {
  TAB_AS_INDENT: 'a tab is used for indentation; YAML indents with spaces only (replace the tab with spaces)',
};

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
    throw new ConfigError(
      file,
      document.errors.map((error) => ({
        line: error.linePos?.[0]?.line,
        keyPath: '(YAML syntax)',
        // The library appends "at line L, column C:" and a code excerpt; the line is given separately.
        message: SYNTAX_MESSAGES[error.code] ?? (error.message.split('\n')[0] ?? error.message).replace(/\s*at line \d+, column \d+:?\s*$/, ''),
      })),
    );
  }
  const lineOf = (keyPath: PropertyKey[]): number | undefined => {
    const offset = keyOffset(document.contents, keyPath);
    return offset !== undefined ? lineCounter.linePos(offset).line : undefined;
  };
  const problems: { line?: number; keyPath: string; message: string }[] = expansionProblems(file, stringValues(document.contents, lineCounter));
  const raw: unknown = document.toJS() ?? {};
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      // An unknown key is reported at the key itself, not at the mapping that holds it.
      const unknownKey = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
      const keyPath = unknownKey !== undefined ? [...issue.path, unknownKey] : issue.path;
      problems.push({ line: lineOf(keyPath), keyPath: keyPath.map(String).join('.'), message: issue.message });
    }
  }
  if (problems.length > 0) throw new ConfigError(file, problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)), { value: raw, lineOf });
  return { value: parsed.data as T, lineOf };
}

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
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return whenMissing();
    throw new ConfigError(file, [{ keyPath: '', message: `cannot read: ${(error as Error).message}` }]);
  }
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
