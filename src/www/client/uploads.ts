/**
 * Attachments through the server's resumable upload endpoint (docs/protocol.md, "Resumable
 * uploads"): tus 1.0.0 at `/api/v1/uploads/tus` with tus-js-client, which resumes by itself after
 * a dropped connection (it asks the server's offset and sends only the rest). The page's sign-in
 * cookie authenticates every request; in platform mode each also carries the CSRF header. The
 * answer's `contentPart` goes into `session/input`.
 */
import { Upload, type HttpResponse } from 'tus-js-client';
import type { ContentPart } from '../../protocol/items.js';

/** Where uploads are created. */
const TUS_ENDPOINT = '/api/v1/uploads/tus';
/** Waits before each automatic retry of a failed request, ms (tus-js-client's own default). */
const RETRY_DELAYS_MS = [0, 1000, 3000, 5000];

/** What the server answers for a finished file. */
export interface UploadResult {
  attachment: { id: string; name: string; mediaType?: string; size?: number };
  contentPart: ContentPart;
  /** Where the file is in the conversation's working directory (`.openvaala/attachments/…`); null when it could not be put there. */
  workspacePath?: string | null;
}

/** The platform's CSRF header, when the server runs in platform mode (its state route answers); none otherwise. */
async function csrfHeaders(): Promise<Record<string, string>> {
  try {
    const response = await fetch('/web/v1/api/platform/state', { credentials: 'same-origin', cache: 'no-store' });
    if (!response.ok) return {};
    const state = (await response.json()) as { csrfToken?: unknown };
    return typeof state.csrfToken === 'string' && state.csrfToken !== '' ? { 'x-csrf-token': state.csrfToken } : {};
  } catch {
    return {};
  }
}

/** Decodes tus `Upload-Metadata` (`key base64,key base64`). */
function decodeMetadata(header: string | undefined): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const pair of (header ?? '').split(',')) {
    const [key, value] = pair.trim().split(' ');
    if (!key) continue;
    try {
      decoded[key] = value ? new TextDecoder().decode(Uint8Array.from(atob(value), (character) => character.charCodeAt(0))) : '';
    } catch {
      // A value that is not base64 is left out.
    }
  }
  return decoded;
}

/**
 * The result of a finished upload: the body of the request that finished it, or, when the upload
 * was already complete when resumed (that answer was lost), the attachment its HEAD names.
 */
function resultOf(response: HttpResponse, name: string): UploadResult {
  const body = response.getBody();
  if (body) return JSON.parse(body) as UploadResult;
  const metadata = decodeMetadata(response.getHeader('Upload-Metadata'));
  const attachmentId = metadata.attachmentId;
  if (!attachmentId) throw new Error(`upload of ${name}: the server did not say which attachment it became`);
  // The server fills in the stored path, name and media type when the part is sent.
  return { attachment: { id: attachmentId, name }, contentPart: { type: 'file', path: '', name, attachmentId }, workspacePath: metadata.workspacePath ?? null };
}

/**
 * Uploads one file for a conversation, resuming after dropped connections.
 * @param onProgress told the bytes sent so far and the file's size
 * @throws Error with the HTTP status and the server's `{ error }` message when refused (400, 401, 403, 404, 413…)
 */
export async function uploadAttachment(conversationId: string, file: Blob, name: string, onProgress?: (sentBytes: number, totalBytes: number) => void): Promise<UploadResult> {
  const headers = await csrfHeaders();
  return new Promise((resolve, reject) => {
    const upload = new Upload(file, {
      endpoint: TUS_ENDPOINT,
      headers,
      metadata: { conversationId, filename: name },
      retryDelays: RETRY_DELAYS_MS,
      removeFingerprintOnSuccess: true,
      // Bound to the conversation: the same file chosen for another conversation is a new upload.
      fingerprint: (input: File) => Promise.resolve(['openvaala', conversationId, name, input.size, input.lastModified ?? 0].join('/')),
      ...(onProgress ? { onProgress } : {}),
      onSuccess: ({ lastResponse }) => {
        try {
          resolve(resultOf(lastResponse, name));
        } catch (error) {
          reject(error as Error);
        }
      },
      onError: (error) => {
        const response = 'originalResponse' in error ? (error as { originalResponse: HttpResponse | null }).originalResponse : null;
        if (!response) return reject(new Error(`upload of ${name} failed: ${error.message}`));
        let message: string;
        try {
          message = (JSON.parse(response.getBody()) as { error?: string }).error ?? '';
        } catch {
          message = response.getBody().slice(0, 200);
        }
        reject(new Error(`upload of ${name} refused: HTTP ${response.getStatus()}${message ? ` ${message}` : ''}`));
      },
    });
    // An upload of this file interrupted earlier (e.g. by a reload) is continued, not restarted.
    upload
      .findPreviousUploads()
      .then((previous) => {
        const last = previous[0];
        if (last) upload.resumeFromPreviousUpload(last);
        upload.start();
      })
      .catch(() => upload.start());
  });
}
