import { z } from 'zod';
import { loadToolDescription } from './descriptions.js';
import { compileGlob } from './search/glob-pattern.js';
import type { GrepOutcome, GrepQuery } from './search/grep-types.js';
import { compilePattern, portableSearch } from './search/portable-grep.js';
import { hasRipgrep, ripgrepSearch } from './search/ripgrep.js';
import { defineTool, type Tool } from './tool.js';

/** Default number of matching lines `grep` lists. */
export const GREP_DEFAULT_MAX_RESULTS = 200;
/** Most matching lines the model may ask for. */
export const GREP_MAX_RESULTS = 2000;
/** Matched lines longer than this many characters are shortened. */
export const GREP_MAX_LINE_CHARS = 400;
/** Problems (unreadable files) listed at most. */
const MAX_PROBLEMS_SHOWN = 5;

/** Arguments of `grep`. */
export const grepParameters = z.object({
  pattern: z.string().min(1).describe('Regular expression to search for (ripgrep syntax; JavaScript syntax where ripgrep is missing).'),
  path: z.string().min(1).default('.').describe('File or directory to search, relative to the workspace root. Default ".".'),
  glob: z.string().min(1).optional().describe('Only search files matching this glob, e.g. "*.ts" (any depth) or "src/**/*.py".'),
  ignore_case: z.boolean().default(false).describe('Match letters case-insensitively. Default false.'),
  literal: z.boolean().default(false).describe('Take pattern as plain text instead of a regular expression. Default false.'),
  max_results: z.number().int().min(1).max(GREP_MAX_RESULTS).default(GREP_DEFAULT_MAX_RESULTS).describe(`Most matching lines to list, 1 to ${GREP_MAX_RESULTS}. Default ${GREP_DEFAULT_MAX_RESULTS}.`),
  include_ignored: z.boolean().default(false).describe('Also search files that .gitignore, .ignore or .rgignore exclude, and node_modules. Default false; .git is always skipped.'),
});

/** Parsed arguments of `grep`. */
export type GrepArguments = z.infer<typeof grepParameters>;

/** Which search engine `grep` uses. */
export type GrepEngine = 'auto' | 'ripgrep' | 'portable';

/** Options of `createGrepTool`. */
export interface GrepToolOptions {
  /** `auto` (default): ripgrep when the executor has it, else the portable engine. */
  engine?: GrepEngine;
}

function shorten(text: string): string {
  if (text.length <= GREP_MAX_LINE_CHARS) return text;
  return `${text.slice(0, GREP_MAX_LINE_CHARS)} [… ${text.length - GREP_MAX_LINE_CHARS} more characters]`;
}

function render(outcome: GrepOutcome, args: GrepArguments, engine: 'ripgrep' | 'portable'): string {
  const lines = outcome.matches.map((match) => `${match.file}:${match.line}:${shorten(match.text)}`);
  if (lines.length === 0) lines.push(`No matches for "${args.pattern}" in ${args.path}${args.glob !== undefined ? ` (files matching ${args.glob})` : ''}`);
  if (outcome.more) lines.push(`[only the first ${outcome.matches.length} matches are listed; narrow the pattern, path or glob, or raise max_results]`);
  if (outcome.problems.length > 0) {
    const shown = outcome.problems.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => `[${engine === 'ripgrep' ? 'rg: ' : ''}${problem}]`);
    lines.push(...shown);
    if (outcome.problems.length > MAX_PROBLEMS_SHOWN) lines.push(`[${outcome.problems.length - MAX_PROBLEMS_SHOWN} more problems not shown]`);
  }
  return lines.join('\n');
}

/**
 * Builds the `grep` tool: lists the lines matching a regular expression in a file or below a
 * directory of the workspace, as `path:line:text` in path order, at most `max_results` lines
 * (then a note), lines longer than 400 characters shortened. Files excluded by `.gitignore`,
 * `.ignore` or `.rgignore` files (as ripgrep reads them, see `IgnoreRules`) and
 * `node_modules` are skipped unless `include_ignored`, except that a file matching `glob` is
 * searched even when an ignore file excludes it (ripgrep's `--glob` overrides ignore files;
 * an ignored directory is still not entered). `.git` is always skipped. Hidden files are
 * searched; binary files and symlinks met while walking are skipped. Uses ripgrep through `executor.run` when the
 * executor has it, else walks the files through the executor's file system and matches with
 * JavaScript regular expressions. Errors (as error results): path outside the workspace
 * (also through a symlink) or missing, invalid pattern or glob.
 */
export function createGrepTool(options: GrepToolOptions = {}): Tool<GrepArguments> {
  const engineChoice = options.engine ?? 'auto';
  return defineTool({
    name: 'grep',
    action: 'search the files',
    description: loadToolDescription('grep'),
    parameters: grepParameters,
    declaredDetails: { kind: 'search' },
    async describe(args, { workspace }) {
      return { kind: 'search', tool: 'grep', pattern: args.pattern, path: await workspace.resolveSafe(args.path) };
    },
    async execute(args, context) {
      const { workspace } = context;
      const absolute = await workspace.resolveSafe(args.path);
      const stat = await workspace.executor.fs.stat(absolute);
      if (stat === undefined) throw new Error(`path "${args.path}" does not exist`);
      if (stat.kind !== 'file' && stat.kind !== 'directory' && stat.kind !== 'symlink') throw new Error(`"${args.path}" is neither a file nor a directory`);
      const query: GrepQuery = { pattern: args.pattern, searchPath: workspace.display(absolute), ignoreCase: args.ignore_case, literal: args.literal, includeIgnored: args.include_ignored };
      if (args.glob !== undefined) {
        compileGlob(args.glob);
        query.glob = args.glob;
      }
      const engine = engineChoice === 'auto' ? ((await hasRipgrep(workspace.executor, workspace.root)) ? 'ripgrep' : 'portable') : engineChoice;
      let outcome: GrepOutcome;
      if (engine === 'ripgrep') {
        outcome = await ripgrepSearch(workspace.executor, workspace.root, query, args.max_results, context.signal);
      } else {
        compilePattern(query);
        outcome = await portableSearch(workspace, absolute, query, args.max_results, context.signal);
      }
      return {
        output: render(outcome, args, engine),
        isError: false,
        structured: { engine, matches: outcome.matches.length, more: outcome.more },
        details: { kind: 'search', tool: 'grep', pattern: args.pattern, path: absolute, matches: outcome.matches.length },
      };
    },
  });
}

/** The `grep` tool: ripgrep when the executor has it, the portable engine otherwise. */
export const grepTool: Tool<GrepArguments> = createGrepTool();
