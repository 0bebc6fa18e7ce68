/**
 * Serves the built web UI (`dist/www/`, made by `npm run build`) under `WEB_PATH`
 * (docs/web.md): files by extension with their content type, `index.html` for any other path
 * (routes of the page itself) except under `assets/`, where a missing file is a 404. Hashed
 * assets are cached for good (`immutable`); `index.html`, the service worker and the manifest
 * are revalidated on every load (`no-cache`) so a new build is picked up.
 */
import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { setSecurityHeaders } from './security-headers.js';

/** Path prefix of the web UI (with its version: a new incompatible UI gets a new prefix). */
export const WEB_PATH = '/web/v1/';

/** Content types by file extension (IANA media types; `.webmanifest` per the W3C Web App Manifest). */
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** The content type of a file name (by extension; `application/octet-stream` when unknown). */
export function contentTypeOf(fileName: string): string {
  return CONTENT_TYPES[path.extname(fileName).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The file path below the web root that a URL path names, as `/`-separated segments, or
 * undefined when a segment, once percent-decoded, is `.`/`..`, holds a slash, a backslash or
 * a NUL, or is not valid percent-encoding (the URL parser folds plain and `%2e%2e` segments
 * already; this catches `..%2f` and the like).
 */
export function relativeWebPath(pathname: string): string[] | undefined {
  const rest = pathname.slice(WEB_PATH.length);
  const segments: string[] = [];
  for (const raw of rest.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) return undefined;
    segments.push(segment);
  }
  return segments;
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function sendText(request: IncomingMessage, response: ServerResponse, status: number, title: string, text: string): void {
  setSecurityHeaders(request, response);
  const escaped = text.replace(/[&<>"]/g, (character) => `&#${character.charCodeAt(0)};`);
  const body = `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${escaped}</p></body></html>\n`;
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
  response.end(request.method === 'HEAD' ? undefined : body);
}

/** Sends one file with its content type, caching rule and security headers. */
export function sendFile(request: IncomingMessage, response: ServerResponse, file: string, cacheControl: string): void {
  const size = statSync(file).size;
  setSecurityHeaders(request, response);
  response.writeHead(200, { 'content-type': contentTypeOf(file), 'content-length': size, 'cache-control': cacheControl });
  if (request.method === 'HEAD') {
    response.end();
    return;
  }
  const stream = createReadStream(file);
  stream.on('error', () => response.destroy());
  stream.pipe(response);
}

/**
 * Answers a GET or HEAD under `WEB_PATH` from `webRoot`. 503 (naming `npm run build`) when the
 * root has no `index.html`; 404 for a bad path or a missing file under `assets/`; `index.html`
 * for any other missing path.
 */
export function serveWebFile(request: IncomingMessage, response: ServerResponse, pathname: string, webRoot: string): void {
  const index = path.join(webRoot, 'index.html');
  if (!isFile(index)) {
    return sendText(request, response, 503, 'The web UI is not built', `No web UI was found in ${webRoot}. Run \`npm run build\` in the openvaala package directory, then reload this page.`);
  }
  const segments = relativeWebPath(pathname);
  if (segments === undefined) return sendText(request, response, 404, 'Not found', 'This path does not name a file of the web UI.');
  const root = path.resolve(webRoot);
  const file = path.resolve(root, ...segments);
  // Belt and braces after the segment check: nothing outside the root is ever read.
  if (file !== root && !file.startsWith(root + path.sep)) return sendText(request, response, 404, 'Not found', 'This path does not name a file of the web UI.');
  if (segments.length > 0 && isFile(file)) {
    // Only files under assets/ carry a content hash in their name; every other file (index.html,
    // service-worker.js, manifest.webmanifest, icons) keeps its name across builds.
    return sendFile(request, response, file, segments[0] === 'assets' ? 'public, max-age=31536000, immutable' : 'no-cache');
  }
  if (segments[0] === 'assets') return sendText(request, response, 404, 'Not found', `No such asset: ${segments.join('/').slice(0, 200)}`);
  // Any other path is a route of the page itself: the page decides what it shows.
  sendFile(request, response, index, 'no-cache');
}
