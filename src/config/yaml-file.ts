/**
 * Parsing of YAML configuration files with errors that name the file, the line and the key
 * path (e.g. `providers.yaml:4: providers.local.baseURL: required for kind openai-compatible`).
 */
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { z } from 'zod';

/** A configuration file that failed to parse or validate; `problems` lists every issue. */
export class ConfigError extends Error {
  /**
   * @param file path of the file
   * @param problems one entry per issue, each with line (1-based, when known) and key path
   */
  constructor(
    readonly file: string,
    readonly problems: { line?: number; keyPath: string; message: string }[],
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

/**
 * Parses YAML text and validates it with a zod schema.
 * @throws ConfigError naming the file, line and key path of every syntax or schema problem
 */
export function parseYamlFile<T>(file: string, text: string, schema: z.ZodType<T>): T {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      file,
      document.errors.map((error) => ({
        line: error.linePos?.[0]?.line,
        keyPath: '(YAML syntax)',
        // The library appends "at line L, column C:" and a code excerpt; the line is given separately.
        message: (error.message.split('\n')[0] ?? error.message).replace(/\s*at line \d+, column \d+:?\s*$/, ''),
      })),
    );
  }
  const parsed = schema.safeParse(document.toJS() ?? {});
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    file,
    parsed.error.issues.map((issue) => {
      // An unknown key is reported at the key itself, not at the mapping that holds it.
      const unknownKey = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
      const keyPath = unknownKey !== undefined ? [...issue.path, unknownKey] : issue.path;
      const offset = keyOffset(document.contents, keyPath);
      return {
        line: offset !== undefined ? lineCounter.linePos(offset).line : undefined,
        keyPath: keyPath.map(String).join('.'),
        message: issue.message,
      };
    }),
  );
}
