/**
 * Files a client uploads for a conversation (`POST /api/v1/uploads`), kept inside the
 * conversation's own directory (`<dataDir>/conversations/<id>/attachments/<attachmentId>-<name>`)
 * so that directory stays complete when copied or backed up alone. A conversation that is still
 * staged (no input yet, docs/storage.md) is not on disk, so its uploads wait in
 * `<dataDir>/staging/<id>/` and are moved into the conversation's directory, with one rename,
 * when it is committed; what is left there by conversations never committed is removed at the
 * next start. A `file` content part
 * with an `attachmentId` names one; the model receives images as image parts and UTF-8 text as
 * text. What a file is comes from its bytes, never from what the client claimed, so the same
 * stored file always reaches the model the same way.
 */
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { newId } from '../ids.js';
import { makeDirectorySync } from '../make-directory.js';
import { syncDirectoryEntries } from '../sync-directory.js';

/** Directory of a conversation's attachments, relative to the conversation's directory. */
export const ATTACHMENTS_DIRECTORY = 'attachments';
/** Directory, relative to the data directory, of the uploads of conversations not yet committed. */
export const STAGING_DIRECTORY = 'staging';
/** Directory inside `STAGING_DIRECTORY` where a file is written before it is renamed into place. */
const INCOMING_DIRECTORY = '.incoming';
/** Longest stored file name (without the id prefix), in characters. */
const MAX_NAME_LENGTH = 100;
/**
 * Longest stored file name (without the id prefix), in UTF-8 bytes: file systems allow 255 bytes
 * per name, and the file is `<attachment id>-<name>`, the id being `att_` and a 26-character ULID.
 */
const MAX_NAME_BYTES = 255 - 'att_'.length - 26 - '-'.length;
/** Longest extension kept whole when a name is cut, in UTF-8 bytes (its dot included). */
const MAX_KEPT_EXTENSION_BYTES = 16;
/** The name of an upload whose own name has no letter or digit (only emoji, `..`). */
export const FALLBACK_FILE_NAME = 'file';

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
 * The longest start of `text` of at most `characters` characters and `bytes` UTF-8 bytes:
 * whole characters only, so a surrogate pair is never split.
 */
function leadingCharacters(text: string, characters: number, bytes: number): string {
  let kept = '';
  let keptCharacters = 0;
  let keptBytes = 0;
  for (const character of text) {
    const size = Buffer.byteLength(character, 'utf8');
    if (keptCharacters + 1 > characters || keptBytes + size > bytes) break;
    kept += character;
    keptCharacters += 1;
    keptBytes += size;
  }
  return kept;
}

/**
 * A file name made safe to store and show: only the last path segment, control characters,
 * slashes, backslashes and characters outside letters, digits, `.`, `-`, `_`, space, `+`, `@`
 * replaced by `_`, no leading dots, at most 100 characters and 224 UTF-8 bytes (so the stored
 * `<attachment id>-<name>` fits the 255 bytes of a file name), cut before a short extension so
 * the extension stays. A name with no letter or digit left (only emoji, `..`, `/`) becomes
 * {@link FALLBACK_FILE_NAME}: the upload is still usable, and its media type comes from its bytes anyway.
 */
export function sanitizeFileName(name: string): string {
  const last = name.split(/[/\\]/).at(-1) ?? '';
  const cleaned = last
    .normalize('NFC')
    .replace(/[^\p{L}\p{N}._\-+@ ]/gu, '_')
    .replace(/^[.\s]+/, '')
    .trim();
  if (!/[\p{L}\p{N}]/u.test(cleaned)) return FALLBACK_FILE_NAME;
  if ([...cleaned].length <= MAX_NAME_LENGTH && Buffer.byteLength(cleaned, 'utf8') <= MAX_NAME_BYTES) return cleaned;
  const dot = cleaned.lastIndexOf('.');
  const extension = dot > 0 ? cleaned.slice(dot) : '';
  const kept = extension !== '' && Buffer.byteLength(extension, 'utf8') <= MAX_KEPT_EXTENSION_BYTES ? extension : '';
  const stem = leadingCharacters(cleaned.slice(0, cleaned.length - kept.length), MAX_NAME_LENGTH - [...kept].length, MAX_NAME_BYTES - Buffer.byteLength(kept, 'utf8')).trimEnd();
  const cut = `${stem}${kept}`;
  return /[\p{L}\p{N}]/u.test(cut) ? cut : FALLBACK_FILE_NAME;
}

/** What an `AttachmentStore` needs to know about conversations. */
export interface AttachmentStoreOptions {
  /** Whether a conversation is staged (lives in memory only); its uploads then go to the staging directory. */
  isStaged?: (conversationId: string) => boolean;
}

/** Writes a whole file and flushes it to disk; `wx`, so an existing file is never overwritten. */
function writeDurably(file: string, bytes: Uint8Array): void {
  const descriptor = openSync(file, 'wx', 0o600);
  try {
    let written = 0;
    while (written < bytes.byteLength) written += writeSync(descriptor, bytes, written, bytes.byteLength - written);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * Stores and reads the attachments of every conversation under one data directory. A file is
 * written under `<dataDir>/staging/.incoming/` first and renamed into place once complete, so
 * no reader ever sees part of a file and a crash leaves only what the next start removes.
 */
export class AttachmentStore {
  private readonly isStaged: (conversationId: string) => boolean;

  /**
   * @param dataDir the server's data directory (conversations live in `<dataDir>/conversations/<id>`)
   * @param options `isStaged` tells which conversations are not committed yet (none when absent)
   */
  constructor(
    private readonly dataDir: string,
    options: AttachmentStoreOptions = {},
  ) {
    this.isStaged = options.isStaged ?? (() => false);
  }

  private directory(conversationId: string): string {
    return path.join(this.dataDir, 'conversations', conversationId, ATTACHMENTS_DIRECTORY);
  }

  private stagingDirectory(conversationId: string): string {
    return path.join(this.dataDir, STAGING_DIRECTORY, conversationId);
  }

  /**
   * Stores an attachment of a conversation: in the conversation's directory, or in the staging
   * directory while the conversation is staged. The file appears complete or not at all.
   * @param conversationId a well-formed conversation id (checked by the caller)
   * @param name a name already passed through `sanitizeFileName`
   * @throws Error from the file system (disk full…); nothing is left behind then
   */
  save(conversationId: string, name: string, bytes: Uint8Array): Attachment {
    const id = newId('att');
    const fileName = `${id}-${name}`;
    const incoming = path.join(this.dataDir, STAGING_DIRECTORY, INCOMING_DIRECTORY);
    makeDirectorySync(incoming, 0o700);
    // The server's data is private to its user, like the logs beside it.
    const partial = path.join(incoming, fileName);
    try {
      writeDurably(partial, bytes);
      // Checked and renamed in one synchronous step: a commit (see `commitStaged`) cannot
      // run in between, so the file lands on the side the conversation is on.
      const directory = this.isStaged(conversationId) ? this.stagingDirectory(conversationId) : this.directory(conversationId);
      makeDirectorySync(directory, 0o700);
      renameSync(partial, path.join(directory, fileName));
      syncDirectoryEntries(directory);
    } catch (error) {
      rmSync(partial, { force: true });
      throw error;
    }
    return { id, name, mediaType: attachmentMediaType(bytes), size: bytes.byteLength, path: `${ATTACHMENTS_DIRECTORY}/${fileName}` };
  }

  /**
   * The stored files of a conversation (its directory, or the staging directory while it is
   * staged), sorted by name: what an export archives.
   * @returns `[]` when it has none
   */
  listFiles(conversationId: string): { name: string; bytes: Uint8Array }[] {
    const directory = this.isStaged(conversationId) ? this.stagingDirectory(conversationId) : this.directory(conversationId);
    let names: string[];
    try {
      names = readdirSync(directory);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    return names.sort().map((name) => ({ name, bytes: readFileSync(path.join(directory, name)) }));
  }

  /**
   * Puts a file back under the name it had (an import): written under `staging/.incoming/`,
   * synced, then renamed into `conversations/<id>/attachments/`, so it is complete or absent.
   * @param fileName `<attachment-id>-<name>` as {@link save} made it, checked by the caller (no path separators)
   * @throws Error from the file system; nothing is left behind then
   */
  restore(conversationId: string, fileName: string, bytes: Uint8Array): void {
    const incoming = path.join(this.dataDir, STAGING_DIRECTORY, INCOMING_DIRECTORY);
    makeDirectorySync(incoming, 0o700);
    // Its own id only: the restored name may already fill the 255 bytes of a file name.
    const partial = path.join(incoming, `${newId('att')}-restoring`);
    const directory = this.directory(conversationId);
    try {
      writeDurably(partial, bytes);
      makeDirectorySync(directory, 0o700);
      renameSync(partial, path.join(directory, path.basename(fileName)));
      syncDirectoryEntries(directory);
    } catch (error) {
      rmSync(partial, { force: true });
      throw error;
    }
  }

  /** Removes a conversation's attachments directory (an import that failed). */
  removeFiles(conversationId: string): void {
    rmSync(this.directory(conversationId), { recursive: true, force: true });
  }

  /**
   * Moves the uploads of a conversation that was just committed from the staging directory
   * into `conversations/<id>/attachments/`: one rename of the whole directory (file by file
   * when the conversation already has an attachments directory). Must be called in the same
   * synchronous step in which the conversation stops being staged, so no upload falls between.
   * A no-op when nothing was uploaded.
   * @throws Error from the file system; the files not moved stay in the staging directory
   */
  commitStaged(conversationId: string): void {
    const staged = this.stagingDirectory(conversationId);
    const target = this.directory(conversationId);
    makeDirectorySync(path.dirname(target), 0o700);
    try {
      renameSync(staged, target);
    } catch (error) {
      if (isMissing(error)) return;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      for (const entry of readdirSync(staged)) renameSync(path.join(staged, entry), path.join(target, entry));
      rmSync(staged, { recursive: true, force: true });
    }
    syncDirectoryEntries(path.dirname(target));
    syncDirectoryEntries(path.dirname(staged));
  }

  /**
   * Removes the staging directory's content: uploads of conversations that were never
   * committed, and files a stopped server was still writing. Only for start-up, before any
   * conversation exists.
   * @returns the number of conversations whose uploads were removed
   */
  removeStagingLeftovers(): number {
    const root = path.join(this.dataDir, STAGING_DIRECTORY);
    let entries: string[];
    try {
      entries = readdirSync(root);
    } catch (error) {
      if (isMissing(error)) return 0;
      throw error;
    }
    for (const entry of entries) rmSync(path.join(root, entry), { recursive: true, force: true });
    return entries.filter((entry) => entry !== INCOMING_DIRECTORY).length;
  }

  /**
   * Finds a stored attachment of a conversation and reads it (in the staging directory while
   * the conversation is staged).
   * @returns undefined when the id is malformed or names nothing in that conversation
   */
  read(conversationId: string, attachmentId: string): { attachment: Attachment; bytes: Uint8Array } | undefined {
    if (!ATTACHMENT_ID_PATTERN.test(attachmentId)) return undefined;
    // Both places are looked at, the likelier first: a commit may move the file in between.
    const places = this.isStaged(conversationId) ? [this.stagingDirectory(conversationId), this.directory(conversationId)] : [this.directory(conversationId), this.stagingDirectory(conversationId)];
    for (const directory of places) {
      let names: string[];
      try {
        names = readdirSync(directory);
      } catch {
        continue;
      }
      const fileName = names.find((entry) => entry.startsWith(`${attachmentId}-`));
      if (fileName === undefined) continue;
      let bytes: Uint8Array;
      try {
        bytes = readFileSync(path.join(directory, fileName));
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      return { attachment: { id: attachmentId, name: fileName.slice(attachmentId.length + 1), mediaType: attachmentMediaType(bytes), size: bytes.byteLength, path: `${ATTACHMENTS_DIRECTORY}/${fileName}` }, bytes };
    }
    return undefined;
  }
}
