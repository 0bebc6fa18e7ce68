/**
 * Glob patterns of the `glob` tool and the `glob` filter of `grep`, with ripgrep's `--glob`
 * meaning so that both grep engines select the same files:
 * - `*` any characters except `/`, `?` one such character, `[abc]`/`[!a-z]` a class,
 *   `{ts,tsx}` alternatives, `\x` a literal character;
 * - `**` as a whole path segment: any number of directories (`src/**` / `**` / `**` + `/test.ts`);
 * - a pattern without `/` matches the file name at any depth (`*.ts`); a pattern with `/` is
 *   matched against the path relative to the searched directory (`src/*.ts`).
 * Matching is case-sensitive; `*` also matches names that start with a dot.
 */

/** A compiled pattern. */
export interface GlobMatcher {
  /** The pattern as given. */
  readonly pattern: string;
  /** Whether a path relative to the searched directory (POSIX separators) matches. */
  matches(relativePath: string): boolean;
}

const REGEX_SPECIAL = /[.+^$()|[\]{}\\*?]/;

function escapeCharacter(character: string): string {
  return REGEX_SPECIAL.test(character) ? `\\${character}` : character;
}

/** Translates one glob (or a brace alternative of it) into regular expression source. */
function translate(glob: string, pattern: string): string {
  let source = '';
  let index = 0;
  while (index < glob.length) {
    const character = glob[index] as string;
    const atSegmentStart = index === 0 || glob[index - 1] === '/';
    if (character === '*' && glob[index + 1] === '*' && atSegmentStart && (index + 2 === glob.length || glob[index + 2] === '/')) {
      // `**/` matches zero or more directories; a final `**` matches everything below.
      if (index + 2 === glob.length) {
        source += '.*';
        index += 2;
      } else {
        source += '(?:.*/)?';
        index += 3;
      }
    } else if (character === '*') {
      source += '[^/]*';
      index += 1;
    } else if (character === '?') {
      source += '[^/]';
      index += 1;
    } else if (character === '[') {
      const close = glob.indexOf(']', index + 2);
      if (close === -1) throw new Error(`glob pattern "${pattern}" has a "[" without a closing "]"`);
      let body = glob.slice(index + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      source += `[${negated ? '^' : ''}${body.replace(/\\/g, '\\\\').replace(/\]/g, '\\]')}]`;
      index = close + 1;
    } else if (character === '{') {
      const { alternatives, end } = splitBraces(glob, index, pattern);
      source += `(?:${alternatives.map((alternative) => translate(alternative, pattern)).join('|')})`;
      index = end + 1;
    } else if (character === '\\') {
      const next = glob[index + 1];
      if (next === undefined) throw new Error(`glob pattern "${pattern}" ends with a lone "\\"`);
      source += escapeCharacter(next);
      index += 2;
    } else {
      source += escapeCharacter(character);
      index += 1;
    }
  }
  return source;
}

/** The comma-separated alternatives of the brace group opening at `start` (nesting allowed). */
function splitBraces(glob: string, start: number, pattern: string): { alternatives: string[]; end: number } {
  const alternatives: string[] = [];
  let depth = 0;
  let current = '';
  for (let index = start + 1; index < glob.length; index += 1) {
    const character = glob[index] as string;
    if (character === '\\' && index + 1 < glob.length) {
      current += character + glob[index + 1];
      index += 1;
    } else if (character === '{') {
      depth += 1;
      current += character;
    } else if (character === '}' && depth > 0) {
      depth -= 1;
      current += character;
    } else if (character === '}') {
      alternatives.push(current);
      return { alternatives, end: index };
    } else if (character === ',' && depth === 0) {
      alternatives.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  throw new Error(`glob pattern "${pattern}" has a "{" without a closing "}"`);
}

/**
 * Compiles a glob pattern (see the module comment).
 * @throws Error naming the pattern when it is empty, absolute, climbs out with `..`, or has an
 *   unclosed `[` or `{`
 */
export function compileGlob(pattern: string): GlobMatcher {
  const trimmed = pattern.replace(/^(?:\.\/)+/, '');
  if (trimmed === '') throw new Error('glob pattern is empty');
  if (trimmed.startsWith('/')) throw new Error(`glob pattern "${pattern}" is absolute; give a pattern relative to the searched directory, and the directory as path`);
  if (trimmed.split('/').includes('..')) throw new Error(`glob pattern "${pattern}" contains "..": patterns cannot leave the searched directory; use path for that`);
  const expression = new RegExp(`^${translate(trimmed, pattern)}$`);
  const byName = !trimmed.includes('/');
  return {
    pattern,
    matches(relativePath: string): boolean {
      return expression.test(byName ? relativePath.slice(relativePath.lastIndexOf('/') + 1) : relativePath);
    },
  };
}
