/**
 * The ripgrep engine of `grep`: runs `rg` through `executor.run` when the executor has it.
 * The flags make ripgrep select the same files as the portable engine: hidden files
 * included; `.gitignore`, `.ignore` and `.rgignore` honoured whether or not the directory is a
 * git repository (global git excludes and `.git/info/exclude` not read), `node_modules`
 * skipped, all of that unless ignored files are asked for; `.git` always skipped; symlinks
 * not followed; results in path order.
 */
import { underlyingExecutor, type Executor } from '../../executors/executor.js';
import { shellQuote } from '../../shell-quote.js';
import type { GrepMatch, GrepQuery, GrepOutcome } from './grep-types.js';

/** Time allowed for `rg --version`, in ms. */
const DETECT_TIMEOUT_MS = 10_000;
/** Time allowed for one search, in ms. */
const SEARCH_TIMEOUT_MS = 60_000;

/** Oldest ripgrep used: 11 brought `--no-require-git`; an older one falls back to the portable engine. */
const MIN_RIPGREP_MAJOR = 11;

const detected = new WeakMap<Executor, Promise<boolean>>();

/**
 * Whether the executor has a real ripgrep of version 11 or later (`rg --version` answers `ripgrep N…`), asked once per
 * executor. A simulated shell's look-alike `rg` does not count. A failure to ask (an SSH host
 * that is down) is thrown and not remembered.
 */
export function hasRipgrep(executor: Executor, cwd: string): Promise<boolean> {
  const machine = underlyingExecutor(executor);
  let answer = detected.get(machine);
  if (answer === undefined) {
    answer = executor
      .run({ command: 'command -v rg >/dev/null 2>&1 && rg --version', cwd, timeoutMs: DETECT_TIMEOUT_MS, maxOutputBytes: 4096 })
      .then((result) => result.exitCode === 0 && Number(/^ripgrep (\d+)\./.exec(result.output)?.[1] ?? 0) >= MIN_RIPGREP_MAJOR);
    detected.set(machine, answer);
    answer.catch(() => detected.delete(machine));
  }
  return answer;
}

/** The shell command line for a query; output is cut to `limit + 1` lines by `head`. */
export function ripgrepCommand(query: GrepQuery, limit: number): string {
  const args = ['rg', '--no-config', '--line-number', '--with-filename', '--no-heading', '--color', 'never', '--null', '--hidden', '--sort', 'path'];
  if (query.includeIgnored) args.push('--no-ignore', '--glob', '!.git');
  else args.push('--no-require-git', '--no-ignore-global', '--no-ignore-exclude', '--glob', '!.git', '--glob', '!node_modules');
  if (query.glob !== undefined) args.push('--glob', query.glob);
  if (query.ignoreCase) args.push('--ignore-case');
  if (query.literal) args.push('--fixed-strings');
  args.push('--regexp', query.pattern, '--', query.searchPath);
  // `head` stops ripgrep early (SIGPIPE) once enough lines are in; ripgrep's own status is
  // kept. Its messages go to stderr, past `head`, and are told apart by the missing NUL.
  return `${args.map(shellQuote).join(' ')} | head -n ${limit + 1}; exit "\${PIPESTATUS[0]}"`;
}

/**
 * Runs the query with ripgrep.
 * @param cwd absolute directory the search path is relative to (the workspace root)
 * @param limit matches wanted; one more is asked for to know whether there are more
 * @throws Error with ripgrep's message when it fails (a bad regular expression, exit 2
 *   without matches), or when the command times out
 */
export async function ripgrepSearch(executor: Executor, cwd: string, query: GrepQuery, limit: number, signal?: AbortSignal): Promise<GrepOutcome> {
  const result = await executor.run({ command: ripgrepCommand(query, limit), cwd, timeoutMs: SEARCH_TIMEOUT_MS, maxOutputBytes: 8 * 1024 * 1024, signal });
  if (result.timedOut) throw new Error(`ripgrep did not finish within ${SEARCH_TIMEOUT_MS} ms; narrow the path or the pattern`);
  const matches: GrepMatch[] = [];
  const problems: string[] = [];
  for (const line of result.output.split('\n')) {
    if (line === '') continue;
    const separator = line.indexOf('\0');
    const numbered = separator === -1 ? undefined : /^(\d+):/.exec(line.slice(separator + 1));
    if (separator === -1 || numbered === null || numbered === undefined) {
      // Without the NUL after a path it is one of ripgrep's own messages (stderr).
      problems.push(line.replace(/^rg: /, ''));
      continue;
    }
    const file = line.slice(0, separator).replace(/^\.\//, '');
    const text = line.slice(separator + 1 + numbered[0].length);
    matches.push({ file, line: Number(numbered[1]), text: text.endsWith('\r') ? text.slice(0, -1) : text });
  }
  // 0: matches, 1: none, 141: stopped by `head` after enough matches, 2: an error (maybe besides matches).
  if (result.exitCode === 2 && matches.length === 0) {
    throw new Error(problems.join('\n').trim() || 'ripgrep failed without a message');
  }
  if (result.exitCode !== 0 && result.exitCode !== 1 && result.exitCode !== 2 && result.exitCode !== 141) {
    throw new Error(`ripgrep ended with ${result.signal ?? `exit code ${result.exitCode}`}: ${problems.join('\n') || result.output.slice(0, 500)}`);
  }
  return { matches: matches.slice(0, limit), more: matches.length > limit, problems };
}
