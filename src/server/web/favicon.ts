/**
 * The server's icon at `/favicon.ico` (docs/http.md): the web UI's icon (the same drawing as
 * `src/www/public/icons/icon.svg`), served by the server itself so that pages it serves without
 * the built UI (the sign-in page, JSON answers opened in a browser) have one, and a browser
 * looking for `/favicon.ico` on its own never gets a 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Where the icon is served. */
export const FAVICON_PATH = '/favicon.ico';

/** The icon, SVG. */
const ICON_SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512"><rect width="512" height="512" rx="96" fill="#1f6feb"/><circle cx="256" cy="256" r="150" fill="none" stroke="#ffffff" stroke-width="48"/><path d="M196 214l-60 42 60 42M316 214l60 42-60 42" fill="none" stroke="#ffffff" stroke-width="30" stroke-linecap="round" stroke-linejoin="round"/></svg>',
);

/** `GET`/`HEAD` {@link FAVICON_PATH}: 200 with the icon (`image/svg+xml`, cached for a day); 405 for other methods. */
export function serveFavicon(request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { 'content-type': 'application/json', allow: 'GET, HEAD' });
    response.end(JSON.stringify({ error: `${FAVICON_PATH} takes GET or HEAD only` }));
    return;
  }
  response.writeHead(200, { 'content-type': 'image/svg+xml', 'content-length': ICON_SVG.byteLength, 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' });
  response.end(request.method === 'HEAD' ? undefined : ICON_SVG);
}
