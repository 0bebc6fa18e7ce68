/**
 * Applying the chunks of an `*** Update File:` section to a file's text, keeping what the
 * patch did not change byte for byte: each untouched line keeps its own ending (so CRLF files
 * stay CRLF and mixed files stay mixed), context lines keep the file's spelling even when they
 * matched only fuzzily, and a byte-order mark survives.
 */
import { ApplyPatchError } from './errors.js';
import type { ChangeLine, UpdateChunk } from './parser.js';
import { seekSequence } from './seek.js';

type LineEnding = '\n' | '\r\n' | '';

interface TextLine {
  text: string;
  /** Empty only for a last line without a newline. */
  ending: LineEnding;
}

interface TextFile {
  lines: TextLine[];
  /** Ending for lines the patch adds, taken from the first line break like Codex does. */
  preferredEnding: '\n' | '\r\n';
  hasByteOrderMark: boolean;
}

interface Edit {
  start: number;
  oldLineCount: number;
  lines: ChangeLine[];
}

const BYTE_ORDER_MARK = '\uFEFF';

function parseTextFile(content: string): TextFile {
  const hasByteOrderMark = content.startsWith(BYTE_ORDER_MARK);
  const text = hasByteOrderMark ? content.slice(1) : content;
  const lines: TextLine[] = [];
  let lineStart = 0;
  for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', lineStart)) {
    const raw = text.slice(lineStart, newline);
    lines.push(raw.endsWith('\r') ? { text: raw.slice(0, -1), ending: '\r\n' } : { text: raw, ending: '\n' });
    lineStart = newline + 1;
  }
  if (lineStart < text.length) lines.push({ text: text.slice(lineStart), ending: '' });
  const firstEnding = lines[0]?.ending;
  return { lines, preferredEnding: firstEnding === '\r\n' ? '\r\n' : '\n', hasByteOrderMark };
}

function oldSide(lines: readonly ChangeLine[]): string[] {
  return lines.filter((line) => line.kind !== 'add').map((line) => line.text);
}

/**
 * Codex's retry for a chunk whose old lines end with an empty line (usually the blank line a
 * model writes for the file's final newline): drop that empty line from the old side, and
 * drop a trailing empty line from the new side too. Returns undefined when the old side does
 * not end with an empty line.
 */
function withoutTrailingBlankLine(lines: readonly ChangeLine[]): ChangeLine[] | undefined {
  const result = [...lines];
  const lastOld = result.findLastIndex((line) => line.kind !== 'add');
  const blank = result[lastOld];
  if (blank === undefined || blank.text !== '') return undefined;
  // A context line is on both sides: taking it off the old side leaves it as an added line.
  if (blank.kind === 'context') result[lastOld] = { kind: 'add', text: '' };
  else result.splice(lastOld, 1);
  const lastNew = result.findLastIndex((line) => line.kind !== 'remove');
  const newBlank = result[lastNew];
  if (newBlank !== undefined && newBlank.text === '') {
    if (newBlank.kind === 'add') result.splice(lastNew, 1);
    else result[lastNew] = { kind: 'remove', text: '' };
  }
  return result;
}

function describeChunk(chunk: UpdateChunk, index: number): string {
  return `chunk ${index + 1} (patch line ${chunk.lineNumber})`;
}

function locateChunks(fileLines: readonly string[], chunks: readonly UpdateChunk[], displayPath: string): Edit[] {
  const edits: Edit[] = [];
  let cursor = 0;
  chunks.forEach((chunk, index) => {
    for (const context of chunk.contexts) {
      const found = seekSequence(fileLines, [context], cursor, false);
      if (found === undefined) {
        throw new ApplyPatchError(
          `cannot update ${displayPath}: ${describeChunk(chunk, index)}: the context line "${context}" was not found` +
            (cursor > 0 ? ` after line ${cursor}` : ''),
          { path: displayPath, lineNumber: chunk.lineNumber },
        );
      }
      cursor = found + 1;
    }
    let lines: ChangeLine[] | undefined = chunk.lines;
    let old = oldSide(lines);
    if (old.length === 0) {
      // Codex appends a chunk without old lines at the end of the file; when the chunk names
      // a context line, inserting right after it is what the patch means.
      edits.push({ start: chunk.contexts.length > 0 ? cursor : fileLines.length, oldLineCount: 0, lines });
      return;
    }
    let found = seekSequence(fileLines, old, cursor, chunk.isEndOfFile);
    while (found === undefined && lines !== undefined) {
      lines = withoutTrailingBlankLine(lines);
      if (lines === undefined) break;
      old = oldSide(lines);
      found = seekSequence(fileLines, old, cursor, chunk.isEndOfFile);
    }
    if (found === undefined || lines === undefined) {
      const where = chunk.isEndOfFile ? 'at the end of the file' : cursor > 0 ? `after line ${cursor}` : 'in the file';
      throw new ApplyPatchError(
        `cannot update ${displayPath}: ${describeChunk(chunk, index)}: these lines were not found ${where}:\n` +
          oldSide(chunk.lines).join('\n'),
        { path: displayPath, lineNumber: chunk.lineNumber },
      );
    }
    edits.push({ start: found, oldLineCount: old.length, lines });
    cursor = found + old.length;
  });
  // A stable sort keeps chunks that insert at the same position in patch order.
  return edits.sort((left, right) => left.start - right.start);
}

function rebuild(file: TextFile, edits: readonly Edit[], displayPath: string): TextLine[] {
  const output: TextLine[] = [];
  let position = 0;
  for (const edit of edits) {
    if (edit.start < position) {
      throw new ApplyPatchError(`cannot update ${displayPath}: two chunks change the same lines`, { path: displayPath });
    }
    output.push(...file.lines.slice(position, edit.start));
    let original = edit.start;
    // Added lines take the ending of the original line they follow or replace, so an edit in
    // the CRLF part of a mixed file writes CRLF.
    let ending: LineEnding = file.lines[edit.start - 1]?.ending ?? file.lines[edit.start]?.ending ?? '';
    for (const change of edit.lines) {
      if (change.kind === 'add') {
        output.push({ text: change.text, ending: ending === '' ? file.preferredEnding : ending });
        continue;
      }
      const line = file.lines[original]!;
      original += 1;
      ending = line.ending;
      if (change.kind === 'context') output.push(line);
    }
    position = edit.start + edit.oldLineCount;
  }
  output.push(...file.lines.slice(position));
  return output;
}

/**
 * Applies an update section's chunks to a file's text.
 *
 * Chunks are located in order, each after the previous one, with `seekSequence`; `@@`
 * context lines are found first and the chunk's old lines after them. Every line of the
 * result ends with a line break, since Codex's applier always leaves an updated file ending
 * in a newline.
 *
 * @param content the file's current text
 * @param chunks the chunks of the update section, in patch order
 * @param displayPath the file's path as shown in error messages
 * @returns the new text
 * @throws ApplyPatchError naming the file, the chunk and its patch line when a chunk's
 *   context or old lines cannot be found
 */
export function applyChunks(content: string, chunks: readonly UpdateChunk[], displayPath: string): string {
  const file = parseTextFile(content);
  const edits = locateChunks(
    file.lines.map((line) => line.text),
    chunks,
    displayPath,
  );
  const lines = rebuild(file, edits, displayPath);
  const body = lines.map((line) => line.text + (line.ending === '' ? file.preferredEnding : line.ending)).join('');
  return (file.hasByteOrderMark ? BYTE_ORDER_MARK : '') + body;
}
