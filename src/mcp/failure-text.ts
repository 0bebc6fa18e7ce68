/**
 * An MCP server's failure as one readable line. An HTTP server that answers an error with a web
 * page (a proxy's 404, a login page) puts the whole page into the client library's message;
 * shown as it is, a warning would be kilobytes of markup.
 */

/** The longest failure text kept, in characters; the rest is cut with "…". */
const MAX_FAILURE_CHARACTERS = 400;

const HTML_START = /<!doctype html|<html[\s>]/i;

/**
 * `message` with an HTML page in it replaced by `(an HTML page: "<its title>")`, whitespace
 * runs made single spaces, and cut to 400 characters.
 */
export function conciseFailureText(message: string): string {
  let text = message;
  const start = text.search(HTML_START);
  if (start !== -1) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text.slice(start))?.[1]?.replace(/\s+/g, ' ').trim();
    text = `${text.slice(0, start)}(an HTML page${title ? `: "${title}"` : ''})`;
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > MAX_FAILURE_CHARACTERS ? `${text.slice(0, MAX_FAILURE_CHARACTERS - 1)}…` : text;
}
