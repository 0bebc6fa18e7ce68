/**
 * Applying the chunks of an `*** Update File:` section to a file's text. Only the lines the
 * patch changes are rewritten; every other byte is copied from the original text, so line
 * endings (LF, CRLF, mixed, a lone CR inside a line, CR alone in a file without LF), trailing whitespace, a byte-order mark
 * and a missing final line break all survive. The rules are listed in docs/tools.md
 * ("apply_patch").
 *
 * The work is linear in the file's size: lines are located with one pass over the text, and
 * the result is assembled from slices of the original, never by spreading a file's lines into
 * one call's arguments (which overflows the stack on files with about 100,000 lines).
 */
import { ApplyPatchError } from './errors.js';
import type { ChangeLine, UpdateChunk } from './parser.js';
import { seekSequence, type LineSource } from './seek.js';

type LineEnding = '\n' | '\r\n' | '';

const LF = 10;
const CR = 13;

/**
 * A file's text and where its lines start, without splitting it into one string per line
 * (millions of short strings cost far more in garbage collection than the text itself).
 * Only LF ends a line; a CR right before it makes a CRLF ending, any other CR is part of the
 * line.
 */
class TextFile implements LineSource {
  /** Offset in `text` where each line starts, then `text.length`. */
  private readonly starts: Uint32Array;
  readonly length: number;
  /** Break for added lines that have no neighbour to take one from: the file's first, else LF. */
  readonly preferredEnding: '\n' | '\r\n';

  /** @param text the file's text without its byte-order mark */
  constructor(readonly text: string) {
    // One pass collecting line starts into a typed array that doubles when full.
    let starts = new Uint32Array(Math.max(16, text.length >>> 5));
    let count = 1;
    for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
      if (count + 2 > starts.length) {
        const larger = new Uint32Array(starts.length * 2);
        larger.set(starts);
        starts = larger;
      }
      starts[count] = index + 1;
      count += 1;
    }
    // `count` starts were found; the last one is the end of the text unless a line without a
    // final break follows it.
    const openLastLine = text.length > 0 && text.charCodeAt(text.length - 1) !== LF;
    this.length = openLastLine ? count : count - 1;
    if (openLastLine) starts[count] = text.length;
    this.starts = starts.subarray(0, this.length + 1);
    this.preferredEnding = this.ending(0) === '\r\n' ? '\r\n' : '\n';
  }

  /** Start offset of line `index`; `length` gives the end of the text. */
  start(index: number): number {
    return this.starts[index]!;
  }

  /** The line break of line `index`: empty only for a last line without one. */
  ending(index: number): LineEnding {
    if (index < 0 || index >= this.length) return '';
    const next = this.starts[index + 1]!;
    if (next === 0 || this.text.charCodeAt(next - 1) !== LF) return '';
    return next - 2 >= this.starts[index]! && this.text.charCodeAt(next - 2) === CR ? '\r\n' : '\n';
  }

  at(index: number): string | undefined {
    if (index < 0 || index >= this.length) return undefined;
    return this.text.slice(this.starts[index], this.starts[index + 1]! - this.ending(index).length);
  }

  equals(index: number, candidate: string): boolean {
    const begin = this.starts[index]!;
    const end = this.starts[index + 1]! - this.ending(index).length;
    return end - begin === candidate.length && this.text.startsWith(candidate, begin);
  }
}

interface Edit {
  start: number;
  oldLineCount: number;
  lines: ChangeLine[];
}

const BYTE_ORDER_MARK = '\uFEFF';

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

function locateChunks(fileLines: LineSource, chunks: readonly UpdateChunk[], displayPath: string): Edit[] {
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

/**
 * Collects the pieces of the new text. It keeps track of whether the text so far ends in a
 * line without a line break (the original last line), which gets one before anything is
 * written after it, and at the end: an updated file always ends with a line break, as Codex's
 * applier writes it.
 */
class TextBuilder {
  private readonly pieces: string[] = [];
  private openLine = false;

  constructor(private readonly separator: '\n' | '\r\n') {}

  /** Original bytes, copied as they are; `open` when they end in a line without a break. */
  original(bytes: string, open: boolean): void {
    if (bytes === '') return;
    this.closeOpenLine();
    this.pieces.push(bytes);
    this.openLine = open;
  }

  added(text: string): void {
    this.closeOpenLine();
    this.pieces.push(text, this.separator);
  }

  /** The text, its last line closed with the file's line break. */
  finish(): string {
    this.closeOpenLine();
    return this.pieces.join('');
  }

  private closeOpenLine(): void {
    if (!this.openLine) return;
    this.pieces.push(this.separator);
    this.openLine = false;
  }
}

function rebuild(file: TextFile, edits: readonly Edit[], displayPath: string): string {
  const lineCount = file.length;
  const builder = new TextBuilder(file.preferredEnding);
  const copyLines = (from: number, to: number): void => {
    if (to > from) builder.original(file.text.slice(file.start(from), file.start(to)), to === lineCount && file.ending(to - 1) === '');
  };
  let position = 0;
  for (const edit of edits) {
    if (edit.start < position) {
      throw new ApplyPatchError(`cannot update ${displayPath}: two chunks change the same lines`, { path: displayPath });
    }
    copyLines(position, edit.start);
    let original = edit.start;
    for (const change of edit.lines) {
      if (change.kind === 'add') {
        builder.added(change.text);
        continue;
      }
      if (change.kind === 'context') copyLines(original, original + 1);
      original += 1;
    }
    position = edit.start + edit.oldLineCount;
  }
  copyLines(position, lineCount);
  return builder.finish();
}

/**
 * Applies an update section's chunks to a file's text.
 *
 * A file without any LF whose lines end with CR (classic Mac OS) is patched with CR as its
 * line break. Chunks are located in order, each after the previous one, with `seekSequence`; `@@`
 * context lines are found first and the chunk's old lines after them. Lines outside the
 * chunks' removed and added lines are copied byte for byte. Added lines, and a last line that
 * had no line break, end with the file's first line break (LF when it has none), as Codex's
 * applier writes them: so an updated file always ends with a line break.
 *
 * @param content the file's current text
 * @param chunks the chunks of the update section, in patch order
 * @param displayPath the file's path as shown in error messages
 * @returns the new text
 * @throws ApplyPatchError naming the file, the chunk and its patch line when a chunk's
 *   context or old lines cannot be found
 */
export function applyChunks(content: string, chunks: readonly UpdateChunk[], displayPath: string): string {
  const hasByteOrderMark = content.startsWith(BYTE_ORDER_MARK);
  let text = hasByteOrderMark ? content.slice(1) : content;
  // A file that breaks its lines with CR alone (classic Mac OS) holds no LF: each of its CRs is
  // a line break, read as LF here and written back as CR, so its lines can be patched.
  const breaksWithCarriageReturn = !text.includes('\n') && text.includes('\r');
  if (breaksWithCarriageReturn) text = text.replaceAll('\r', '\n');
  const file = new TextFile(text);
  const edits = locateChunks(file, chunks, displayPath);
  const rebuilt = rebuild(file, edits, displayPath);
  return (hasByteOrderMark ? BYTE_ORDER_MARK : '') + (breaksWithCarriageReturn ? rebuilt.replaceAll('\n', '\r') : rebuilt);
}
