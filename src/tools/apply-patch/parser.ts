/**
 * Parser for the Codex `apply_patch` format (the patch language of OpenAI Codex's
 * `apply_patch` tool). It only checks syntax; whether the patch fits the files is decided when
 * applying it.
 *
 * ```text
 * *** Begin Patch
 * *** Add File: path          followed by "+line" lines (the whole new file)
 * *** Delete File: path
 * *** Update File: path
 * *** Move to: new/path       optional, directly after "Update File"
 * @@ optional context line    starts a chunk; several "@@ …" lines narrow the position further
 *  context line               (leading space)
 * -removed line
 * +added line
 * *** End of File             optional: the chunk must match at the end of the file
 * *** End Patch
 * ```
 *
 * Like Codex's parser this one is lenient where models are sloppy: markers may carry
 * surrounding whitespace, the first chunk may omit its `@@`, and the text may arrive wrapped in
 * a heredoc (`<<'EOF'` … `EOF`). It also accepts several consecutive `@@` lines and unified-diff
 * range headers (`@@ -1,4 +1,5 @@`), which Codex's own instructions suggest but its parser
 * rejects.
 */
import { ApplyPatchError } from './errors.js';

// Marker lines of the format; the header markers are followed by a path.
const BEGIN_PATCH_MARKER = '*** Begin Patch';
const END_PATCH_MARKER = '*** End Patch';
const ADD_FILE_MARKER = '*** Add File:';
const DELETE_FILE_MARKER = '*** Delete File:';
const UPDATE_FILE_MARKER = '*** Update File:';
const MOVE_TO_MARKER = '*** Move to:';
const END_OF_FILE_MARKER = '*** End of File';

const FILE_SECTION_HEADERS = `"${ADD_FILE_MARKER}", "${DELETE_FILE_MARKER}" or "${UPDATE_FILE_MARKER}"`;
const CHANGE_LINE_KINDS = '" " (context), "-" (removed) or "+" (added)';
const UNIFIED_RANGE_HEADER = /^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@(?: (.*))?$/;
const HEREDOC_OPENING = /^(?:apply_?patch\s+)?<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1$/;

/** One line of an update chunk: kept (`context`), `remove`d or `add`ed. */
export interface ChangeLine {
  kind: 'context' | 'remove' | 'add';
  text: string;
}

/** One `@@` section of an `*** Update File:` section. */
export interface UpdateChunk {
  /** Text of the `@@ …` lines, sought one after another before the chunk's lines. */
  contexts: string[];
  /** Context, removed and added lines in patch order. */
  lines: ChangeLine[];
  /** True after `*** End of File`: the chunk's old lines must end the file. */
  isEndOfFile: boolean;
  /** Patch line where the chunk starts (its first `@@`, or its first change line). */
  lineNumber: number;
}

/** One file section of a patch (Codex calls these hunks). Paths are as written. */
export type PatchHunk =
  | { kind: 'add'; path: string; contents: string; lineNumber: number }
  | { kind: 'delete'; path: string; lineNumber: number }
  | { kind: 'update'; path: string; moveTo: string | undefined; chunks: UpdateChunk[]; lineNumber: number };

interface NumberedLine {
  text: string;
  number: number;
}

function syntaxError(lineNumber: number, message: string): ApplyPatchError {
  return new ApplyPatchError(`line ${lineNumber}: ${message}`, { lineNumber });
}

/**
 * Parses patch text into its file sections.
 * @param patchText the whole patch, `*** Begin Patch` to `*** End Patch` (LF or CRLF lines)
 * @returns the file sections in patch order (never empty)
 * @throws ApplyPatchError whose message starts with `line N:` and says what was expected,
 *   e.g. `line 3: expected "*** Add File:", "*** Delete File:" or "*** Update File:", got "…"`
 */
export function parsePatch(patchText: string): PatchHunk[] {
  const body = findPatchBody(withoutBlankEdges(splitLines(patchText)));
  const reader = new LineReader(body.lines, body.endLineNumber);
  const hunks: PatchHunk[] = [];
  for (let line = reader.peek(); line !== undefined; line = reader.peek()) {
    if (line.text.trim() === '') {
      reader.next();
      continue;
    }
    hunks.push(parseHunk(reader));
  }
  if (hunks.length === 0) {
    throw syntaxError(
      body.endLineNumber,
      `the patch contains no file operations; expected ${FILE_SECTION_HEADERS} before "${END_PATCH_MARKER}"`,
    );
  }
  return hunks;
}

function splitLines(text: string): NumberedLine[] {
  // A CRLF patch is the same patch: the "\r" belongs to the transport, not to the lines.
  return text.split('\n').map((line, index) => ({ text: line.endsWith('\r') ? line.slice(0, -1) : line, number: index + 1 }));
}

function withoutBlankEdges(lines: NumberedLine[]): NumberedLine[] {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]!.text.trim() === '') start += 1;
  while (end > start && lines[end - 1]!.text.trim() === '') end -= 1;
  return lines.slice(start, end);
}

function findPatchBody(lines: NumberedLine[]): { lines: NumberedLine[]; endLineNumber: number } {
  const direct = checkEnvelope(lines);
  if (!(direct instanceof ApplyPatchError)) return direct;
  // Models driving a shell-less tool sometimes still wrap the patch in a heredoc.
  const first = lines[0];
  const last = lines.at(-1);
  const opening = first === undefined ? null : HEREDOC_OPENING.exec(first.text.trim());
  if (opening !== null && last !== undefined && lines.length >= 4 && last.text.trim() === opening[2]) {
    const inner = checkEnvelope(withoutBlankEdges(lines.slice(1, -1)));
    if (inner instanceof ApplyPatchError) throw inner;
    return inner;
  }
  throw direct;
}

function checkEnvelope(lines: NumberedLine[]): { lines: NumberedLine[]; endLineNumber: number } | ApplyPatchError {
  const first = lines[0];
  const last = lines.at(-1);
  if (first === undefined || last === undefined) {
    return syntaxError(1, `expected "${BEGIN_PATCH_MARKER}", got an empty patch`);
  }
  if (first.text.trim() !== BEGIN_PATCH_MARKER) {
    return syntaxError(first.number, `expected "${BEGIN_PATCH_MARKER}", got "${first.text}"`);
  }
  if (lines.length < 2 || last.text.trim() !== END_PATCH_MARKER) {
    const got = lines.length < 2 ? 'the end of the text' : `"${last.text}"`;
    return syntaxError(last.number, `expected "${END_PATCH_MARKER}" as the last line, got ${got}`);
  }
  return { lines: lines.slice(1, -1), endLineNumber: last.number };
}

class LineReader {
  private index = 0;
  /**
   * @param lines the lines between the patch markers
   * @param endLineNumber line number of `*** End Patch`, reported when a section ends too early
   */
  constructor(
    private readonly lines: NumberedLine[],
    readonly endLineNumber: number,
  ) {}

  peek(): NumberedLine | undefined {
    return this.lines[this.index];
  }

  next(): NumberedLine {
    const line = this.lines[this.index];
    if (line === undefined) throw new Error('read past the end of the patch');
    this.index += 1;
    return line;
  }
}

/** The path after `marker` on a (trimmed) header line, or undefined when it is another header. */
function headerPath(line: NumberedLine, marker: string): string | undefined {
  const trimmed = line.text.trim();
  if (!trimmed.startsWith(marker)) return undefined;
  const path = trimmed.slice(marker.length).trim();
  if (path === '') throw syntaxError(line.number, `expected a path after "${marker}"`);
  return path;
}

/**
 * True when a line of an update section may be read as a marker. A line starting with a space
 * is a context line, whatever follows, as in Codex: the file may hold lines such as
 * `    *** Update File: x` (a test of this very format), and reading its context line as a marker
 * would apply the rest of the chunk to another file. Padding that no change line can start
 * with (a tab) is tolerated.
 */
function mayBeMarker(text: string): boolean {
  return !text.startsWith(' ');
}

/** True for lines that end an update section: any `*` line, or a padded file-level marker. */
function isSectionBoundary(text: string): boolean {
  if (text.startsWith('*')) return true;
  const trimmed = text.trim();
  return mayBeMarker(text) && [ADD_FILE_MARKER, DELETE_FILE_MARKER, UPDATE_FILE_MARKER, END_PATCH_MARKER].some((marker) => trimmed.startsWith(marker));
}

function isEndOfFileMarker(text: string): boolean {
  return mayBeMarker(text) && text.trim() === END_OF_FILE_MARKER;
}

function isChunkHeader(text: string): boolean {
  return text.trimEnd() === '@@' || text.startsWith('@@ ');
}

function parseHunk(reader: LineReader): PatchHunk {
  const header = reader.next();
  const addPath = headerPath(header, ADD_FILE_MARKER);
  if (addPath !== undefined) {
    let contents = '';
    for (let line = reader.peek(); line?.text.startsWith('+'); line = reader.peek()) {
      contents += `${reader.next().text.slice(1)}\n`;
    }
    return { kind: 'add', path: addPath, contents, lineNumber: header.number };
  }
  const deletePath = headerPath(header, DELETE_FILE_MARKER);
  if (deletePath !== undefined) return { kind: 'delete', path: deletePath, lineNumber: header.number };
  const updatePath = headerPath(header, UPDATE_FILE_MARKER);
  if (updatePath === undefined) {
    throw syntaxError(header.number, `expected ${FILE_SECTION_HEADERS}, got "${header.text}"`);
  }

  const moveLine = reader.peek();
  const moveTo = moveLine === undefined ? undefined : headerPath(moveLine, MOVE_TO_MARKER);
  if (moveTo !== undefined) reader.next();

  const chunks: UpdateChunk[] = [];
  for (let line = reader.peek(); line !== undefined; line = reader.peek()) {
    // Blank lines between the header and the first chunk, or after an end-of-file chunk,
    // separate chunks; inside a chunk an empty line is an empty context line.
    if (line.text.trim() === '') {
      reader.next();
      continue;
    }
    if (isSectionBoundary(line.text) && !isEndOfFileMarker(line.text)) break;
    chunks.push(parseChunk(reader, chunks.length === 0));
  }
  if (chunks.length === 0) {
    throw syntaxError(
      header.number,
      `"${UPDATE_FILE_MARKER} ${updatePath}" has no changes; expected "@@" or lines starting with ${CHANGE_LINE_KINDS} after it`,
    );
  }
  return { kind: 'update', path: updatePath, moveTo, chunks, lineNumber: header.number };
}

function chunkContext(text: string): string | undefined {
  if (text.trimEnd() === '@@') return undefined;
  let context = text.slice(3);
  const range = UNIFIED_RANGE_HEADER.exec(context);
  if (range !== null) context = range[1] ?? '';
  return context.trim() === '' ? undefined : context;
}

function parseChunk(reader: LineReader, isFirstChunk: boolean): UpdateChunk {
  const start = reader.peek()!;
  const contexts: string[] = [];
  let sawHeader = false;
  for (let line = reader.peek(); line !== undefined && isChunkHeader(line.text); line = reader.peek()) {
    sawHeader = true;
    const context = chunkContext(reader.next().text);
    if (context !== undefined) contexts.push(context);
  }
  if (!sawHeader && !isFirstChunk) {
    throw syntaxError(start.number, `expected "@@" or a line starting with ${CHANGE_LINE_KINDS}, got "${start.text}"`);
  }

  const lines: ChangeLine[] = [];
  let isEndOfFile = false;
  for (let line = reader.peek(); line !== undefined; line = reader.peek()) {
    if (isEndOfFileMarker(line.text)) {
      if (lines.length === 0) break;
      reader.next();
      isEndOfFile = true;
      break;
    }
    if (isChunkHeader(line.text) || isSectionBoundary(line.text)) break;
    const marker = line.text[0];
    const text = line.text.slice(1);
    if (marker === undefined) lines.push({ kind: 'context', text: '' });
    else if (marker === ' ') lines.push({ kind: 'context', text });
    else if (marker === '-') lines.push({ kind: 'remove', text });
    else if (marker === '+') lines.push({ kind: 'add', text });
    else {
      throw syntaxError(line.number, `expected a line starting with ${CHANGE_LINE_KINDS}, "@@" or "***", got "${line.text}"`);
    }
    reader.next();
  }
  if (lines.length === 0) {
    const at = reader.peek() ?? { text: END_PATCH_MARKER, number: reader.endLineNumber };
    const after = sawHeader ? ' after "@@"' : '';
    throw syntaxError(at.number, `expected a line starting with ${CHANGE_LINE_KINDS}${after}, got "${at.text}"`);
  }
  return { contexts, lines, isEndOfFile, lineNumber: start.number };
}
