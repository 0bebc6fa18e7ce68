/**
 * Glob patterns of the `glob` tool and the `glob` filter of `grep`, matched with `picomatch`
 * in the meaning ripgrep's `--glob` gives them, so that both grep engines select the same files:
 * - `*` any characters except `/`, `?` one such character, `[abc]`/`[!a-z]` a class,
 *   `{ts,tsx}` alternatives, `\x` a literal character;
 * - `**` as a whole path segment: any number of directories;
 * - a pattern without `/` matches the file name at any depth (`*.ts`); a pattern with `/` is
 *   matched against the path relative to the searched directory (`src/*.ts`).
 * Matching is case-sensitive; `*` also matches names that start with a dot.
 */
import picomatch from 'picomatch';

/** A compiled pattern. */
export interface GlobMatcher {
  /** The pattern as given. */
  readonly pattern: string;
  /** Whether a path relative to the searched directory (POSIX separators) matches. */
  matches(relativePath: string): boolean;
}

/**
 * Compiles a glob pattern (see the module comment).
 * @throws Error naming the pattern when it is empty, absolute, climbs out with `..`, ends with
 *   a lone `\`, or has an unclosed `[`, `{` or `(`
 */
export function compileGlob(pattern: string): GlobMatcher {
  const trimmed = pattern.replace(/^(?:\.\/)+/, '');
  if (trimmed === '') throw new Error('glob pattern is empty');
  if (trimmed.startsWith('/')) throw new Error(`glob pattern "${pattern}" is absolute; give a pattern relative to the searched directory, and the directory as path`);
  if (trimmed.split('/').includes('..')) throw new Error(`glob pattern "${pattern}" contains "..": patterns cannot leave the searched directory; use path for that`);
  if (/(?:^|[^\\])(?:\\\\)*\\$/.test(trimmed)) throw new Error(`glob pattern "${pattern}" ends with a lone "\\"`);
  let test: (path: string) => boolean;
  try {
    // posix: `[!a-z]` negates a class, as in ripgrep and shells.
    test = picomatch(trimmed, { dot: true, basename: !trimmed.includes('/'), strictBrackets: true, posix: true });
  } catch (error) {
    throw new Error(`glob pattern "${pattern}" is not valid: ${(error as Error).message}`, { cause: error });
  }
  return {
    pattern,
    matches: (relativePath: string): boolean => test(relativePath),
  };
}
