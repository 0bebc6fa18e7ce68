/**
 * Schemas for the web addresses and HTTP headers configuration files hold, so that a value no
 * request could use is refused when the file is loaded (naming its line and key path) instead
 * of failing every turn or never matching anything.
 */
import { z } from 'zod';
import { isRecord } from './yaml-file.js';

/** An absolute `http://` or `https://` URL (what a provider, an issuer or a public address is reached at). */
export function httpUrl(): z.ZodURL {
  return z.url({ protocol: /^https?$/, error: (issue) => (issue.input === undefined ? 'required' : 'must be an http:// or https:// URL') });
}

/** True when `value` is exactly a browser origin: `scheme://host[:port]`, nothing after it (RFC 6454 §6.1). */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/** A browser origin as a browser sends it in `Origin` (see {@link isOrigin}), compared exactly. */
export const BrowserOriginSchema = z.string().refine(isOrigin, {
  error: (issue) => {
    const input = typeof issue.input === 'string' ? issue.input : '';
    let origin = '';
    try {
      origin = new URL(input).origin;
    } catch {
      // not a URL at all
    }
    return origin && origin !== 'null' ? `not an origin: a browser sends "${origin}" (scheme://host[:port], nothing after it)` : 'not an origin: give scheme://host[:port], e.g. https://example.org:8443';
  },
});

/** An HTTP field name: a token of RFC 9110 §5.6.2. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Checks the HTTP headers of an entry: names must be tokens (RFC 9110 §5.1), values must not
 * hold a line break or NUL (RFC 9110 §5.5), which would end the header early or be refused by
 * the HTTP client at every request. Reports at `path` + the header's name.
 * @param headers the entry's `headers` value (unchecked)
 * @param path key path of the `headers` mapping within the value being refined
 */
export function headerProblems(headers: unknown, path: (string | number)[]): { path: (string | number)[]; message: string }[] {
  if (!isRecord(headers)) return [];
  const problems: { path: (string | number)[]; message: string }[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) problems.push({ path: [...path, name], message: 'not a valid HTTP header name (an RFC 9110 token)' });
    else if (typeof value === 'string' && /[\r\n\0]/.test(value)) problems.push({ path: [...path, name], message: 'a header value must not contain a line break or NUL' });
  }
  return problems;
}
