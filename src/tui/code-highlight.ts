/**
 * A small syntax highlighter for code blocks in the terminal: comments, strings, numbers and
 * keywords of the languages agents most often show (JavaScript/TypeScript, Python, shell, Go,
 * Rust, Java/C-like, JSON, YAML), and `+`/`-` lines of diffs. It works line by line (block
 * comments and multi-line strings are coloured per line), which is enough to read code at a
 * glance and keeps streaming answers cheap to redraw.
 */
import type { Span, StyledLine, TextStyle } from './styled-text.js';

const KEYWORDS = new Set(
  (
    'abstract as async await break case catch class const continue def default defer del do elif else enum export extends false final finally fn for from func function go if impl import in instanceof interface is let lambda match mod module mut new nil none None not null or package pass private protected pub public raise return self static struct super switch then this throw true True False try type typeof undefined use var void while with yield ' +
    'echo fi done esac local readonly unset'
  ).split(' '),
);

const STYLES: Record<'comment' | 'string' | 'number' | 'keyword', TextStyle> = {
  comment: { color: 'gray', italic: true },
  string: { color: 'green' },
  number: { color: 'magenta' },
  keyword: { color: 'blue', bold: true },
};

/** Languages whose line comments start with `#` rather than `//`. */
const HASH_COMMENT_LANGUAGES = new Set(['py', 'python', 'sh', 'bash', 'shell', 'zsh', 'console', 'yaml', 'yml', 'toml', 'ruby', 'rb', 'r', 'perl', 'makefile', 'dockerfile']);

/**
 * Highlights one line of code.
 * @param language the fence's info string (`ts`, `python`, `diff`…); unknown ones get the C-like rules
 */
export function highlightCodeLine(line: string, language: string): StyledLine {
  const lang = language.toLowerCase();
  if (lang === 'diff' || lang === 'patch') return [diffSpan(line)];
  const hashComments = HASH_COMMENT_LANGUAGES.has(lang);
  const spans: StyledLine = [];
  const push = (text: string, style?: TextStyle) => {
    if (text) spans.push(style ? { text, style } : { text });
  };
  const pattern = hashComments
    ? /(#.*$)|("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)|(\b\d[\d_]*(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/g
    : /(\/\/.*$|\/\*.*?(?:\*\/|$))|("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|`(?:[^`\\]|\\.)*`?)|(\b\d[\d_]*(?:\.\d+)?\b)|([A-Za-z_$][A-Za-z0-9_$]*)/g;
  let last = 0;
  for (const match of line.matchAll(pattern)) {
    const index = match.index;
    push(line.slice(last, index));
    const [text, comment, string, number, word] = match;
    if (comment) push(text, STYLES.comment);
    else if (string) push(text, STYLES.string);
    else if (number) push(text, STYLES.number);
    else if (word && KEYWORDS.has(word)) push(text, STYLES.keyword);
    else push(text);
    last = index + text.length;
  }
  push(line.slice(last));
  return mergePlain(spans);
}

/** One line of a unified diff, coloured by what it is. */
export function diffSpan(line: string): Span {
  if (line.startsWith('+++') || line.startsWith('---')) return { text: line, style: { bold: true } };
  if (line.startsWith('+')) return { text: line, style: { color: 'green' } };
  if (line.startsWith('-')) return { text: line, style: { color: 'red' } };
  if (line.startsWith('@@')) return { text: line, style: { color: 'cyan' } };
  return { text: line };
}

function mergePlain(spans: StyledLine): StyledLine {
  const merged: StyledLine = [];
  for (const span of spans) {
    const last = merged.at(-1);
    if (last && !last.style && !span.style) last.text += span.text;
    else merged.push({ ...span });
  }
  return merged;
}
