/**
 * Markdown of assistant messages: parsed with marked (GitHub flavour), code blocks highlighted
 * with highlight.js, and the HTML sanitized with DOMPurify before it reaches the page (the
 * model's text is untrusted). Results are memoized by text, so a long transcript parses each
 * message once and a streaming message re-parses only while it grows.
 */
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';
import { useMemo } from 'preact/hooks';

for (const [name, language] of Object.entries({ bash, css, diff, go, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml })) hljs.registerLanguage(name, language);
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['sh', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['py'], { languageName: 'python' });

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** Highlights code as HTML (escaped plain text for a language highlight.js does not know). */
export function highlightCode(code: string, language: string | undefined): string {
  if (language && hljs.getLanguage(language)) return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  return escapeHtml(code);
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }) {
      const language = (lang ?? '').split(/\s/)[0] || undefined;
      return `<pre class="code"><code class="hljs${language ? ` language-${escapeHtml(language)}` : ''}">${highlightCode(text, language)}</code></pre>`;
    },
  },
});

const cache = new Map<string, string>();
const CACHE_LIMIT = 2000;

/** Markdown as sanitized HTML (links open in a new tab, no scripts, no event attributes). */
export function renderMarkdown(text: string): string {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const html = DOMPurify.sanitize(marked.parse(text, { async: false }), { ADD_ATTR: ['target'] });
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(text, html);
  return html;
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** Renders Markdown text. */
export function Markdown({ text, className }: { text: string; className?: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div class={`markdown ${className ?? ''}`} dangerouslySetInnerHTML={{ __html: html }} />;
}
