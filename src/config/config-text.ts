/**
 * Checks on the text of a configuration file that YAML itself lets through or reports in
 * confusing terms: the encoding (UTF-8 without a byte order mark), line endings (LF or CRLF,
 * never a lone CR), and values that look like environment variable expansion (`${VAR}`,
 * `$VAR`, `%VAR%`), which OpenVaala does not perform: a value that needs the environment is
 * written `env:NAME` as a whole, in the keys that accept it.
 */
import path from 'node:path';
import picomatch from 'picomatch';
import { formatKeyPath } from '../key-path.js';

/** One problem found in the text, at a 1-based line. */
export interface TextProblem {
  line: number;
  keyPath: string;
  message: string;
}

/** Byte order marks, longest first (UTF-32 LE starts with the UTF-16 LE mark). */
const BYTE_ORDER_MARKS: [string, number[]][] = [
  ['UTF-32 (little endian)', [0xff, 0xfe, 0x00, 0x00]],
  ['UTF-32 (big endian)', [0x00, 0x00, 0xfe, 0xff]],
  ['UTF-8', [0xef, 0xbb, 0xbf]],
  ['UTF-16 (little endian)', [0xff, 0xfe]],
  ['UTF-16 (big endian)', [0xfe, 0xff]],
];

/** Length in bytes of the UTF-8 sequence starting at `offset`, or 0 when it is not valid UTF-8 (RFC 3629 §4). */
function utf8SequenceLength(bytes: Uint8Array, offset: number): number {
  const first = bytes[offset] ?? 0;
  if (first < 0x80) return 1;
  const [length, min, max] = first >= 0xc2 && first <= 0xdf ? [2, 0x80, 0xbf] : first === 0xe0 ? [3, 0xa0, 0xbf] : first === 0xed ? [3, 0x80, 0x9f] : first >= 0xe1 && first <= 0xef ? [3, 0x80, 0xbf] : first === 0xf0 ? [4, 0x90, 0xbf] : first === 0xf4 ? [4, 0x80, 0x8f] : first >= 0xf1 && first <= 0xf3 ? [4, 0x80, 0xbf] : [0, 0, 0];
  if (length === 0 || offset + length > bytes.length) return 0;
  const second = bytes[offset + 1] ?? 0;
  if (second < min || second > max) return 0;
  for (let index = 2; index < length; index++) {
    const next = bytes[offset + index] ?? 0;
    if (next < 0x80 || next > 0xbf) return 0;
  }
  return length;
}

/**
 * Decodes a configuration file, refusing what would otherwise be misread.
 * @param bytes the file's content
 * @returns the text and the problems found; with problems, the text must not be parsed
 *   (a byte order mark, bytes that are not UTF-8 — one problem per line holding them —, or a
 *   carriage return not followed by a line feed)
 */
export function decodeConfigText(bytes: Uint8Array): { text: string; problems: TextProblem[] } {
  const problems: TextProblem[] = [];
  const mark = BYTE_ORDER_MARKS.find(([, prefix]) => prefix.every((byte, index) => bytes[index] === byte));
  if (mark) {
    const [encoding] = mark;
    problems.push({
      line: 1,
      keyPath: '(encoding)',
      message:
        encoding === 'UTF-8'
          ? 'the file starts with a byte order mark (BOM); save it as UTF-8 without a BOM'
          : `the file is ${encoding} (it starts with that byte order mark); save it as UTF-8 without a BOM`,
    });
    if (encoding !== 'UTF-8') return { text: '', problems };
  }
  let line = 1;
  let reportedLine = 0;
  for (let offset = mark ? mark[1].length : 0; offset < bytes.length; ) {
    const byte = bytes[offset] ?? 0;
    if (byte === 0x0a) line++;
    const length = utf8SequenceLength(bytes, offset);
    if (length === 0) {
      if (reportedLine !== line) problems.push({ line, keyPath: '(encoding)', message: `byte 0x${byte.toString(16).padStart(2, '0')} is not UTF-8 text; save the file as UTF-8 (it looks like another encoding, such as Latin-1 or Windows-1252)` });
      reportedLine = line;
      offset++;
    } else {
      offset += length;
    }
  }
  if (problems.length > 0) return { text: '', problems };
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const loneCarriageReturn = /\r(?!\n)/.exec(text);
  if (loneCarriageReturn) {
    // Counted the way an editor that shows the CRs as line breaks would number the line.
    const before = text.slice(0, loneCarriageReturn.index);
    const editorLine = (before.match(/\r\n|\r|\n/g)?.length ?? 0) + 1;
    problems.push({ line: editorLine, keyPath: '(line endings)', message: 'the line ends with a lone carriage return (CR, the old Mac OS line ending), which YAML does not read as a line break; save the file with LF (or CRLF) line endings' });
  }
  return { text, problems };
}

/** How the values of one configuration file are treated. */
export interface ValueTextRules {
  /** Key paths (globs over `.`-joined paths, `*` = one key) whose text is taken verbatim: shell commands, regular expressions, free text, file contents. */
  verbatim: string[];
  /** Key paths that accept a whole-value `env:NAME` reference. */
  envReferences: string[];
}

/**
 * The rules per file name. Shell commands (`hooks.yaml` commands, the script of an `mcp.yaml`
 * server started through `sh -c`) are expanded by the shell, so `$VAR` is right there.
 */
export const VALUE_TEXT_RULES: Record<string, ValueTextRules> = {
  'providers.yaml': { verbatim: [], envReferences: ['providers.*.apiKey'] },
  'agents.yaml': { verbatim: ['agents.*.instructions', 'agents.*.approvals.rules.*.match.*', 'agents.*.approvals.rules.*.match.*.*'], envReferences: [] },
  'mcp.yaml': { verbatim: [], envReferences: ['servers.*.env.*', 'servers.*.headers.*'] },
  'hooks.yaml': { verbatim: ['hooks.*.*.command', 'hooks.*.*.matcher'], envReferences: [] },
  'executors.yaml': { verbatim: ['executors.*.files.*'], envReferences: [] },
  'server.yaml': { verbatim: [], envReferences: ['notifications.webhooks.*.secret'] },
  'storage.yaml': { verbatim: [], envReferences: ['postgres.connectionString'] },
};

/** Shell option whose next argument is a script the shell expands itself. */
const SHELL_SCRIPT_OPTION = '-c';

const EXPANSIONS: { pattern: RegExp; variable: (match: RegExpExecArray) => string | undefined }[] = [
  { pattern: /\$\{([^}]*)\}/, variable: (match) => /^[A-Za-z_][A-Za-z0-9_]*/.exec(match[1] ?? '')?.[0] },
  { pattern: /\$([A-Z_][A-Z0-9_]*)(?![a-z])/, variable: (match) => match[1] },
  // Two hex digits between percent signs are URL escapes (`%E2%82`), not a variable.
  { pattern: /%(?![0-9A-Fa-f]{2}%)([A-Za-z_][A-Za-z0-9_]*)%/, variable: (match) => match[1] },
];

/** The first `${VAR}`, `$VAR` or `%VAR%` in a value: the text written and the variable's name. */
export function findExpansion(value: string): { written: string; variable: string | undefined } | undefined {
  for (const { pattern, variable } of EXPANSIONS) {
    const match = pattern.exec(value);
    if (match) return { written: match[0], variable: variable(match) };
  }
  return undefined;
}

function matcherOf(patterns: string[]): (keyPath: string) => boolean {
  return patterns.length === 0 ? () => false : picomatch(patterns, { dot: true, nonegate: true, noextglob: true, nobrace: true, nobracket: true, noglobstar: true });
}

/** One string value of a parsed file, with its key path and line. */
export interface StringValue {
  keyPath: (string | number)[];
  value: string;
  line: number;
  /** The sequence the value is an item of, and its index there, when it is one. */
  siblings?: unknown[];
  index?: number;
}

/**
 * Finds values that look like environment variable expansion where it does not happen.
 * @param fileName the file's path (its base name selects the rules)
 * @param values every string value of the file
 * @returns one problem per such value, pointing at `env:NAME`
 */
export function expansionProblems(fileName: string, values: StringValue[]): TextProblem[] {
  const rules = VALUE_TEXT_RULES[path.basename(fileName)] ?? { verbatim: [], envReferences: [] };
  // Key paths are matched as `/`-joined so that keys holding dots stay one segment.
  const verbatim = matcherOf(rules.verbatim.map((pattern) => pattern.replace(/\./g, '/')));
  const acceptsEnv = matcherOf(rules.envReferences.map((pattern) => pattern.replace(/\./g, '/')));
  const problems: TextProblem[] = [];
  for (const entry of values) {
    const slashPath = entry.keyPath.map((key) => String(key).replace(/\//g, '_')).join('/');
    if (verbatim(slashPath)) continue;
    if (entry.siblings !== undefined && entry.index !== undefined && entry.siblings[entry.index - 1] === SHELL_SCRIPT_OPTION) continue;
    const found = findExpansion(entry.value);
    if (found === undefined) continue;
    const name = found.variable ?? 'NAME';
    const keyPath = formatKeyPath(entry.keyPath);
    problems.push({
      line: entry.line,
      keyPath,
      message: acceptsEnv(slashPath)
        ? `"${found.written}" is not expanded: to read the environment variable, write the whole value as env:${name}`
        : `"${found.written}" is not expanded: configuration values are taken literally, and only ${rules.envReferences.length > 0 ? rules.envReferences.join(', ') : 'secret values (providers.yaml apiKey, mcp.yaml env and headers)'} accept a whole-value env:NAME reference; write the value itself`,
    });
  }
  return problems;
}
