/**
 * Where a YAML syntax error is, in words a person editing the file can act on. The `yaml`
 * library notices an unclosed flow collection or quoted string only where the text ends (often
 * just past the last line, after the final newline); the line that matters is the one where the
 * bracket or quote was opened, so such an error is placed there. Every other error keeps the
 * library's position, kept within the lines the text has.
 */
import { isMap, isScalar, isSeq, LineCounter, visit, type Document, type Node, type YAMLError } from 'yaml';

/** Clearer words for YAML errors users meet most, by the `yaml` library's error code. */
const SYNTAX_MESSAGES: Record<string, string> = {
  TAB_AS_INDENT: 'a tab is used for indentation; YAML indents with spaces only (replace the tab with spaces)',
  MULTIPLE_DOCS: 'the file holds more than one YAML document (a line "---" starts another); a configuration file is one document',
};

/**
 * The first line of a `yaml` library error, without the "at line L, column C:" it ends with:
 * callers give the line themselves, counted in the whole file (a front matter's YAML starts
 * on the file's second line, so the library's own count would be off).
 * @param error an error of `parseDocument` (`document.errors`) or of `parse` (thrown)
 */
export function yamlSyntaxMessage(error: { code?: string; message: string }): string {
  return (error.code !== undefined ? SYNTAX_MESSAGES[error.code] : undefined) ?? (error.message.split('\n')[0] ?? error.message).replace(/\s*at line \d+, column \d+:?\s*$/, '');
}

/** What an error about an unclosed construct is about, read from the library's message. */
function unclosedKind(error: YAMLError): { opener: string; closer: string; matches: (node: Node) => boolean } | undefined {
  const first = error.message.split('\n')[0] ?? '';
  if (/^Flow sequence\b.*end with a \]/.test(first)) return { opener: '[', closer: ']', matches: (node) => isSeq(node) && node.flow === true };
  if (/^Flow map\b.*end with a \}/.test(first)) return { opener: '{', closer: '}', matches: (node) => isMap(node) && node.flow === true };
  const quote = /^Missing closing (["'])quote/.exec(first)?.[1];
  if (quote !== undefined) return { opener: quote, closer: quote, matches: (node) => isScalar(node) && node.type === (quote === '"' ? 'QUOTE_DOUBLE' : 'QUOTE_SINGLE') };
  return undefined;
}

/** The number of lines a text has (a final newline ends the last line, it starts none). */
function lineCount(text: string): number {
  const lines = text.split('\n').length;
  return text.endsWith('\n') && lines > 1 ? lines - 1 : lines;
}

/**
 * The line and words of one syntax error of a parsed document.
 * @param error one of `document.errors`
 * @param document the document the error is of (its nodes locate an unclosed construct)
 * @param text the YAML text parsed
 * @param lineCounter the counter given to `parseDocument` for that text
 * @returns the 1-based line within `text` (always one the text has) and the message
 */
export function locateYamlError(error: YAMLError, document: Document, text: string, lineCounter: LineCounter): { line: number; message: string } {
  const message = yamlSyntaxMessage(error);
  const last = lineCount(text);
  const kind = unclosedKind(error);
  if (kind) {
    // The construct the parser gave up on ends where the error is; the innermost one that does is meant.
    let opened: Node | undefined;
    visit(document, {
      Node(_, node) {
        const range = node.range;
        if (!range || !kind.matches(node) || range[0] >= error.pos[0] || range[1] < error.pos[0] - 1) return;
        if (!opened?.range || range[0] > opened.range[0]) opened = node;
      },
    });
    if (opened?.range) {
      const { line, col } = lineCounter.linePos(opened.range[0]);
      const what = kind.opener === kind.closer ? `the ${kind.opener} opened at column ${col} is never closed` : `"${kind.opener}" opened at column ${col} is never closed with "${kind.closer}"`;
      return { line: Math.min(line, last), message: `${message}: ${what}` };
    }
  }
  const line = error.linePos?.[0]?.line ?? lineCounter.linePos(error.pos[0]).line;
  return { line: Math.min(line, last), message };
}
