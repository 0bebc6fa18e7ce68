/**
 * Files a client uploads for a conversation (`POST /api/v1/uploads`), kept inside the
 * conversation's own directory (`<dataDir>/conversations/<id>/attachments/<attachmentId>-<name>`)
 * so that directory stays complete when copied or backed up alone. A `file` content part
 * with an `attachmentId` names one; the model receives images as image parts and UTF-8 text as
 * text. What a file is comes from its bytes, never from what the client claimed, so the same
 * stored file always reaches the model the same way.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { newId } from '../ids.js';

/** Directory of a conversation's attachments, relative to the conversation's directory. */
export const ATTACHMENTS_DIRECTORY = 'attachments';
/** Longest stored file name (without the id prefix), in characters. */
const MAX_NAME_LENGTH = 100;

/** An attachment id: `att_` then letters and digits. */
export const ATTACHMENT_ID_PATTERN = /^att_[0-9A-Za-z]{1,64}$/;

/** A stored attachment. */
export interface Attachment {
  /** `att_…`. */
  id: string;
  /** The sanitised file name. */
  name: string;
  /** Media type found from the bytes (`image/png`, `text/plain`, else `application/octet-stream`). */
  mediaType: string;
  /** Size, bytes. */
  size: number;
  /** Path relative to the conversation's directory (`attachments/<id>-<name>`). */
  path: string;
}

/** How an attachment reaches the model. */
export type AttachmentContent = { kind: 'image'; mediaType: string } | { kind: 'text' } | { kind: 'unsupported' };

/**
 * Classifies a file by its bytes: PNG, JPEG, GIF and WebP signatures are images; anything
 * that decodes as UTF-8 and holds no NUL byte is text; the rest is not supported.
 */
export function classifyAttachment(bytes: Uint8Array): AttachmentContent {
  const starts = (...signature: number[]) => signature.every((byte, index) => bytes[index] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return { kind: 'image', mediaType: 'image/png' };
  if (starts(0xff, 0xd8, 0xff)) return { kind: 'image', mediaType: 'image/jpeg' };
  if (starts(0x47, 0x49, 0x46, 0x38)) return { kind: 'image', mediaType: 'image/gif' };
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return { kind: 'image', mediaType: 'image/webp' };
  if (bytes.includes(0)) return { kind: 'unsupported' };
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return { kind: 'text' };
  } catch {
    return { kind: 'unsupported' };
  }
}

/** The media type of an attachment's bytes (see `classifyAttachment`). */
export function attachmentMediaType(bytes: Uint8Array): string {
  const content = classifyAttachment(bytes);
  return content.kind === 'image' ? content.mediaType : content.kind === 'text' ? 'text/plain' : 'application/octet-stream';
}

/**
 * A file name made safe to store and show: only the last path segment, control characters,
 * slashes, backslashes and characters outside letters, digits, `.`, `-`, `_`, space, `+`, `@`
 * replaced by `_`, no leading dots, at most 100 characters.
 * @returns the safe name, or undefined when nothing usable is left (`..`, `""`, only dots)
 */
export function sanitizeFileName(name: string): string | undefined {
  const last = name.split(/[/\\]/).at(-1) ?? '';
  const cleaned = last
    .normalize('NFC')
    .replace(/[^\p{L}\p{N}._\-+@ ]/gu, '_')
    .replace(/^[.\s]+/, '')
    .trim()
    .slice(0, MAX_NAME_LENGTH);
  return cleaned === '' || /^_+$/.test(cleaned) ? undefined : cleaned;
}

/** Stores and reads the attachments of every conversation under one data directory. */
export class AttachmentStore {
  /** @param dataDir the server's data directory (conversations live in `<dataDir>/conversations/<id>`) */
  constructor(private readonly dataDir: string) {}

  private directory(conversationId: string): string {
    return path.join(this.dataDir, 'conversations', conversationId, ATTACHMENTS_DIRECTORY);
  }

  /**
   * Stores an attachment of a conversation.
   * @param conversationId a well-formed conversation id (checked by the caller)
   * @param name a name already passed through `sanitizeFileName`
   * @throws Error from the file system (disk full…)
   */
  save(conversationId: string, name: string, bytes: Uint8Array): Attachment {
    const id = newId('att');
    const fileName = `${id}-${name}`;
    const directory = this.directory(conversationId);
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    // The server's data is private to its user, like the logs beside it.
    writeFileSync(path.join(directory, fileName), bytes, { mode: 0o600, flag: 'wx' });
    return { id, name, mediaType: attachmentMediaType(bytes), size: bytes.byteLength, path: `${ATTACHMENTS_DIRECTORY}/${fileName}` };
  }

  /**
   * Finds a stored attachment of a conversation and reads it.
   * @returns undefined when the id is malformed or names nothing in that conversation
   */
  read(conversationId: string, attachmentId: string): { attachment: Attachment; bytes: Uint8Array } | undefined {
    if (!ATTACHMENT_ID_PATTERN.test(attachmentId)) return undefined;
    let names: string[];
    try {
      names = readdirSync(this.directory(conversationId));
    } catch {
      return undefined;
    }
    const fileName = names.find((entry) => entry.startsWith(`${attachmentId}-`));
    if (fileName === undefined) return undefined;
    const bytes = readFileSync(path.join(this.directory(conversationId), fileName));
    return { attachment: { id: attachmentId, name: fileName.slice(attachmentId.length + 1), mediaType: attachmentMediaType(bytes), size: bytes.byteLength, path: `${ATTACHMENTS_DIRECTORY}/${fileName}` }, bytes };
  }
}
