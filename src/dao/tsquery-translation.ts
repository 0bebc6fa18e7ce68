/**
 * Translates the conversation search's query syntax (the one SQLite FTS5 reads, documented in
 * docs/storage.md: words, "quoted phrases", prefix*, AND, OR, NOT, parentheses) into
 * PostgreSQL `tsquery` text, so a query means the same on both backends. Precedence follows
 * FTS5: NOT binds tighter than AND (also implicit, between adjacent terms), AND tighter than OR;
 * `a NOT b` means `a & !b`.
 */
import { InvalidSearchQueryError, QUERY_SYNTAX_HINT, querySyntaxProblem } from './conversation-search-index.js';

type Token = { kind: 'open' | 'close' | 'and' | 'or' | 'not' } | { kind: 'term'; text: string; prefix: boolean; phrase: boolean };

/** Characters of an unquoted word: letters, digits, `_` and anything beyond ASCII (as FTS5's barewords). */
const BAREWORD = /[\p{L}\p{N}_]|[^\p{ASCII}]/u;

function fail(reason: string): never {
  throw new InvalidSearchQueryError(`${reason} (${QUERY_SYNTAX_HINT})`);
}

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < query.length) {
    const character = query[index] as string;
    if (/\s/.test(character)) {
      index += 1;
    } else if (character === '(' || character === ')') {
      tokens.push({ kind: character === '(' ? 'open' : 'close' });
      index += 1;
    } else if (character === '"') {
      let text = '';
      let closed = false;
      for (index += 1; index < query.length; index += 1) {
        if (query[index] !== '"') {
          text += query[index];
        } else if (query[index + 1] === '"') {
          text += '"';
          index += 1;
        } else {
          closed = true;
          index += 1;
          break;
        }
      }
      if (!closed) fail('unterminated string');
      const prefix = query[index] === '*';
      if (prefix) index += 1;
      tokens.push({ kind: 'term', text, prefix, phrase: true });
    } else if (BAREWORD.test(character)) {
      let text = '';
      while (index < query.length && BAREWORD.test(query[index] as string)) text += query[index++];
      const prefix = query[index] === '*';
      if (prefix) index += 1;
      if (!prefix && (text === 'AND' || text === 'OR' || text === 'NOT')) tokens.push({ kind: text.toLowerCase() as 'and' | 'or' | 'not' });
      else tokens.push({ kind: 'term', text, prefix, phrase: false });
    } else {
      fail(querySyntaxProblem(character));
    }
  }
  return tokens;
}

/** A term as tsquery text: a quoted string (the text search parser splits it; several words become a phrase). */
function termText(token: Extract<Token, { kind: 'term' }>): string {
  const quoted = `'${token.text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  return token.prefix ? `${quoted}:*` : quoted;
}

/**
 * Translates a query into tsquery text for `to_tsquery`.
 * @throws InvalidSearchQueryError naming the problem (`syntax error near "."`,
 *   `unterminated string`, `the query is empty`, …) followed by the syntax hint
 */
export function translateSearchQuery(query: string): string {
  if (typeof query !== 'string' || query.trim() === '') fail('the query is empty');
  const tokens = tokenize(query);
  let position = 0;
  const peek = (): Token | undefined => tokens[position];
  const describe = (token: Token | undefined): string => {
    if (token === undefined) return querySyntaxProblem(undefined);
    const text = token.kind === 'term' ? token.text : token.kind === 'open' ? '(' : token.kind === 'close' ? ')' : token.kind.toUpperCase();
    return querySyntaxProblem(text);
  };
  const primary = (): string => {
    const token = peek();
    if (token?.kind === 'term') {
      position += 1;
      return termText(token);
    }
    if (token?.kind === 'open') {
      position += 1;
      const inner = or();
      if (peek()?.kind !== 'close') fail(describe(peek()));
      position += 1;
      return `( ${inner} )`;
    }
    return fail(describe(token));
  };
  const not = (): string => {
    let result = primary();
    while (peek()?.kind === 'not') {
      position += 1;
      result = `( ${result} & !${primary()} )`;
    }
    return result;
  };
  const and = (): string => {
    let result = not();
    for (;;) {
      const token = peek();
      if (token?.kind === 'and') position += 1;
      else if (token?.kind !== 'term' && token?.kind !== 'open') return result;
      result = `${result} & ${not()}`;
    }
  };
  const or = (): string => {
    let result = and();
    while (peek()?.kind === 'or') {
      position += 1;
      result = `${result} | ${and()}`;
    }
    return result;
  };
  const translated = or();
  if (position < tokens.length) fail(describe(peek()));
  return translated;
}
