/**
 * Attachments through the server's upload endpoint (docs/protocol.md, "Uploads"):
 * `POST /api/v1/uploads?conversationId=…&name=…` with the file's bytes; the answer's
 * `contentPart` goes into `session/input`. The page's sign-in cookie authenticates it.
 */
import type { ContentPart } from '../../protocol/items.js';

/** What the endpoint answers for a stored file (HTTP 201). */
export interface UploadResult {
  attachment: { id: string; name: string; mediaType: string; size: number };
  contentPart: ContentPart;
}

/**
 * Uploads one file for a conversation.
 * @throws Error with the HTTP status and the server's `{ error }` message when refused (400, 401, 404, 413…)
 */
export async function uploadAttachment(conversationId: string, file: Blob, name: string): Promise<UploadResult> {
  const query = new URLSearchParams({ conversationId, name });
  const response = await fetch(`/api/v1/uploads?${query.toString()}`, { method: 'POST', body: file, credentials: 'same-origin' });
  const body = (await response.json().catch(() => ({}))) as Partial<UploadResult> & { error?: string };
  if (response.status !== 201 || !body.contentPart) throw new Error(`upload of ${name} refused: HTTP ${response.status}${body.error ? ` ${body.error}` : ''}`);
  return body as UploadResult;
}
