import { z } from 'zod';
import type { Workspace } from '../executors/workspace.js';
import { LINE_SHORTENED_MARKER } from './cut-markers.js';
import { loadToolDescription } from './descriptions.js';
import { defineTool, type Tool } from './tool.js';

/** Default cap on the numbered text `read_file` returns, in bytes (UTF-8). */
export const READ_FILE_DEFAULT_MAX_BYTES = 256 * 1024;
/**
 * Largest file `read_file` loads at all, in bytes. The executor file system only reads whole
 * files, so a huge log would otherwise be pulled into memory just to show a few lines.
 */
export const READ_FILE_MAX_FILE_BYTES = 32 * 1024 * 1024;
/** Lines longer than this many characters are shortened, so minified files stay readable. */
export const READ_FILE_MAX_LINE_CHARS = 2000;
/** How much of the start of a file is searched for a NUL byte, in bytes (as `git` and `grep` do). */
const BINARY_SNIFF_BYTES = 8 * 1024;

/** Arguments of `read_file`: a path and an optional 1-based inclusive line range. */
export const readFileParameters = z
  .object({
    path: z.string().min(1).describe('File to read, relative to the workspace root (or absolute inside it).'),
    start_line: z.number().int().min(1).optional().describe('First line to return, 1-based. Default 1.'),
    end_line: z.number().int().min(1).optional().describe('Last line to return, inclusive. Default: end of file.'),
  })
  .refine((args) => args.start_line === undefined || args.end_line === undefined || args.end_line >= args.start_line, {
    message: 'end_line must be greater than or equal to start_line',
    path: ['end_line'],
  });

/** Parsed arguments of `read_file`. */
export type ReadFileArguments = z.infer<typeof readFileParameters>;

/** Options of `createReadFileTool`. */
export interface ReadFileToolOptions {
  /** Cap on the returned numbered text, in bytes; default `READ_FILE_DEFAULT_MAX_BYTES`. */
  maxBytes?: number;
}

/** `     1\tcontent`: the number right-aligned in 6 columns, then a tab, as `cat -n` prints. */
function numberLine(lineNumber: number, line: string): string {
  let text = line;
  if (text.length > READ_FILE_MAX_LINE_CHARS) {
    let cut = READ_FILE_MAX_LINE_CHARS;
    // Do not split a surrogate pair.
    const code = text.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    text = `${text.slice(0, cut)}${LINE_SHORTENED_MARKER}${text.length - cut} more characters]`;
  }
  return `${String(lineNumber).padStart(6)}\t${text}`;
}

/**
 * The text of a file's bytes, or undefined when they look binary: a NUL byte early on, or not
 * valid UTF-8. Decoded once: the check and the text are the same decoding. TextDecoder drops a
 * leading byte order mark, which is not part of the first line.
 */
function textOf(bytes: Uint8Array): string | undefined {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** How many lines `text` has: its line breaks, plus a last line without one. */
function countLines(text: string): number {
  let count = 0;
  for (let index = text.indexOf('\n'); index >= 0; index = text.indexOf('\n', index + 1)) count += 1;
  return text.endsWith('\n') ? count : count + 1;
}

/** Offset where 1-based line `lineNumber` starts (the line must exist). */
function lineOffset(text: string, lineNumber: number): number {
  let offset = 0;
  for (let line = 1; line < lineNumber; line += 1) offset = text.indexOf('\n', offset) + 1;
  return offset;
}

/** Resolves the argument to a regular file, following symlinks. @throws Error naming the path. */
async function resolveFile(workspace: Workspace, toolPath: string): Promise<{ absolute: string; size: number }> {
  const fs = workspace.executor.fs;
  let absolute = await workspace.resolveSafe(toolPath);
  let stat = await fs.stat(absolute);
  if (stat === undefined) throw new Error(`file "${toolPath}" does not exist`);
  if (stat.kind === 'symlink') {
    try {
      absolute = await fs.realPath(absolute);
    } catch {
      throw new Error(`"${toolPath}" is a broken symbolic link`);
    }
    stat = await fs.stat(absolute);
    if (stat === undefined) throw new Error(`"${toolPath}" is a broken symbolic link`);
  }
  if (stat.kind === 'directory') throw new Error(`"${toolPath}" is a directory, not a file; use list_dir to see its entries`);
  if (stat.kind !== 'file') throw new Error(`"${toolPath}" is not a regular file`);
  return { absolute, size: stat.size };
}

/**
 * Builds the `read_file` tool: returns a text file's lines numbered like `     1\tcontent`,
 * optionally only `start_line`..`end_line` (1-based, inclusive). Output stops before it
 * exceeds `maxBytes`, with a note telling which `start_line` continues. Errors (as error
 * results naming the path): outside the workspace, missing, a directory, binary (NUL byte in
 * the first 8 KiB or invalid UTF-8), larger than `READ_FILE_MAX_FILE_BYTES`, `start_line`
 * past the end.
 */
export function createReadFileTool(options: ReadFileToolOptions = {}): Tool<ReadFileArguments> {
  const maxBytes = options.maxBytes ?? READ_FILE_DEFAULT_MAX_BYTES;
  return defineTool({
    name: 'read_file',
    action: 'read the file',
    description: loadToolDescription('read_file'),
    parameters: readFileParameters,
    declaredDetails: { kind: 'read' },
    // Room for the notes, so the shared output cap never cuts lines this tool already fitted.
    outputLimitBytes: maxBytes + 1024,
    async describe(args, { workspace }) {
      return { kind: 'read', path: await workspace.resolveSafe(args.path) };
    },
    async execute(args, context) {
      const { workspace } = context;
      const { absolute, size } = await resolveFile(workspace, args.path);
      if (size > READ_FILE_MAX_FILE_BYTES) {
        throw new Error(
          `"${args.path}" is ${size} bytes, more than read_file loads (${READ_FILE_MAX_FILE_BYTES} bytes); ` +
            `use exec_command with head, tail, sed -n or grep to look at parts of it`,
        );
      }
      // A client that serves the file (an editor) gives its buffer, unsaved changes included.
      let text = await context.clientFiles?.readTextFile(absolute);
      if (text === undefined) {
        const bytes = await workspace.executor.fs.readFile(absolute);
        text = textOf(bytes);
        if (text === undefined) {
          return { output: `read_file: "${args.path}" is a binary file of ${bytes.length} bytes; not shown`, isError: true };
        }
      }
      if (text.length === 0) return { output: `"${args.path}" is empty (0 bytes)`, isError: false, details: { kind: 'read', path: absolute, totalLines: 0 } };
      // Lines are found with indexOf and only those shown are cut out: no string per line of a large file.
      const totalLines = countLines(text);

      const startLine = args.start_line ?? 1;
      if (startLine > totalLines) {
        throw new Error(`start_line ${startLine} is past the end of "${args.path}", which has ${totalLines} lines`);
      }
      const endLine = Math.min(args.end_line ?? totalLines, totalLines);

      const output: string[] = [];
      let usedBytes = 0;
      let lineNumber = startLine;
      let offset = lineOffset(text, startLine);
      for (; lineNumber <= endLine; lineNumber += 1) {
        const lineEnd = text.indexOf('\n', offset);
        const line = text.slice(offset, lineEnd < 0 ? text.length : lineEnd);
        offset = lineEnd + 1;
        const numbered = numberLine(lineNumber, line.replace(/\r$/, ''));
        const lineBytes = Buffer.byteLength(numbered, 'utf8') + 1;
        if (usedBytes + lineBytes > maxBytes && output.length > 0) break;
        output.push(numbered);
        usedBytes += lineBytes;
      }
      const lastShown = lineNumber - 1;
      if (lastShown < endLine) {
        output.push(
          `[output stopped at line ${lastShown} of ${totalLines}: the ${maxBytes}-byte read limit was reached; ` +
            `call read_file with start_line=${lastShown + 1} to read on]`,
        );
      } else if (args.end_line !== undefined && args.end_line > totalLines) {
        output.push(`[end of file: "${args.path}" has ${totalLines} lines]`);
      }
      return {
        output: output.join('\n'),
        isError: false,
        structured: { path: workspace.display(absolute), startLine, endLine: lastShown, totalLines },
        details: { kind: 'read', path: absolute, startLine, endLine: lastShown, totalLines },
      };
    },
  });
}

/** The `read_file` tool with default limits. */
export const readFileTool: Tool<ReadFileArguments> = createReadFileTool();
