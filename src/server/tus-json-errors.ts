/**
 * Makes every refusal of the resumable upload endpoint JSON `{ "error": "…" }` with
 * `content-type: application/json`, as every other route answers (docs/http.md, "Errors").
 * `@tus/server` writes some refusals itself, before any hook of ours can word them: a header it
 * cannot parse (`Invalid upload-length`), a missing `Tus-Resumable` (412), an unknown upload
 * (`Not found`), and it labels even a JSON body of ours `text/plain`. So the Node response is
 * wrapped: an answer of status 400 or more is held, and sent as JSON naming the header and the
 * value it refused; the tus protocol headers it carried (`Tus-Resumable`, `Upload-Offset`…) are
 * kept. Answers below 400 pass untouched.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Longest part of a header value quoted in a refusal, in characters. */
const QUOTED_VALUE_MAX = 200;

/** What the value of each header tus checks must be, as a refusal says it (tus 1.0.0). */
const HEADER_RULES: Readonly<Record<string, string>> = {
  'upload-length': 'a whole number of bytes, 0 or more',
  'upload-offset': 'a whole number of bytes, 0 or more',
  'upload-metadata': 'comma-separated pairs of a key and its value in base64',
  'upload-defer-length': '1',
  'upload-concat': '"partial" or "final;" followed by upload URLs',
  'tus-resumable': '1.0.0',
  'content-type': 'application/offset+octet-stream',
  'x-http-method-override': 'an HTTP method',
};

/** A header's name as the tus protocol writes it: `upload-length` → `Upload-Length`. */
function headerName(lowerCase: string): string {
  return lowerCase.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`);
}

/**
 * The refusal in words: a JSON `{ error }` body is kept as it is; tus's own plain texts are
 * reworded to name the header and quote the value the request sent.
 */
function refusalMessage(request: IncomingMessage, status: number, body: string): string {
  const text = body.trim();
  if (text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (typeof parsed.error === 'string') return parsed.error;
    } catch {
      // Not JSON after all: worded below.
    }
  }
  const invalid = /^Invalid ([A-Za-z-]+)$/.exec(text);
  if (invalid) {
    const header = invalid[1]!.toLowerCase();
    const value = String(request.headers[header] ?? '');
    const quoted = JSON.stringify(value.length > QUOTED_VALUE_MAX ? `${value.slice(0, QUOTED_VALUE_MAX)}…` : value);
    const rule = HEADER_RULES[header];
    return `${headerName(header)}: ${quoted} is not valid${rule ? ` (${rule})` : ''}`;
  }
  if (status === 412 && /tus-resumable/i.test(text)) return 'Tus-Resumable: the header is required (this server speaks tus 1.0.0)';
  if (status === 404) return 'no such upload';
  return text === '' ? `the upload request was refused (HTTP ${status})` : text;
}

/** Headers written with `writeHead`, in any of the shapes Node takes, as name → value. */
function headerEntries(headers: unknown): [string, string | number | string[]][] {
  if (Array.isArray(headers)) {
    // Either [name, value, name, value…] or [[name, value]…].
    if (headers.every((entry) => Array.isArray(entry))) return (headers as [string, string][]).map(([name, value]) => [name, value]);
    const pairs: [string, string][] = [];
    for (let index = 0; index + 1 < headers.length; index += 2) pairs.push([String(headers[index]), String(headers[index + 1])]);
    return pairs;
  }
  if (headers && typeof headers === 'object') return Object.entries(headers as Record<string, string | number | string[]>);
  return [];
}

/**
 * Wraps `response` so that an answer of status 400 or more leaves as JSON `{ error }` (see the
 * module's comment). Call before handing the response to `@tus/server`.
 * @param request the request, whose headers the reworded refusals quote
 */
export function answerTusRefusalsAsJson(request: IncomingMessage, response: ServerResponse): void {
  const writeHead = response.writeHead.bind(response) as (status: number, headers?: OutgoingHttpHeaders) => ServerResponse;
  const write = response.write.bind(response) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
  let held: { status: number; headers: [string, string | number | string[]][] } | undefined;
  const chunks: Buffer[] = [];

  response.writeHead = ((status: number, ...rest: unknown[]) => {
    if (status < 400) return (writeHead as (...args: unknown[]) => ServerResponse)(status, ...rest);
    held = { status, headers: headerEntries(rest.find((part) => typeof part === 'object' && part !== null)) };
    return response;
  }) as ServerResponse['writeHead'];

  response.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!held) return write(chunk, ...rest);
    if (chunk !== undefined && chunk !== null) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string | Uint8Array));
    const callback = rest.find((part): part is () => void => typeof part === 'function');
    callback?.();
    return true;
  }) as ServerResponse['write'];

  response.end = ((...args: unknown[]) => {
    // A refusal set through `statusCode` alone (no writeHead) is held here.
    if (!held && !response.headersSent && response.statusCode >= 400) held = { status: response.statusCode, headers: Object.entries(response.getHeaders()).flatMap(([name, value]) => (value === undefined ? [] : [[name, value] as [string, string | number | string[]]])) };
    if (!held) return end(...args);
    const callback = args.find((part): part is () => void => typeof part === 'function');
    const chunk = args[0];
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string | Uint8Array));
    const body = JSON.stringify({ error: refusalMessage(request, held.status, Buffer.concat(chunks).toString('utf8')) });
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of held.headers) {
      if (!/^(content-type|content-length|transfer-encoding)$/i.test(name)) headers[name.toLowerCase()] = value;
    }
    for (const name of response.getHeaderNames()) {
      if (/^(content-type|content-length|transfer-encoding)$/i.test(name)) response.removeHeader(name);
    }
    writeHead(held.status, { ...headers, 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
    held = undefined;
    return callback ? end(body, callback) : end(body);
  }) as ServerResponse['end'];
}
