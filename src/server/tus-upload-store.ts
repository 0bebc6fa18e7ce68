/**
 * Where resumable uploads (tus 1.0.0, https://tus.io/protocols/resumable-upload) keep their
 * bytes until they are complete: `<dataDir>/uploads/<upload-id>` holds the data received so
 * far and `<upload-id>.json` what the creation said (length, metadata, conversation, file name)
 * and, once finished, which attachment it became. The offset a client resumes from is the data
 * file's size, so whatever reached the disk before a connection was cut is kept. A data store of
 * `@tus/server`: the protocol handling (headers, offsets, locks) is that library's.
 */
import { createWriteStream } from 'node:fs';
import { open, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { DataStore, ERRORS, Upload } from '@tus/server';
import { z } from 'zod';

import { TUS_UPLOADS_DIRECTORY } from './tus-upload-paths.js';
import { makeDirectory } from '../make-directory.js';
import { jsonSyntaxProblem } from '../printable-text.js';
import { formatKeyPath } from '../key-path.js';

export { TUS_UPLOADS_DIRECTORY } from './tus-upload-paths.js';
/** An upload id: 32 lowercase hex digits (128 random bits), the last segment of its URL. */
export const TUS_UPLOAD_ID_PATTERN = /^[0-9a-f]{32}$/;

/** What is kept about one upload besides its bytes (`<upload-id>.json`). */
export interface TusUploadInfo {
  id: string;
  /** Declared length, bytes; absent while deferred (`Upload-Defer-Length: 1`). */
  size?: number;
  /** The creation's `Upload-Metadata`, decoded (plus `attachmentId` and `workspacePath` once finished). */
  metadata: Record<string, string | null>;
  /** The conversation the upload is for (from the metadata, checked at creation). */
  conversationId: string;
  /** The sanitised file name. */
  name: string;
  /** Creation time, ISO 8601. */
  createdAt: string;
  /** Set once the file was handed to its conversation: it is then complete and its data file removed. */
  finished?: { attachmentId: string; workspacePath: string | null };
}

/** The shape of `<upload-id>.json`, checked when it is read: the file may have been damaged or edited. */
const TusUploadInfoSchema = z.object({
  id: z.string().regex(TUS_UPLOAD_ID_PATTERN),
  size: z.number().int().nonnegative().optional(),
  metadata: z.record(z.string(), z.string().nullable()),
  conversationId: z.string().min(1),
  name: z.string().min(1),
  createdAt: z.string(),
  finished: z.object({ attachmentId: z.string().min(1), workspacePath: z.string().nullable() }).optional(),
});

/**
 * An upload's record (`<upload-id>.json`) that is not JSON or not of the shape written: the
 * upload cannot be resumed or handed over. Nothing is removed; the sweep of old uploads takes
 * it in time.
 */
export class DamagedUploadRecordError extends Error {
  /**
   * @param file the record's path
   * @param problem what is wrong, with the key path when the shape is wrong
   */
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`upload record ${file} is damaged: ${problem}`);
    this.name = 'DamagedUploadRecordError';
  }
}

/** Parses a record's text. @throws DamagedUploadRecordError naming the file and the problem */
function parseUploadInfo(text: string, file: string, id: string): TusUploadInfo {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DamagedUploadRecordError(file, `not JSON (${jsonSyntaxProblem(error)})`);
  }
  const parsed = TusUploadInfoSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? formatKeyPath(issue.path) : '(the whole record)';
    throw new DamagedUploadRecordError(file, `${where}: ${issue?.message ?? 'not an upload record'}`);
  }
  if (parsed.data.id !== id) throw new DamagedUploadRecordError(file, `id: ${JSON.stringify(parsed.data.id)} is not the upload's id ${id}`);
  return parsed.data as TusUploadInfo;
}

/** A new random upload id (see `TUS_UPLOAD_ID_PATTERN`). */
export function newUploadId(): string {
  return randomBytes(16).toString('hex');
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * The tus data store of the server (extensions `creation`, `creation-with-upload`,
 * `creation-defer-length`, `termination`). Ids are checked against `TUS_UPLOAD_ID_PATTERN`
 * before any path is made from them, so an id can never name a file outside the directory.
 */
export class TusUploadStore extends DataStore {
  /** `<dataDir>/uploads`. */
  readonly directory: string;

  /** @param dataDir the server's data directory */
  constructor(dataDir: string) {
    super();
    this.directory = path.join(dataDir, TUS_UPLOADS_DIRECTORY);
    this.extensions = ['creation', 'creation-with-upload', 'creation-defer-length', 'termination'];
  }

  private dataFile(id: string): string {
    return path.join(this.directory, id);
  }

  private infoFile(id: string): string {
    return path.join(this.directory, `${id}.json`);
  }

  /**
   * What is known about an upload.
   * @returns undefined for a malformed id or one that names no upload
   * @throws DamagedUploadRecordError when its record is not JSON or not of the shape written
   * @throws Error when its record cannot be read
   */
  async info(id: string): Promise<TusUploadInfo | undefined> {
    if (!TUS_UPLOAD_ID_PATTERN.test(id)) return undefined;
    let text: string;
    try {
      text = await readFile(this.infoFile(id), 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    return parseUploadInfo(text, this.infoFile(id), id);
  }

  /**
   * Creates an upload (tus `creation`): an empty data file and its record. `upload.metadata`
   * must already carry `conversationId` and the sanitised `filename` (checked by `onUploadCreate`).
   * @throws Error from the file system; nothing is left behind then
   */
  override async create(upload: Upload): Promise<Upload> {
    if (!TUS_UPLOAD_ID_PATTERN.test(upload.id)) throw ERRORS.FILE_NOT_FOUND;
    await makeDirectory(this.directory, 0o700);
    const metadata = upload.metadata ?? {};
    const info: TusUploadInfo = {
      id: upload.id,
      ...(upload.size !== undefined ? { size: upload.size } : {}),
      metadata,
      conversationId: metadata.conversationId ?? '',
      name: metadata.filename ?? '',
      createdAt: new Date().toISOString(),
    };
    upload.creation_date = info.createdAt;
    try {
      // `wx`: an id already in use (128 random bits make it unlikely) is never reused.
      await writeFile(this.dataFile(upload.id), new Uint8Array(0), { flag: 'wx', mode: 0o600 });
      await writeFile(this.infoFile(upload.id), JSON.stringify(info), { flag: 'wx', mode: 0o600 });
    } catch (error) {
      await this.remove(upload.id).catch(() => undefined);
      throw error;
    }
    return upload;
  }

  /**
   * The upload as tus sees it: the offset is the data file's size (the declared size once finished).
   * @throws the tus 404 error when there is no such upload
   */
  override async getUpload(id: string): Promise<Upload> {
    const info = await this.info(id);
    if (!info) throw ERRORS.FILE_NOT_FOUND;
    let offset: number;
    if (info.finished) {
      offset = info.size ?? 0;
    } else {
      try {
        offset = (await stat(this.dataFile(id))).size;
      } catch (error) {
        if (isMissing(error)) throw ERRORS.FILE_NOT_FOUND;
        throw error;
      }
    }
    return new Upload({ id, offset, metadata: info.metadata, creation_date: info.createdAt, storage: { type: 'file', path: this.dataFile(id) }, ...(info.size !== undefined ? { size: info.size } : {}) });
  }

  /**
   * Appends a request's bytes at `offset` (tus has checked it equals the current size) and
   * flushes them; bytes received before the stream ends or breaks are kept.
   * @returns the new offset, bytes
   * @throws the tus 404 error when the upload is gone or already finished
   */
  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const info = await this.info(id);
    if (!info || info.finished) throw ERRORS.FILE_NOT_FOUND;
    const file = createWriteStream(this.dataFile(id), { flags: 'r+', start: offset });
    await pipeline(stream, file);
    const handle = await open(this.dataFile(id), 'r+');
    try {
      await handle.sync();
      return (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  }

  /** Records the length of a deferred-length upload once the client tells it (tus `creation-defer-length`). */
  override async declareUploadLength(id: string, size: number): Promise<void> {
    const info = await this.info(id);
    if (!info) throw ERRORS.FILE_NOT_FOUND;
    await this.saveInfo({ ...info, size });
  }

  /** The complete data of an upload (read once, to hand it to its conversation). */
  async readData(id: string): Promise<Uint8Array> {
    if (!TUS_UPLOAD_ID_PATTERN.test(id)) throw ERRORS.FILE_NOT_FOUND;
    return readFile(this.dataFile(id));
  }

  /**
   * Marks an upload finished: its record keeps the attachment it became (a later HEAD shows it in
   * `Upload-Metadata`) and its data file is removed.
   */
  async markFinished(id: string, finished: NonNullable<TusUploadInfo['finished']>): Promise<void> {
    const info = await this.info(id);
    if (!info) throw ERRORS.FILE_NOT_FOUND;
    const metadata = { ...info.metadata, attachmentId: finished.attachmentId, ...(finished.workspacePath !== null ? { workspacePath: finished.workspacePath } : {}) };
    await this.saveInfo({ ...info, metadata, finished });
    await rm(this.dataFile(id), { force: true });
  }

  /** Removes an upload's data and record (tus `termination`); a no-op for one already gone. */
  override async remove(id: string): Promise<void> {
    if (!TUS_UPLOAD_ID_PATTERN.test(id)) throw ERRORS.FILE_NOT_FOUND;
    await rm(this.dataFile(id), { force: true });
    await rm(this.infoFile(id), { force: true });
  }

  /**
   * Removes uploads, finished or not, neither created nor written to in the last `maxAgeMs`
   * (run at start and then periodically: a client resumes within minutes or hours, not days).
   * @param maxAgeMs age past which an upload goes, ms
   * @param now the current time, ms since the epoch
   * @returns how many were removed
   */
  async removeOlderThan(maxAgeMs: number, now = Date.now()): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (error) {
      if (isMissing(error)) return 0;
      throw error;
    }
    let removed = 0;
    for (const name of names) {
      const id = name.replace(/\.json$/, '');
      if (!TUS_UPLOAD_ID_PATTERN.test(id) || name === id) continue;
      const info = await this.info(id).catch(() => undefined);
      const created = info ? Date.parse(info.createdAt) : Number.NaN;
      const written = await stat(this.dataFile(id)).then((found) => found.mtimeMs, () => Number.NaN);
      const lastActive = Math.max(Number.isFinite(created) ? created : 0, Number.isFinite(written) ? written : 0);
      if (lastActive > 0 && now - lastActive <= maxAgeMs) continue;
      await this.remove(id);
      removed++;
    }
    // Data files whose record was never written (a crash between the two) go too.
    for (const name of names) {
      if (TUS_UPLOAD_ID_PATTERN.test(name) && !names.includes(`${name}.json`)) {
        await rm(this.dataFile(name), { force: true });
      }
    }
    return removed;
  }

  private async saveInfo(info: TusUploadInfo): Promise<void> {
    // Written beside and renamed over, so a crash never leaves half a record.
    const temporary = `${this.infoFile(info.id)}.${newUploadId()}.tmp`;
    await writeFile(temporary, JSON.stringify(info), { mode: 0o600 });
    await rename(temporary, this.infoFile(info.id));
  }
}
