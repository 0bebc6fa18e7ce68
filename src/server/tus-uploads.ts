/**
 * Resumable uploads at `/api/v1/uploads/tus` (docs/protocol.md, "Resumable uploads"): the tus
 * 1.0.0 protocol (https://tus.io/protocols/resumable-upload, served by `@tus/server`) with the
 * extensions creation, creation-with-upload, creation-defer-length and termination. Every
 * request, whatever its method, passes the checks of `POST /api/v1/uploads` (`uploads.ts`):
 * Origin, the token or a session cookie (with the CSRF header in platform mode), a token that may
 * write, and in platform mode access to the upload's conversation, looked up from the upload's
 * record for a HEAD, PATCH or DELETE, so knowing an upload's URL gives nothing to someone outside
 * its project. An `Upload-Length` over `limits.maxUploadBytes` is refused at creation, before any
 * byte is stored; a deferred length is bounded by the same limit as bytes arrive. A finished
 * upload becomes an attachment of its conversation (`AttachmentStore`, what `session/input`
 * names by `attachmentId`) and a copy in the workspace's `.openvaala/attachments/`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERRORS, Server, type Upload } from '@tus/server';
import { NotFoundError, type Runtime } from '../runtime/runtime.js';
import { sanitizeFileName, type Attachment, type AttachmentStore } from '../runtime/attachments.js';
import { placeInWorkspace } from '../runtime/workspace-attachments.js';
import { mayWrite, type Caller } from '../platform/caller.js';
import { originAllowed } from './http-server.js';
import { HttpRefusal } from './web/platform-http.js';
import { messageExcerpt, uploadCaller, type UploadOptions } from './uploads.js';
import { DamagedUploadRecordError, newUploadId, TusUploadStore } from './tus-upload-store.js';

import { TUS_UPLOAD_PATH } from './tus-upload-paths.js';
import { answerTusRefusalsAsJson } from './tus-json-errors.js';

export { TUS_UPLOAD_PATH, TUS_UPLOAD_MAX_AGE_MS, TUS_UPLOAD_SWEEP_MS } from './tus-upload-paths.js';
/** Metadata keys a creation must carry (tus `Upload-Metadata`, values base64). */
const REQUIRED_METADATA = ['conversationId', 'filename'] as const;

/** What the tus endpoint needs: the options of the one-shot upload route, and the data directory. */
export type TusUploadOptions = Omit<UploadOptions, 'attachments'> & {
  attachments: AttachmentStore;
  /** The server's data directory (unfinished uploads live in `<dataDir>/uploads/`). */
  dataDir: string;
  logger: { error(details: object, message: string): void; warn(details: object, message: string): void };
};

/** A refusal in the shape `@tus/server` sends (status and body); the body is JSON `{ error }`. */
interface TusRefusal {
  status_code: number;
  body: string;
}

function refusal(status: number, message: string): TusRefusal {
  return { status_code: status, body: JSON.stringify({ error: message }) };
}

/** The Node request behind the web request `@tus/server` hands to its hooks. */
function nodeRequest(request: Request): IncomingMessage | undefined {
  return (request as Request & { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
}

/** The tus endpoint: `handle` answers every request under `TUS_UPLOAD_PATH`. */
export interface TusUploads {
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** The store of unfinished uploads (tests and start-up clean-up). */
  store: TusUploadStore;
}

/**
 * Builds the tus endpoint. Answers: those of tus (201 creation with `Location`, 204 PATCH, 200
 * HEAD with `Upload-Offset`, 204 DELETE and OPTIONS), 200 with JSON `{ attachment, contentPart,
 * workspacePath }` for the request that completes an upload; refusals carry JSON `{ error }`:
 * 403 foreign Origin, CSRF, read-only token or conversation outside the caller's projects; 401
 * no or wrong credentials; 400 missing or malformed metadata; 404 unknown conversation or upload;
 * 413 over the limit (naming it in bytes); 500 when the file cannot be stored.
 */
export function createTusUploads(options: TusUploadOptions): TusUploads {
  const store = new TusUploadStore(options.dataDir);
  const callers = new WeakMap<IncomingMessage, Caller>();
  const callerOf = (request: Request): Caller => {
    const node = nodeRequest(request);
    const caller = node ? callers.get(node) : undefined;
    // Every request reaching tus was authenticated first; a missing caller is a wiring bug.
    if (!caller) throw refusal(401, 'the caller of this request was not authenticated');
    return caller;
  };
  /**
   * An upload's record, for a request about it. A damaged record is logged with its file and
   * answered 410 (tus: the upload is gone), so a tus client starts a new upload.
   * @throws TusRefusal 410 naming what is wrong with the record
   */
  const uploadInfo = async (uploadId: string) => {
    try {
      return await store.info(uploadId);
    } catch (error) {
      if (!(error instanceof DamagedUploadRecordError)) throw error;
      options.logger.warn({ file: error.file, problem: error.problem }, 'a resumable upload has a damaged record');
      throw refusal(410, `upload ${uploadId} cannot be resumed: its record on the server is damaged (${error.problem}); start a new upload`);
    }
  };
  const overLimit = () => `the upload is over the upload limit of ${options.maxBytes()} bytes (server.yaml limits.maxUploadBytes)`;

  /**
   * The conversation rule of every request: a token that may write and, in platform mode,
   * membership of the conversation's project (an unknown conversation gets the same answer).
   */
  const checkAccess = (caller: Caller, conversationId: string, where: string): void => {
    if (!mayWrite(caller)) throw refusal(403, 'this API token is read-only; an upload changes state');
    const reason = caller.kind !== 'local-owner' ? options.platform?.access.conversationRefusal(caller, conversationId) : undefined;
    if (reason !== undefined) throw refusal(403, `${where}: ${reason}`);
  };

  const tusOptions: ConstructorParameters<typeof Server>[0] = {
    path: TUS_UPLOAD_PATH,
    datastore: store,
    relativeLocation: true,
    maxSize: () => options.maxBytes(),
    namingFunction: () => newUploadId(),
    // CORS answers name only the origins the server accepts (the Origin check itself is made before tus).
    allowedOrigins: (origin) => options.allowedOrigins.includes(origin),
    allowedCredentials: true,
    // Runs for HEAD, PATCH and DELETE of an upload (and POST, whose conversation is checked in onUploadCreate).
    onIncomingRequest: async (request, uploadId) => {
      const caller = callerOf(request);
      if (request.method === 'POST') return;
      const info = await uploadInfo(uploadId);
      if (!info) throw refusal(404, `upload ${messageExcerpt(uploadId)} does not exist`);
      checkAccess(caller, info.conversationId, `upload ${uploadId}`);
      // A complete upload whose hand-over failed (its answer was an error) is handed over when
      // its client comes back to ask the offset, so the HEAD can name the attachment.
      if (request.method === 'HEAD' && !info.finished && info.size !== undefined && (await store.getUpload(uploadId)).offset === info.size) await finish(uploadId);
    },
    onUploadCreate: async (request, upload) => {
      const caller = callerOf(request);
      const metadata = upload.metadata ?? {};
      for (const key of REQUIRED_METADATA) {
        if (!metadata[key]) throw refusal(400, `Upload-Metadata ${key}: missing (send conversationId and filename, base64 encoded)`);
      }
      const conversationId = metadata.conversationId as string;
      if (!/^conv_[0-9A-Za-z]{1,64}$/.test(conversationId)) throw refusal(400, `Upload-Metadata conversationId: ${JSON.stringify(messageExcerpt(conversationId))} is not a conversation id (expected conv_ followed by letters and digits)`);
      const name = sanitizeFileName(metadata.filename as string);
      if (upload.size !== undefined && upload.size > options.maxBytes()) throw refusal(413, overLimit());
      // Access before existence, so an unknown conversation and one of another project look alike.
      checkAccess(caller, conversationId, 'Upload-Metadata conversationId');
      await findConversation(options.runtime, conversationId, options.logger);
      return { metadata: { ...metadata, conversationId, filename: name } };
    },
    onUploadFinish: async (_request, upload: Upload) => answerFinished(await finish(upload.id)),
    // tus's own refusals are plain text: each becomes JSON { error }, the size ones naming the limit.
    onResponseError: (_request, error) => {
      const status = 'status_code' in error ? error.status_code : 500;
      const body = 'body' in error && typeof error.body === 'string' ? error.body : '';
      if (body.startsWith('{')) return undefined;
      if (status >= 500) {
        options.logger.error({ error: error instanceof Error ? error.message : body }, 'a resumable upload failed');
        return refusal(status, 'the upload could not be stored; see the server log');
      }
      if (body === ERRORS.ERR_MAX_SIZE_EXCEEDED.body) return refusal(413, overLimit());
      if (body === ERRORS.ERR_SIZE_EXCEEDED.body) return refusal(413, `the bytes sent would go past the upload's Upload-Length or the upload limit of ${options.maxBytes()} bytes (server.yaml limits.maxUploadBytes)`);
      if (status === 404) return refusal(404, 'no such upload');
      return refusal(status, body.trim());
    },
  };
  // Without a locker tus makes one in memory: enough, as one server process serves the data directory.
  const server = new Server(tusOptions);

  /** What the request completing an upload answers. */
  interface Finished {
    attachment: Attachment;
    workspacePath: string | null;
    workspaceError?: string;
  }
  const answerFinished = (finished: Finished) => {
    const { attachment, workspacePath, workspaceError } = finished;
    const body = {
      attachment: { id: attachment.id, name: attachment.name, mediaType: attachment.mediaType, size: attachment.size },
      contentPart: { type: 'file', path: attachment.path, name: attachment.name, mediaType: attachment.mediaType, attachmentId: attachment.id },
      workspacePath,
      ...(workspaceError !== undefined ? { workspaceError } : {}),
    };
    return { status_code: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: JSON.stringify(body) };
  };

  /** Hand-overs running now, by upload id: a HEAD and the last PATCH never hand one upload over twice. */
  const finishing = new Map<string, Promise<Finished>>();
  const finish = (uploadId: string): Promise<Finished> => {
    const running = finishing.get(uploadId);
    if (running) return running;
    const started = handOver(uploadId).finally(() => finishing.delete(uploadId));
    finishing.set(uploadId, started);
    return started;
  };

  /** Hands a complete upload to its conversation: an attachment, and a copy in the workspace. */
  const handOver = async (uploadId: string): Promise<Finished> => {
    const info = await uploadInfo(uploadId);
    if (!info) throw refusal(404, `upload ${uploadId} does not exist`);
    if (info.finished) {
      const stored = options.attachments.read(info.conversationId, info.finished.attachmentId);
      if (!stored) throw refusal(404, `upload ${uploadId}: its attachment ${info.finished.attachmentId} no longer exists`);
      return { attachment: stored.attachment, workspacePath: info.finished.workspacePath };
    }
    const conversation = await findConversation(options.runtime, info.conversationId, options.logger);
    const bytes = await store.readData(uploadId);
    const attachment = options.attachments.save(info.conversationId, info.name, bytes);
    let workspacePath: string | null = null;
    let workspaceError: string | undefined;
    try {
      workspacePath = await placeInWorkspace(conversation.workspace, info.name, bytes);
    } catch (error) {
      // The attachment is stored and usable by the model; only the tools' copy is missing.
      workspaceError = (error as Error).message;
      options.logger.warn({ conversationId: info.conversationId, error: workspaceError }, 'an upload could not be copied into the workspace');
    }
    await store.markFinished(uploadId, { attachmentId: attachment.id, workspacePath });
    return { attachment, workspacePath, ...(workspaceError !== undefined ? { workspaceError } : {}) };
  };

  const refuse = (request: IncomingMessage, response: ServerResponse, status: number, message: string) => {
    request.resume();
    if (response.headersSent) return;
    response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'tus-resumable': '1.0.0', connection: 'close' });
    response.end(JSON.stringify({ error: message }));
  };

  return {
    store,
    handle(request, response) {
      if (!originAllowed(request, options.allowedOrigins)) return refuse(request, response, 403, `origin ${String(request.headers.origin).slice(0, 200)} may not use this server`);
      // Nothing of the body is read before the caller is known.
      request.pause();
      uploadCaller(request, options).then(
        (caller) => {
          if (caller === 'missing') return refuse(request, response, 401, 'missing token: send "Authorization: Bearer <token>" (or sign in to the web UI)');
          if (caller === 'wrong') return refuse(request, response, 401, 'wrong token');
          callers.set(request, caller);
          answerTusRefusalsAsJson(request, response);
          server.handle(request, response).catch((error: unknown) => {
            options.logger.error({ error: (error as Error).message }, 'a resumable upload request failed');
            refuse(request, response, 500, 'the upload request failed; see the server log');
          });
        },
        (error: unknown) => {
          if (error instanceof HttpRefusal) return refuse(request, response, error.status, error.message);
          options.logger.error({ error: (error as Error).message }, 'a resumable upload could not resolve its caller');
          refuse(request, response, 500, 'the caller could not be checked; see the server log');
        },
      );
    },
  };
}

/**
 * The live conversation an upload is for.
 * @throws TusRefusal 404 for an unknown conversation, 500 when it cannot be opened (logged)
 */
async function findConversation(runtime: Runtime, conversationId: string, logger: TusUploadOptions['logger']) {
  try {
    return await runtime.getConversation(conversationId);
  } catch (error) {
    if (error instanceof NotFoundError) throw refusal(404, `Upload-Metadata conversationId: conversation ${conversationId} does not exist`);
    logger.error({ conversationId, error: (error as Error).message }, 'a resumable upload could not open its conversation');
    throw refusal(500, 'the conversation could not be opened; see the server log');
  }
}
