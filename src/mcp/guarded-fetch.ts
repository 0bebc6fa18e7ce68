/**
 * A `fetch` for an HTTP MCP server whose address must be checked before every request
 * (docs/platform.md, "Where members work"): a name may resolve elsewhere later than when the
 * server was given, and a redirect could lead anywhere, so each request is checked as it is
 * sent and redirects are not followed.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Why a request to a URL may not be sent, or undefined when it may. */
export type RequestAddressCheck = (url: URL) => Promise<string | undefined>;

/** HTTP redirect statuses (RFC 9110 §15.4) that carry a `Location`. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Wraps `base` so that each request is checked first and a redirect answer is an error.
 * @throws Error (from the returned function) with the check's reason, or naming the redirect's target
 */
export function guardedFetch(check: RequestAddressCheck, base: FetchLike = fetch): FetchLike {
  return async (input, init) => {
    const url = new URL(input);
    const refusal = await check(url);
    if (refusal !== undefined) throw new Error(refusal);
    const response = await base(url, { ...init, redirect: 'manual' });
    if (REDIRECT_STATUSES.has(response.status)) {
      await response.body?.cancel();
      throw new Error(`${url.origin} answered with a redirect (HTTP ${response.status}) to ${response.headers.get('location') ?? 'nowhere'}, which is not followed for this server: give the address it serves at`);
    }
    return response;
  };
}
