import { z } from 'zod';
import type { DirectoryEntry, ExecutorFileSystem } from '../executors/executor.js';
import { loadToolDescription } from './descriptions.js';
import { defineTool, type Tool } from './tool.js';

/** Default cap on the entries `list_dir` shows. */
export const LIST_DIR_DEFAULT_MAX_ENTRIES = 500;
/**
 * How many entries are visited at most, shown or not. Past the shown cap the walk only counts,
 * and this bound keeps a deep listing of a huge tree from taking long just to count.
 */
const VISIT_LIMIT_FACTOR = 20;
/** Directories whose contents are never walked into (still listed themselves): huge and rarely useful. */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

/** Arguments of `list_dir`. */
export const listDirParameters = z.object({
  path: z.string().min(1).default('.').describe('Directory to list, relative to the workspace root. Default ".".'),
  depth: z.number().int().min(1).max(5).default(1).describe('How many levels to descend, 1 to 5. Default 1.'),
});

/** Parsed arguments of `list_dir`. */
export type ListDirArguments = z.infer<typeof listDirParameters>;

/** Options of `createListDirTool`. */
export interface ListDirToolOptions {
  /** Cap on the entries shown; default `LIST_DIR_DEFAULT_MAX_ENTRIES`. */
  maxEntries?: number;
}

/** `name/` for directories, `name@` for symlinks, as `ls -F` marks them. */
function entryLabel(entry: DirectoryEntry): string {
  if (entry.kind === 'directory') return `${entry.name}/`;
  if (entry.kind === 'symlink') return `${entry.name}@`;
  return entry.name;
}

function byName(left: DirectoryEntry, right: DirectoryEntry): number {
  if (left.name < right.name) return -1;
  return left.name > right.name ? 1 : 0;
}

/** Walks a directory depth-first, writing up to `maxEntries` indented lines and counting the rest. */
class Listing {
  readonly lines: string[] = [];
  /** Entries seen but not shown (only counted). */
  hidden = 0;
  /** True when the visit bound stopped the count, so `hidden` is a lower bound. */
  countIncomplete = false;
  /** Entries seen, shown or not (a lower bound when `countIncomplete`). */
  visited = 0;

  constructor(
    private readonly fs: ExecutorFileSystem,
    private readonly maxEntries: number,
    private readonly maxDepth: number,
  ) {}

  async walk(directory: string, level: number): Promise<void> {
    const entries = [...(await this.fs.readDirectory(directory))].sort(byName);
    for (const entry of entries) {
      if (this.visited >= this.maxEntries * VISIT_LIMIT_FACTOR) {
        this.countIncomplete = true;
        return;
      }
      this.visited += 1;
      const indent = '  '.repeat(level);
      if (this.lines.length < this.maxEntries) this.lines.push(`${indent}${entryLabel(entry)}`);
      else this.hidden += 1;
      // Symlinked directories are not followed: they can loop or lead outside the workspace.
      if (entry.kind !== 'directory' || level + 1 >= this.maxDepth || SKIPPED_DIRECTORIES.has(entry.name)) continue;
      try {
        await this.walk(`${directory.replace(/\/$/, '')}/${entry.name}`, level + 1);
      } catch (error) {
        if (this.lines.length < this.maxEntries) {
          this.lines.push(`${indent}  [cannot list: ${(error as Error).message}]`);
        }
      }
    }
  }
}

/**
 * Builds the `list_dir` tool: lists a directory's entries sorted by name, `depth` levels deep
 * (1..5), indented two spaces per level, directories suffixed `/` and symlinks `@`. The
 * contents of `.git` and `node_modules` are not walked into (unless they are the listed
 * directory). At most `maxEntries` lines, then a note of how many more there are. Errors (as
 * error results naming the path): outside the workspace, missing, not a directory.
 */
export function createListDirTool(options: ListDirToolOptions = {}): Tool<ListDirArguments> {
  const maxEntries = options.maxEntries ?? LIST_DIR_DEFAULT_MAX_ENTRIES;
  return defineTool({
    name: 'list_dir',
    action: 'list the directory',
    description: loadToolDescription('list_dir'),
    parameters: listDirParameters,
    declaredDetails: { kind: 'list' },
    async describe(args, { workspace }) {
      return { kind: 'list', path: await workspace.resolveSafe(args.path), depth: args.depth };
    },
    async execute(args, context) {
      const { workspace } = context;
      const fs = workspace.executor.fs;
      let absolute = await workspace.resolveSafe(args.path);
      let stat = await fs.stat(absolute);
      if (stat === undefined) throw new Error(`directory "${args.path}" does not exist`);
      if (stat.kind === 'symlink') {
        absolute = await fs.realPath(absolute);
        stat = await fs.stat(absolute);
      }
      if (stat?.kind !== 'directory') throw new Error(`"${args.path}" is not a directory; use read_file for files`);

      const listing = new Listing(fs, maxEntries, args.depth);
      await listing.walk(absolute, 0);
      const header = `${workspace.display(workspace.resolve(args.path))}/`;
      const details = { kind: 'list' as const, path: absolute, depth: args.depth, entries: listing.visited };
      if (listing.lines.length === 0) return { output: `${header}\n(empty directory)`, isError: false, details };
      const output = [header, ...listing.lines.map((line) => `  ${line}`)];
      if (listing.hidden > 0) {
        const count = listing.countIncomplete ? `more than ${listing.hidden}` : `${listing.hidden}`;
        output.push(`[${count} more entries not shown; list a subdirectory or use a smaller depth]`);
      }
      return { output: output.join('\n'), isError: false, details };
    },
  });
}

/** The `list_dir` tool with default limits. */
export const listDirTool: Tool<ListDirArguments> = createListDirTool();
