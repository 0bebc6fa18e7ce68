/**
 * `POST /api/v1/uploads?conversationId=…&name=…` (docs/protocol.md, "Uploads"): a client
 * sends a file's bytes as the request body; the server stores it in the conversation's
 * directory (in the staging directory until the conversation is committed, see
 * `AttachmentStore`) and answers with the attachment and the `file` content part that names it in
 * `session/input`. Same token, session cookie, Host and Origin rules as the WebSocket (the Host
 * check is made by the HTTP server before this runs). In platform mode (docs/platform.md,
 * "Members and access") the caller is resolved as the WebSocket upgrade does it (server token,
 * API token, platform session cookie) and must be allowed to write to the conversation; a
 * cookie-authenticated upload must also carry the CSRF header (`platform-http.ts`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NotFoundError, type Runtime } from '../runtime/runtime.js';
import { sanitizeFileName, type AttachmentStore } from '../runtime/attachments.js';
import type { AccessControl } from '../platform/access/access-control.js';
import { LOCAL_OWNER, mayWrite, type Caller } from '../platform/caller.js';
import { originAllowed, presentedToken } from './http-server.js';
import { sameSecret } from './server-token.js';
import { HttpRefusal } from './web/platform-http.js';

/** Path of the upload endpoint. */
export const UPLOAD_PATH = '/api/v1/uploads';
/** Default largest upload, bytes (25 MiB); `server.yaml` `limits.maxUploadBytes` changes it. */
export const DEFAULT_MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
/** How long a refused upload's remaining body is read before the connection is cut, ms. */
const REFUSED_BODY_GRACE_MS = 2000;

/** What the upload endpoint needs from the server. */
export interface UploadOptions {
  token: string;
  /** Extra allowed `Origin` values (read on every request: a reload refills it). */
  allowedOrigins: string[];
  /** Largest body accepted, bytes (read on every request). */
  maxBytes: () => number;
  runtime: Runtime;
  attachments: AttachmentStore;
  logger: { error(details: object, message: string): void };
  /** Whether the request carries a live web UI session cookie (accepted instead of the token). */
  hasSession?: (request: IncomingMessage) => boolean;
  /** Platform mode: who callers are and what they may reach; without it every authenticated upload is the local owner's. */
  platform?: UploadPlatform;
}

/** What the upload endpoint needs in platform mode. */
export interface UploadPlatform {
  /** The caller an API token (not the server token) stands for; undefined for an unknown one. */
  apiTokenCaller: (token: string) => Promise<Caller | undefined>;
  /** The caller a platform session cookie stands for; undefined without a live one. */
  sessionCaller: (request: IncomingMessage) => Promise<Caller | undefined>;
  /**
   * Checks the CSRF rule of a cookie-authenticated request (Origin and `X-CSRF-Token`).
   * @throws HttpRefusal 403 naming what was wrong
   */
  checkCsrf: (request: IncomingMessage) => void;
  /** The platform's access rules (an upload writes to its conversation). */
  access: AccessControl;
}

/**
 * A value a client sent, cut for quoting in a refusal: at most `limit` characters, whole ones
 * (never half a surrogate pair), `…` marking the cut, so a long value does not fill the answer.
 */
export function messageExcerpt(text: string, limit = 80): string {
  const characters = [...text.slice(0, 2 * limit + 2)];
  return characters.length <= limit ? text : `${characters.slice(0, limit - 1).join('')}…`;
}

function answer(response: ServerResponse, status: number, body: object): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

/**
 * Refuses a request whose body is still arriving: the answer goes out, the rest of the body is
 * read for a moment (so the client can read the answer) and then the connection is cut.
 */
function refuseBody(request: IncomingMessage, response: ServerResponse, status: number, message: string): void {
  response.setHeader('connection', 'close');
  answer(response, status, { error: message });
  request.resume();
  setTimeout(() => request.destroy(), REFUSED_BODY_GRACE_MS).unref();
}

/**
 * Handles one request to `UPLOAD_PATH`. Answers (JSON, `{ error }` when refused): 201 with
 * `{ attachment: { id, name, mediaType, size }, contentPart }`; 405 for a method other than
 * POST; 403 for a foreign `Origin`; 401 without the token (and without a web UI session
 * cookie) or with a wrong one; 403 (platform mode) for a session cookie without the CSRF header,
 * a read-only API token, or a caller who is not a member of the conversation's project; 400 when
 * `conversationId` is missing or malformed or `name` is missing (a name is otherwise made usable
 * by `sanitizeFileName`); 404 for an unknown conversation; 413
 * when the body is over `maxBytes()`; 500 when it cannot be stored (details in the log).
 */
export function handleUpload(request: IncomingMessage, response: ServerResponse, options: UploadOptions): void {
  if (request.method !== 'POST') {
    response.setHeader('allow', 'POST');
    return refuseBody(request, response, 405, `${UPLOAD_PATH} takes POST only`);
  }
  if (!originAllowed(request, options.allowedOrigins)) return refuseBody(request, response, 403, `origin ${String(request.headers.origin).slice(0, 200)} may not use this server`);
  // The body is read only once the caller and the conversation are known.
  request.pause();
  uploadCaller(request, options).then(
    (caller) => {
      if (typeof caller === 'object') return checkTarget(request, response, options, caller);
      if (caller === 'missing') return refuseBody(request, response, 401, 'missing token: send "Authorization: Bearer <token>" (or sign in to the web UI)');
      refuseBody(request, response, 401, 'wrong token');
    },
    (error: unknown) => {
      if (error instanceof HttpRefusal) return refuseBody(request, response, error.status, error.message);
      options.logger.error({ error: (error as Error).message }, 'an upload could not resolve its caller');
      refuseBody(request, response, 500, 'the caller could not be checked; see the server log');
    },
  );
}

/**
 * Who an upload acts as, as the WebSocket upgrade decides it: the server token is the local
 * owner; in platform mode another token may be an API token; without a token, a platform session
 * cookie (which must then pass the CSRF rule), then a local web UI session cookie.
 * Shared by the resumable upload endpoint (`tus-uploads.ts`), which checks every request this way.
 * @returns the caller, or why there is none
 * @throws HttpRefusal 403 when a platform session cookie fails the CSRF rule
 */
export async function uploadCaller(request: IncomingMessage, options: Pick<UploadOptions, 'token' | 'hasSession' | 'platform'>): Promise<Caller | 'missing' | 'wrong'> {
  const token = presentedToken(request);
  if (token !== undefined) {
    if (sameSecret(token, options.token)) return LOCAL_OWNER;
    return (await options.platform?.apiTokenCaller(token)) ?? 'wrong';
  }
  const sessionCaller = await options.platform?.sessionCaller(request);
  if (sessionCaller) {
    options.platform?.checkCsrf(request);
    return sessionCaller;
  }
  return options.hasSession?.(request) === true ? LOCAL_OWNER : 'missing';
}

function checkTarget(request: IncomingMessage, response: ServerResponse, options: UploadOptions, caller: Caller): void {
  const query = new URL(request.url ?? '/', 'http://localhost').searchParams;
  const conversationId = query.get('conversationId') ?? '';
  if (!/^conv_[0-9A-Za-z]{1,64}$/.test(conversationId)) return refuseBody(request, response, 400, 'query conversationId: not a conversation id (expected conv_ followed by letters and digits)');
  const givenName = query.get('name');
  if (givenName === null || givenName === '') return refuseBody(request, response, 400, 'query name: the file name is missing');
  const name = sanitizeFileName(givenName);
  const maxBytes = options.maxBytes();
  const tooLarge = `the body is over the upload limit of ${maxBytes} bytes (server.yaml limits.maxUploadBytes)`;
  const declared = Number(request.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return refuseBody(request, response, 413, tooLarge);
  if (!mayWrite(caller)) return refuseBody(request, response, 403, 'this API token is read-only; an upload changes state');
  // An upload writes to the conversation: the rule of every conversation method (access-control.ts).
  // Checked before the conversation is looked up, so an unknown id and one of another project
  // get the same answer: a caller learns nothing about conversations outside their projects.
  const refusal = caller.kind !== 'local-owner' ? options.platform?.access.conversationRefusal(caller, conversationId) : undefined;
  if (refusal !== undefined) return refuseBody(request, response, 403, `query conversationId: ${refusal}`);
  options.runtime.getConversation(conversationId).then(
    () => receive(request, response, options, { conversationId, name, maxBytes, tooLarge }),
    (error: unknown) => {
      if (error instanceof NotFoundError) return refuseBody(request, response, 404, `conversation ${conversationId} does not exist`);
      options.logger.error({ conversationId, error: (error as Error).message }, 'an upload could not find its conversation');
      refuseBody(request, response, 500, 'the conversation could not be opened; see the server log');
    },
  );
}

function receive(request: IncomingMessage, response: ServerResponse, options: UploadOptions, upload: { conversationId: string; name: string; maxBytes: number; tooLarge: string }): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let refused = false;
  request.on('data', (chunk: Buffer) => {
    if (refused) return;
    received += chunk.byteLength;
    if (received > upload.maxBytes) {
      refused = true;
      chunks.length = 0;
      refuseBody(request, response, 413, upload.tooLarge);
      return;
    }
    chunks.push(chunk);
  });
  request.on('error', () => undefined);
  request.on('end', () => {
    if (refused) return;
    try {
      const stored = options.attachments.save(upload.conversationId, upload.name, Buffer.concat(chunks));
      answer(response, 201, {
        attachment: { id: stored.id, name: stored.name, mediaType: stored.mediaType, size: stored.size },
        contentPart: { type: 'file', path: stored.path, name: stored.name, mediaType: stored.mediaType, attachmentId: stored.id },
      });
    } catch (error) {
      options.logger.error({ conversationId: upload.conversationId, error: (error as Error).message }, 'an upload could not be stored');
      answer(response, 500, { error: 'the file could not be stored; see the server log' });
    }
  });
  request.resume();
}
