/**
 * The conversation archive: one conversation as a self-contained JSON Lines file (what
 * `openvaala export` writes and `openvaala import` reads; format in docs/storage.md, "Export
 * and import"). It holds every entry of the conversation's logs (SPEC §4: `metadata.jsonl`
 * and one stream per session) with their seqs, and its stored attachments.
 *
 * ```
 * {"type":"manifest","format":"openvaala.conversation-archive","version":1,"conversationId":…,"exportedAt":…,"streams":{"metadata":3,"sess_…":12},"attachments":1}
 * {"type":"entry","stream":"metadata","seq":1,"value":{…}}
 * …
 * {"type":"attachment","name":"att_…-notes.txt","size":42,"sha256":"…","data":"<base64>"}
 * {"type":"end","lines":17}
 * ```
 *
 * Parsing checks everything before anything is written: a wrong format or version, a line
 * that is not JSON, a field of the wrong shape (named by its key path), an entry that does not
 * match the metadata or item schema, seqs out of order, counts that disagree with the manifest,
 * and a missing `end` line (a truncated file) are all refused with the line number.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ItemSchema } from '../protocol/index.js';
import { METADATA_STREAM, MetadataEntrySchema } from './metadata-log.js';
import { jsonSyntaxProblem } from '../printable-text.js';
import { explainIssue } from '../validation-issues.js';
import { formatKeyPath } from '../key-path.js';

/** `format` of the manifest line. */
export const ARCHIVE_FORMAT = 'openvaala.conversation-archive';
/** The archive version this code writes and reads. */
export const ARCHIVE_VERSION = 1;

/** Ids that name files and log paths: the runtime's `<prefix>_<letters and digits>` (SPEC §3). */
const conversationIdField = z.string().regex(/^conv_[0-9A-Za-z]{1,64}$/, { message: 'not a conversation id (expected conv_ followed by letters and digits)' });
const streamField = z.union([z.literal(METADATA_STREAM), z.string().regex(/^sess_[0-9A-Za-z]{1,64}$/, { message: 'not "metadata" or a session id (sess_ followed by letters and digits)' })]);
/** `<attachment-id>-<name>` as the attachment store names its files; no path separators. */
const attachmentNameField = z.string().regex(/^att_[0-9A-Za-z]{1,64}-[^/\\\0]{1,200}$/, { message: 'not an attachment file name (att_<id>-<name>, no / or \\)' });

const ManifestLineSchema = z.object({
  type: z.literal('manifest'),
  format: z.literal(ARCHIVE_FORMAT),
  version: z.number().int().positive(),
  conversationId: conversationIdField,
  /** When the archive was written, ms since the epoch. */
  exportedAt: z.number(),
  /** The OpenVaala version that wrote it (informational). */
  openvaalaVersion: z.string().optional(),
  /** Where the conversation came from when it was converted (`codex`), informational. */
  source: z.string().optional(),
  /** Entries per stream. */
  streams: z.record(z.string(), z.number().int().nonnegative()),
  /** Number of attachment lines. */
  attachments: z.number().int().nonnegative(),
});
/** The first line of an archive. */
export type ArchiveManifest = z.infer<typeof ManifestLineSchema>;

const EntryLineSchema = z.object({ type: z.literal('entry'), stream: streamField, seq: z.number().int().positive(), value: z.unknown() });
const AttachmentLineSchema = z.object({
  type: z.literal('attachment'),
  name: attachmentNameField,
  /** Bytes. */
  size: z.number().int().nonnegative(),
  /** Hex SHA-256 of the bytes. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The bytes, base64. */
  data: z.string(),
});
const EndLineSchema = z.object({ type: z.literal('end'), lines: z.number().int().positive() });

/** A stored attachment file of a conversation. */
export interface ArchiveAttachment {
  /** File name in `conversations/<id>/attachments/`: `<attachment-id>-<name>`. */
  name: string;
  bytes: Uint8Array;
}

/** One conversation's logs and files, in memory. */
export interface ConversationArchive {
  conversationId: string;
  exportedAt: number;
  openvaalaVersion?: string;
  source?: string;
  /** Every stream with its entries in seq order; `metadata` first. */
  streams: { stream: string; entries: { seq: number; value: unknown }[] }[];
  attachments: ArchiveAttachment[];
}

/** An archive that cannot be read: the message names the line and the field at fault. */
export class ArchiveFormatError extends Error {
  constructor(
    message: string,
    /** 1-based line number, when one line is at fault. */
    readonly line?: number,
  ) {
    super(line === undefined ? message : `line ${line}: ${message}`);
    this.name = 'ArchiveFormatError';
  }
}

/** At most three of a line's problems, each at its key path (in the words of `validation-issues.ts`). */
function describeIssues(error: z.ZodError, prefix: string, value: unknown): string {
  return error.issues
    .flatMap((issue) => explainIssue(issue, { root: value }))
    .slice(0, 3)
    .map((issue) => `${formatKeyPath(issue.keyPath, prefix) || '(line)'}: ${issue.message}`)
    .join('; ');
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Writes an archive as JSON Lines text (UTF-8, one `\n` after each line).
 * @throws Error when the archive has no metadata stream
 */
export function serializeArchive(archive: ConversationArchive): string {
  if (!archive.streams.some((stream) => stream.stream === METADATA_STREAM)) throw new Error(`conversation ${archive.conversationId} has no metadata stream`);
  const ordered = [...archive.streams].sort((left, right) => (left.stream === METADATA_STREAM ? -1 : right.stream === METADATA_STREAM ? 1 : 0));
  const manifest: ArchiveManifest = {
    type: 'manifest',
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    conversationId: archive.conversationId,
    exportedAt: archive.exportedAt,
    ...(archive.openvaalaVersion !== undefined ? { openvaalaVersion: archive.openvaalaVersion } : {}),
    ...(archive.source !== undefined ? { source: archive.source } : {}),
    streams: Object.fromEntries(ordered.map((stream) => [stream.stream, stream.entries.length])),
    attachments: archive.attachments.length,
  };
  const lines = [JSON.stringify(manifest)];
  for (const { stream, entries } of ordered) {
    for (const entry of entries) lines.push(JSON.stringify({ type: 'entry', stream, seq: entry.seq, value: entry.value }));
  }
  for (const attachment of archive.attachments) {
    lines.push(JSON.stringify({ type: 'attachment', name: attachment.name, size: attachment.bytes.byteLength, sha256: sha256(attachment.bytes), data: Buffer.from(attachment.bytes).toString('base64') }));
  }
  lines.push(JSON.stringify({ type: 'end', lines: lines.length }));
  return `${lines.join('\n')}\n`;
}

function parseLine(text: string, line: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ArchiveFormatError(`not valid JSON (${jsonSyntaxProblem(error)})`, line);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ArchiveFormatError('not a JSON object', line);
  return value as Record<string, unknown>;
}

function checked<T>(schema: z.ZodType<T>, value: unknown, line: number, prefix = ''): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ArchiveFormatError(describeIssues(parsed.error, prefix, value), line);
  return parsed.data;
}

/**
 * Reads and checks a whole archive. Entry values are checked against the metadata entry
 * schema (`metadata` stream) or the item schema (session streams) but returned exactly as
 * written, so an import stores the same values the export read.
 * @throws ArchiveFormatError naming the line and the field at fault
 */
export function parseArchive(text: string): ConversationArchive {
  const lines = text.split('\n');
  // A file written by serializeArchive ends with "\n"; anything after the last one is a torn line.
  if (lines.at(-1) === '') lines.pop();
  if (lines.length === 0) throw new ArchiveFormatError('the archive is empty');
  const first = parseLine(lines[0] as string, 1);
  if (first.type !== 'manifest') throw new ArchiveFormatError('the first line must be the manifest ({"type":"manifest",…}); this is not a conversation archive', 1);
  if (first.format !== ARCHIVE_FORMAT) throw new ArchiveFormatError(`format: expected "${ARCHIVE_FORMAT}", got ${JSON.stringify(first.format)}`, 1);
  if (first.version !== ARCHIVE_VERSION) throw new ArchiveFormatError(`version: this OpenVaala reads archive version ${ARCHIVE_VERSION}, the file is version ${JSON.stringify(first.version)}`, 1);
  const manifest = checked(ManifestLineSchema, first, 1);
  const streams = new Map<string, { seq: number; value: unknown }[]>();
  const attachments: ArchiveAttachment[] = [];
  let ended = false;
  for (let index = 1; index < lines.length; index += 1) {
    const number = index + 1;
    if (ended) throw new ArchiveFormatError('text after the end line', number);
    const line = parseLine(lines[index] as string, number);
    if (line.type === 'entry') {
      const entry = checked(EntryLineSchema, line, number);
      if (attachments.length > 0) throw new ArchiveFormatError('entry lines must come before attachment lines', number);
      if (entry.stream === METADATA_STREAM) checked(MetadataEntrySchema, entry.value, number, 'value');
      else checked(ItemSchema, entry.value, number, 'value');
      const list = streams.get(entry.stream) ?? [];
      const previous = list.at(-1)?.seq ?? 0;
      if (entry.seq <= previous) throw new ArchiveFormatError(`seq: ${entry.seq} does not follow seq ${previous} of stream "${entry.stream}"`, number);
      list.push({ seq: entry.seq, value: entry.value });
      streams.set(entry.stream, list);
    } else if (line.type === 'attachment') {
      const attachment = checked(AttachmentLineSchema, line, number);
      const bytes = Buffer.from(attachment.data, 'base64');
      if (bytes.byteLength !== attachment.size) throw new ArchiveFormatError(`data: holds ${bytes.byteLength} bytes, size says ${attachment.size}`, number);
      if (sha256(bytes) !== attachment.sha256) throw new ArchiveFormatError('data: the bytes do not match sha256', number);
      attachments.push({ name: attachment.name, bytes });
    } else if (line.type === 'end') {
      const end = checked(EndLineSchema, line, number);
      if (end.lines !== index) throw new ArchiveFormatError(`lines: the end line counts ${end.lines} lines before it, the file has ${index}`, number);
      ended = true;
    } else {
      throw new ArchiveFormatError(`type: expected "entry", "attachment" or "end", got ${JSON.stringify(line.type)}`, number);
    }
  }
  if (!ended) throw new ArchiveFormatError(`the archive is truncated: no end line after line ${lines.length} (expected ${1 + Object.values(manifest.streams).reduce((sum, count) => sum + count, 0) + manifest.attachments} lines and an end line)`);
  for (const [stream, count] of Object.entries(manifest.streams)) {
    const found = streams.get(stream)?.length ?? 0;
    if (found !== count) throw new ArchiveFormatError(`manifest streams.${stream}: says ${count} entries, the archive holds ${found}`, 1);
  }
  for (const stream of streams.keys()) {
    if (!(stream in manifest.streams)) throw new ArchiveFormatError(`manifest streams: stream "${stream}" has entries but is not listed`, 1);
  }
  if (attachments.length !== manifest.attachments) throw new ArchiveFormatError(`manifest attachments: says ${manifest.attachments}, the archive holds ${attachments.length}`, 1);
  if (!streams.has(METADATA_STREAM)) throw new ArchiveFormatError('the archive has no metadata entries', 1);
  return {
    conversationId: manifest.conversationId,
    exportedAt: manifest.exportedAt,
    ...(manifest.openvaalaVersion !== undefined ? { openvaalaVersion: manifest.openvaalaVersion } : {}),
    ...(manifest.source !== undefined ? { source: manifest.source } : {}),
    streams: [...streams].map(([stream, entries]) => ({ stream, entries })),
    attachments,
  };
}
