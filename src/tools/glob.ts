import { z } from 'zod';
import { loadToolDescription } from './descriptions.js';
import { compileGlob } from './search/glob-pattern.js';
import { IgnoreRules } from './search/ignore-rules.js';
import { walkTree } from './search/walk.js';
import { defineTool, type Tool } from './tool.js';

/** Default number of paths `glob` lists. */
export const GLOB_DEFAULT_MAX_RESULTS = 500;
/** Most paths the model may ask for. */
export const GLOB_MAX_RESULTS = 5000;
/** Entries visited at most while walking, so a huge tree cannot keep the tool busy. */
const MAX_WALK_ENTRIES = 200_000;

/** Arguments of `glob`. */
export const globParameters = z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "*.ts" (file names at any depth), "src/**/*.test.ts" or "docs/*.md".'),
  path: z.string().min(1).default('.').describe('Directory to search, relative to the workspace root. Default ".".'),
  max_results: z.number().int().min(1).max(GLOB_MAX_RESULTS).default(GLOB_DEFAULT_MAX_RESULTS).describe(`Most paths to list, 1 to ${GLOB_MAX_RESULTS}. Default ${GLOB_DEFAULT_MAX_RESULTS}.`),
  include_ignored: z.boolean().default(false).describe('Also list files that .gitignore, .ignore or .rgignore exclude, and node_modules. Default false; .git is always skipped.'),
});

/** Parsed arguments of `glob`. */
export type GlobArguments = z.infer<typeof globParameters>;

/**
 * Builds the `glob` tool: lists the files (and symlinks) below a directory of the workspace
 * whose path matches a glob pattern (see `compileGlob`: a pattern without `/` matches file
 * names at any depth), as paths relative to the workspace root in path order, at most
 * `max_results` (then a note). Files and directories excluded by `.gitignore`, `.ignore` or
 * `.rgignore` files (see `IgnoreRules`) and `node_modules` are skipped unless `include_ignored`;
 * `.git` always is. Hidden files are listed. Symlinked directories are not followed. Works on every executor through its file system.
 * Errors (as error results): path outside the workspace (also through a symlink), missing or
 * not a directory; invalid pattern.
 */
export function createGlobTool(): Tool<GlobArguments> {
  return defineTool({
    name: 'glob',
    action: 'list the matching files',
    description: loadToolDescription('glob'),
    parameters: globParameters,
    declaredDetails: { kind: 'search' },
    async describe(args, { workspace }) {
      return { kind: 'search', tool: 'glob', pattern: args.pattern, path: await workspace.resolveSafe(args.path) };
    },
    async execute(args, context) {
      const { workspace } = context;
      const matcher = compileGlob(args.pattern);
      const fileSystem = workspace.executor.fs;
      const absolute = await workspace.resolveSafe(args.path);
      const stat = await fileSystem.stat(absolute);
      if (stat === undefined) throw new Error(`directory "${args.path}" does not exist`);
      const target = stat.kind === 'symlink' ? await fileSystem.stat(await fileSystem.realPath(absolute)) : stat;
      if (target?.kind !== 'directory') throw new Error(`"${args.path}" is not a directory; glob searches below a directory`);

      const ignoreRules = args.include_ignored ? undefined : await IgnoreRules.forDirectory(fileSystem, workspace.root, absolute);
      const walk = await walkTree(fileSystem, absolute, MAX_WALK_ENTRIES, { signal: context.signal, ...(ignoreRules ? { ignoreRules } : {}) });
      const matching = walk.entries.filter((entry) => matcher.matches(entry.relative));
      const shown = matching.slice(0, args.max_results).map((entry) => workspace.display(entry.path));
      const lines = shown.length > 0 ? shown : [`No files match "${args.pattern}" in ${args.path}`];
      if (matching.length > shown.length) lines.push(`[${shown.length} of ${matching.length} matching paths listed; narrow the pattern or path, or raise max_results]`);
      if (walk.incomplete) lines.push(`[the search stopped after ${MAX_WALK_ENTRIES} entries; search a smaller directory]`);
      for (const problem of walk.unreadable.slice(0, 5)) lines.push(`[cannot list ${problem}]`);
      return { output: lines.join('\n'), isError: false, structured: { matches: matching.length, listed: shown.length }, details: { kind: 'search', tool: 'glob', pattern: args.pattern, path: absolute, matches: matching.length } };
    },
  });
}

/** The `glob` tool with default limits. */
export const globTool: Tool<GlobArguments> = createGlobTool();
