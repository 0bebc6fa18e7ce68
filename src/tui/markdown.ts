/**
 * Markdown (CommonMark's common subset, as models write it) rendered to styled terminal
 * lines: headings, paragraphs, bullet and numbered lists, block quotes, rules, fenced code
 * with highlighting, tables as written, and inline bold, italics, code, strike-through and
 * links. Works on unfinished text too (a streaming answer): an open code fence runs to the
 * end, an unclosed `**` stays literal.
 */
import { highlightCodeLine } from './code-highlight.js';
import { sanitize, wrapLine, type StyledLine, type TextStyle } from './styled-text.js';

/**
 * Inline Markdown of one paragraph as spans over a base style.
 * Handles `**bold**`, `__bold__`, `*italic*`, `_italic_`, `` `code` ``, `~~strike~~` and
 * `[text](url)` (the URL is shown dim after the text, so it stays readable and copyable).
 */
export function renderInline(text: string, base: TextStyle = {}): StyledLine {
  const spans: StyledLine = [];
  const push = (value: string, style: TextStyle) => {
    if (!value) return;
    const merged = { ...base, ...style };
    const last = spans.at(-1);
    if (last && JSON.stringify(last.style ?? {}) === JSON.stringify(merged)) last.text += value;
    else spans.push(Object.keys(merged).length > 0 ? { text: value, style: merged } : { text: value });
  };
  const pattern = /(`+)([^`]+?)\1|\*\*([^*]+?)\*\*|__([^_]+?)__|(?<![\w*])\*([^*\s][^*]*?)\*(?!\w)|(?<!\w)_([^_\s][^_]*?)_(?!\w)|~~([^~]+?)~~|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    push(text.slice(last, match.index), {});
    const [whole, , code, bold1, bold2, italic1, italic2, strike, linkText, url] = match;
    if (code !== undefined) push(code, { color: 'cyan' });
    else if (bold1 !== undefined || bold2 !== undefined) for (const span of renderInline(bold1 ?? bold2 ?? '', { ...base, bold: true })) push(span.text, span.style ?? {});
    else if (italic1 !== undefined || italic2 !== undefined) for (const span of renderInline(italic1 ?? italic2 ?? '', { ...base, italic: true })) push(span.text, span.style ?? {});
    else if (strike !== undefined) push(strike, { dim: true });
    else if (linkText !== undefined) {
      push(linkText, { underline: true, color: 'blue' });
      if (url !== linkText) push(` (${url})`, { dim: true });
    } else push(whole, {});
    last = match.index + whole.length;
  }
  push(text.slice(last), {});
  return spans;
}

/**
 * Renders Markdown to lines at most `width` cells wide.
 * @param width terminal cells available (the caller's gutter already taken off)
 */
export function renderMarkdown(markdown: string, width: number): StyledLine[] {
  const source = sanitize(markdown.replace(/\r\n?/g, '\n')).split('\n');
  const out: StyledLine[] = [];
  let paragraph: string[] = [];
  const blank = () => {
    if (out.length > 0 && out.at(-1)?.length !== 0) out.push([]);
  };
  const flushParagraph = () => {
    if (paragraph.length === 0) return;
    out.push(...wrapLine(renderInline(paragraph.join(' ')), width));
    paragraph = [];
  };
  let index = 0;
  while (index < source.length) {
    const line = source[index] as string;
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (fence) {
      flushParagraph();
      const marker = fence[2] as string;
      const language = fence[3] ?? '';
      index++;
      if (language) out.push([{ text: language, style: { dim: true } }]);
      while (index < source.length && !(source[index] as string).trimStart().startsWith(marker)) {
        const code = source[index] as string;
        out.push(...wrapLine([{ text: '  ' }, ...highlightCodeLine(code, language)], width, [{ text: '  ' }]));
        index++;
      }
      index++;
      blank();
      continue;
    }
    if (line.trim() === '') {
      flushParagraph();
      blank();
      index++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flushParagraph();
      const level = (heading[1] as string).length;
      out.push(...wrapLine(renderInline(heading[2] as string, { bold: true, ...(level <= 2 ? { color: 'cyan' as const } : {}), ...(level === 1 ? { underline: true } : {}) }), width));
      index++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flushParagraph();
      out.push([{ text: '─'.repeat(Math.min(width, 40)), style: { dim: true } }]);
      index++;
      continue;
    }
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (quote) {
      flushParagraph();
      const gutter = [{ text: '│ ', style: { dim: true } }];
      out.push(...wrapLine([...gutter, ...renderInline(quote[1] as string, { italic: true })], width, gutter));
      index++;
      continue;
    }
    const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
    if (item) {
      flushParagraph();
      const indent = ' '.repeat(Math.min(8, (item[1] as string).length));
      const marker = /\d/.test(item[2] as string) ? `${item[2]} ` : '• ';
      const task = /^\[([ xX])\]\s+(.*)$/.exec(item[3] as string);
      const bullet = task ? (task[1] === ' ' ? '☐ ' : '☑ ') : marker;
      const body = task ? (task[2] as string) : (item[3] as string);
      out.push(...wrapLine([{ text: indent }, { text: bullet, style: { color: 'yellow' } }, ...renderInline(body)], width, [{ text: indent + ' '.repeat(bullet.length) }]));
      index++;
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line)) {
      flushParagraph();
      // Tables are shown as written (aligned by the model), the separator row as a rule.
      if (/^\s*\|[\s:|-]+\|\s*$/.test(line)) out.push([{ text: line.replace(/[^|\s]/g, '─'), style: { dim: true } }]);
      else out.push(...wrapLine(renderInline(line), width));
      index++;
      continue;
    }
    paragraph.push(line.trim());
    index++;
  }
  flushParagraph();
  while (out.length > 0 && out.at(-1)?.length === 0) out.pop();
  return out;
}
