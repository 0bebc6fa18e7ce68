/**
 * Edits YAML text in place: sets or removes the value at a key path by replacing, inserting or
 * deleting only the text of that value, so every other byte of the file (comments, blank
 * lines, CRLF line endings, indentation, flow mappings, quoting) stays as it was. A new value
 * is written in flow style on one line (`{ kind: openai, apiKey: env:KEY }`), which YAML
 * accepts both in block and in flow context.
 *
 * Each edit is checked: the edited text must parse to exactly what the `yaml` library's own
 * document editing gives. When it does not (a layout this module does not handle), the
 * library's rewrite of the whole file is used instead, which keeps comments and key order but
 * not every byte.
 */
import { isDeepStrictEqual } from 'node:util';
import { Document, isMap, isScalar, isSeq, parseDocument, type Node, type Pair } from 'yaml';
import { formatKeyPath } from '../key-path.js';

/** A key path inside a file: map keys and sequence indexes. */
export type KeyPath = (string | number)[];

/** C0 controls, DEL and the Unicode line and paragraph separators: never written in a plain or single-quoted scalar. */
function isControl(codePoint: number): boolean {
  return codePoint < 0x20 || codePoint === 0x7f || codePoint === 0x2028 || codePoint === 0x2029;
}

/** Serialises `key: value` (or a sequence item's value, without a key) as it reads inside a flow collection. */
function flowEntry(key: string | number | undefined, value: unknown): string {
  // Strings with line breaks or control characters are written as JSON strings (valid YAML double-quoted scalars).
  const inner =
    typeof value === 'string' && [...value].some((character) => isControl(character.codePointAt(0) ?? 0))
      ? JSON.stringify(value)
      : new Document({ k: value ?? null }).toString({ collectionStyle: 'flow', lineWidth: 0 }).trim().slice('{ k: '.length, -' }'.length);
  if (key === undefined) return inner;
  const keyText = new Document({ [String(key)]: 0 }).toString({ collectionStyle: 'flow', lineWidth: 0 }).trim().slice('{ '.length, -': 0 }'.length);
  return `${keyText}: ${inner}`;
}

/** The nested value that `rest` leads to: `['a', 'b'], 1` → `{ a: { b: 1 } }`. */
function nest(rest: KeyPath, value: unknown): unknown {
  return rest.reduceRight<unknown>((inner, key) => (typeof key === 'number' && key === 0 ? [inner] : { [String(key)]: inner }), value);
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function lineEnd(text: string, offset: number): number {
  const newline = text.indexOf('\n', offset);
  return newline === -1 ? text.length : newline + 1;
}

/** True when only spaces precede `offset` on its line. */
function startsLine(text: string, offset: number): boolean {
  return /^ *$/.test(text.slice(lineStart(text, offset), offset));
}

function splice(text: string, start: number, end: number, insert: string): string {
  return `${text.slice(0, start)}${insert}${text.slice(end)}`;
}

function keyOf(pair: Pair): string {
  return isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
}

/** Ranges: start, end of the value, end of the node with its trailing comment. */
function rangeOf(node: unknown): [number, number, number] | undefined {
  return (node as Node | null)?.range ?? undefined;
}

/** Replaces a value node's text (a null value written as nothing gets a space before it). */
function replaceValue(text: string, node: unknown, entry: string): string | undefined {
  const range = rangeOf(node);
  if (!range) return undefined;
  // A block collection's range runs on to the line break (and blank lines) after it, which stay.
  let end = range[1];
  while (end > range[0] && /[\r\n ]/.test(text[end - 1] ?? '')) end--;
  const empty = range[0] === end;
  return splice(text, range[0], end, empty ? ` ${entry}` : entry);
}

/** Inserts an entry (`key: value`, or a sequence item's value) at the end of a collection. */
function appendTo(text: string, collection: Node, entry: string, eol: string, isSequence: boolean): string | undefined {
  const range = rangeOf(collection);
  const items = (collection as unknown as { items: unknown[] }).items;
  if (!range) return undefined;
  if ((collection as unknown as { flow?: boolean }).flow) {
    const last = items.at(-1);
    const lastEnd = rangeOf(isSeq(collection) ? last : (last as Pair | undefined)?.value ?? (last as Pair | undefined)?.key)?.[1];
    if (lastEnd !== undefined) return splice(text, lastEnd, lastEnd, `, ${entry}`);
    const close = text.lastIndexOf(isSequence ? ']' : '}', range[1]);
    return close > range[0] ? splice(text, close, close, ` ${entry} `) : undefined;
  }
  const first = items[0];
  const firstStart = isSequence ? range[0] : rangeOf((first as Pair | undefined)?.key)?.[0];
  // The first entry may follow the `- ` of the sequence item holding the mapping: same column.
  if (firstStart === undefined || !/^[ -]*$/.test(text.slice(lineStart(text, firstStart), firstStart))) return undefined;
  const indent = ' '.repeat(firstStart - lineStart(text, firstStart));
  const end = lineEnd(text, Math.max(range[1] - 1, firstStart));
  const needsBreak = end === text.length && !text.endsWith('\n');
  return splice(text, end, end, `${needsBreak ? eol : ''}${indent}${isSequence ? '- ' : ''}${entry}${eol}`);
}

/** Removes one item (a pair of a map, or an element of a sequence) from a collection. */
function removeFrom(text: string, collection: Node, index: number): string | undefined {
  const items = (collection as unknown as { items: unknown[] }).items;
  const startOf = (item: unknown) => (isMap(collection) ? rangeOf((item as Pair).key)?.[0] : rangeOf(item)?.[0]);
  const endOf = (item: unknown) => (isMap(collection) ? rangeOf((item as Pair).value ?? (item as Pair).key)?.[1] : rangeOf(item)?.[1]);
  const item = items[index];
  const start = startOf(item);
  const end = endOf(item);
  if (start === undefined || end === undefined) return undefined;
  if ((collection as unknown as { flow?: boolean }).flow) {
    const next = items[index + 1];
    const previous = items[index - 1];
    if (next !== undefined) {
      const nextStart = startOf(next);
      return nextStart === undefined ? undefined : splice(text, start, nextStart, '');
    }
    const previousEnd = previous === undefined ? undefined : endOf(previous);
    return previousEnd === undefined ? undefined : splice(text, previousEnd, end, '');
  }
  // A block item owns its lines: from its line's start (the `- ` of a sequence item included) to the end of the line its value ends on.
  const itemStart = isSeq(collection) ? text.lastIndexOf('-', start) : start;
  if (itemStart < 0 || !startsLine(text, itemStart)) return undefined;
  return splice(text, lineStart(text, itemStart), lineEnd(text, Math.max(end - 1, itemStart)), '');
}

/**
 * Sets or removes the value at a key path, touching only that value's text.
 * @returns the edited text, or undefined when the layout is one this function does not handle
 * @throws Error when the path goes through a value that is not a mapping or a sequence
 */
function editText(text: string, keyPath: KeyPath, change: { value?: unknown; remove?: boolean }): string | undefined {
  const document = parseDocument(text);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  let node: unknown = document.contents;
  if (node === null || node === undefined || (isScalar(node) && node.value === null)) {
    if (change.remove) return text;
    const [first, ...rest] = keyPath;
    const separator = text.length > 0 && !text.endsWith('\n') ? eol : '';
    return `${text}${separator}${flowEntry(first, nest(rest, change.value))}${eol}`;
  }
  for (let depth = 0; depth < keyPath.length; depth++) {
    const key = keyPath[depth] as string | number;
    const rest = keyPath.slice(depth + 1);
    const last = rest.length === 0;
    if (isMap(node)) {
      const index = node.items.findIndex((pair) => keyOf(pair) === String(key));
      const pair = node.items[index];
      if (pair === undefined) return change.remove ? text : appendTo(text, node, flowEntry(key, nest(rest, change.value)), eol, false);
      if (last) {
        if (!change.remove) return pair.value ? replaceValue(text, pair.value, flowEntry(undefined, change.value)) : undefined;
        return node.items.length === 1 ? replaceValue(text, node, '{}') : removeFrom(text, node, index);
      }
      if (pair.value === null || (isScalar(pair.value) && pair.value.value === null)) {
        return change.remove ? text : pair.value ? replaceValue(text, pair.value, flowEntry(undefined, nest(rest, change.value))) : undefined;
      }
      node = pair.value;
    } else if (isSeq(node)) {
      const index = typeof key === 'number' ? key : Number.parseInt(key, 10);
      if (!Number.isInteger(index) || index < 0 || index > node.items.length) throw new Error(`no item ${String(key)} in a list of ${node.items.length}`);
      if (index === node.items.length) return change.remove ? text : appendTo(text, node, flowEntry(undefined, nest(rest, change.value)), eol, true);
      if (last) {
        if (!change.remove) return replaceValue(text, node.items[index], flowEntry(undefined, change.value));
        return node.items.length === 1 ? replaceValue(text, node, '[]') : removeFrom(text, node, index);
      }
      node = node.items[index];
    } else {
      throw new Error(`${formatKeyPath(keyPath.slice(0, depth))} is not a mapping or a list`);
    }
  }
  return undefined;
}

/**
 * Sets (or removes) the value at a key path of YAML text, keeping every byte outside the
 * edited value (see the module comment; falls back to the `yaml` library's rewrite when the
 * in-place edit cannot be made exactly).
 * @param text the file's text (may be empty)
 * @throws Error when the path cannot be set (it goes through a scalar, or past the end of a list)
 */
export function editYamlText(text: string, keyPath: KeyPath, change: { value?: unknown; remove?: boolean }): string {
  const expected = changedValue(parseDocument(text).toJS() as unknown, keyPath, change);
  const edited = editText(text, keyPath, change);
  if (edited !== undefined) {
    const result = parseDocument(edited);
    if (result.errors.length === 0 && isDeepStrictEqual(result.toJS(), expected)) return edited;
  }
  const parsed = parseDocument(text);
  const reference: Document = parsed.contents === null || (isScalar(parsed.contents) && parsed.contents.value === null) ? new Document({}) : parsed;
  if (change.remove) reference.deleteIn(keyPath);
  else reference.setIn(keyPath, change.value ?? null);
  return reference.toString();
}

/**
 * The plain value a change leads to (what the edited text must parse to): missing or empty
 * mappings on the way are created.
 * @throws Error when the path goes through a scalar
 */
function changedValue(root: unknown, keyPath: KeyPath, change: { value?: unknown; remove?: boolean }): unknown {
  const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] => typeof value === 'object' && value !== null;
  const top: unknown = isContainer(root) ? structuredClone(root) : {};
  let container = top as Record<string, unknown> | unknown[];
  for (let depth = 0; depth < keyPath.length; depth++) {
    const key = keyPath[depth] as string | number;
    const last = depth === keyPath.length - 1;
    const slot = Array.isArray(container) ? Number(key) : String(key);
    const current = (container as Record<string | number, unknown>)[slot];
    if (last) {
      if (!change.remove) (container as Record<string | number, unknown>)[slot] = change.value ?? null;
      else if (Array.isArray(container)) container.splice(Number(key), 1);
      else delete container[String(key)];
      return top;
    }
    if (current === undefined || current === null) {
      if (change.remove) return top;
      const created = typeof keyPath[depth + 1] === 'number' && keyPath[depth + 1] === 0 ? [] : {};
      (container as Record<string | number, unknown>)[slot] = created;
      container = created;
    } else if (isContainer(current)) {
      container = current;
    } else {
      throw new Error(`${formatKeyPath(keyPath.slice(0, depth + 1))} is not a mapping or a list`);
    }
  }
  return top;
}
