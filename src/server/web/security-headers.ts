/**
 * Headers every web UI response carries (docs/web.md, "Security headers"): a Content Security
 * Policy that allows only the server's own scripts (no inline script, no eval) and WebSocket
 * connections to the same host, no framing, no MIME sniffing and no Referer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A `Host` header value safe to place in a header (letters, digits, `.-:[]` only). */
const PLAIN_HOST = /^[A-Za-z0-9.\-:[\]]{1,255}$/;

/**
 * The Content-Security-Policy of a web UI response (CSP Level 3). `connect-src` names the
 * WebSocket origins of the request's own host (older browsers do not count `ws:` as `'self'`);
 * a host that is not plain letters, digits and `.-:[]` gets `'self'` only, so the header cannot
 * be bent by it. Inline styles are allowed because the terminal view (xterm.js) writes its
 * layout into `<style>` elements; styles cannot run code, scripts stay `'self'` only.
 */
export function contentSecurityPolicy(request: IncomingMessage): string {
  const host = request.headers.host ?? '';
  const sockets = PLAIN_HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    `connect-src 'self'${sockets}`,
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Sets the security headers of a web UI response (before `writeHead`). */
export function setSecurityHeaders(request: IncomingMessage, response: ServerResponse): void {
  response.setHeader('content-security-policy', contentSecurityPolicy(request));
  response.setHeader('x-content-type-options', 'nosniff');
  response.setHeader('referrer-policy', 'no-referrer');
  // For browsers without `frame-ancestors` (RFC 7034).
  response.setHeader('x-frame-options', 'DENY');
  response.setHeader('cross-origin-opener-policy', 'same-origin');
}
