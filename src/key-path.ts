/**
 * Key paths as every message about invalid input writes them: JSON-path-like, a list's index in
 * brackets and a mapping's key after a dot (`agents.default.approvals.rules[0].decision`), the
 * notation of JavaScript and of `jq`, which a person reads without knowing whether `0` is a key.
 * Configuration files, protocol params, tool arguments (built-in and MCP), hook answers and
 * plugin files all format their paths here, so one input is named the same way wherever it fails.
 */

/** A key written bare after a dot: anything but dots, brackets, quotes and white space. */
const BARE_KEY = /^[^.[\]"'\s]+$/u;

/**
 * Formats a key path: numbers (list indexes) as `[0]`, keys as `.name`, and a key that would
 * read as more than one, or as none, written quoted in brackets (`models["gpt-4.1"]`).
 * @param path the keys and indexes from the outermost value inwards (a zod issue's `path`)
 * @param start what the path is inside (`params`), written first; default none
 * @returns the path as text; `start` (or the empty string) for an empty path
 */
export function formatKeyPath(path: readonly PropertyKey[], start = ''): string {
  let text = start;
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (typeof segment === 'string' && BARE_KEY.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text;
}

/**
 * The key path a JSON Pointer (RFC 6901; ajv's `instancePath`, `/tags/1`) points at, with the
 * indexes of lists as numbers. A pointer writes a list's index and a mapping's key alike, so
 * `root` (the value the pointer is into) tells which a segment is; without it, a segment of
 * digits is taken for an index.
 * @param pointer `""` for the whole value, else `/`-separated segments (`~1` for `/`, `~0` for `~`)
 * @param root the value the pointer is into
 */
export function jsonPointerPath(pointer: string, root?: unknown): PropertyKey[] {
  if (pointer === '') return [];
  const path: PropertyKey[] = [];
  let value = root;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const isIndex = root === undefined ? /^(?:0|[1-9]\d*)$/.test(segment) : Array.isArray(value) && /^(?:0|[1-9]\d*)$/.test(segment);
    path.push(isIndex ? Number(segment) : segment);
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[segment] : undefined;
  }
  return path;
}
