/**
 * Names of uploaded files (docs/protocol.md, "Uploads"): a stored file is named
 * `<attachment id>-<name>`, and a file name may have at most 255 bytes, so the name is cut by
 * its UTF-8 bytes (never inside a character) to leave room for the prefix, keeping a short
 * extension. Characters outside the allowed set become `_`; a name with no letter or digit left
 * (only emoji, `..`) becomes `file`. The same for `POST /api/v1/uploads` and resumable uploads.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Upload } from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FALLBACK_FILE_NAME, sanitizeFileName } from '../../src/runtime/attachments.js';
import { rawRequest } from '../helpers/http-exchange.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

/** `att_`, a ULID (26 characters) and `-`. */
const PREFIX_BYTES = 31;
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const hasLoneSurrogate = (text: string) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe('sanitizeFileName', () => {
  it('cuts a long name by UTF-8 bytes so the stored file name fits in 255 bytes, whole characters only', () => {
    const cjk = sanitizeFileName('日'.repeat(100));
    expect(PREFIX_BYTES + bytes(cjk)).toBeLessThanOrEqual(255);
    expect(cjk).toBe('日'.repeat(Math.floor((255 - PREFIX_BYTES) / 3)));
    // Letters outside the Basic Multilingual Plane are surrogate pairs in JavaScript: never split.
    const astral = sanitizeFileName('𠀀'.repeat(150));
    expect(hasLoneSurrogate(astral)).toBe(false);
    expect(PREFIX_BYTES + bytes(astral)).toBeLessThanOrEqual(255);
    expect([...astral].every((character) => character === '𠀀')).toBe(true);
    // At most 100 characters still, for names of one byte each.
    expect(sanitizeFileName('a'.repeat(300))).toBe('a'.repeat(100));
  });

  it('keeps a short extension when it cuts', () => {
    const name = sanitizeFileName(`${'é'.repeat(200)}.txt`);
    expect(name.endsWith('.txt')).toBe(true);
    expect(PREFIX_BYTES + bytes(name)).toBeLessThanOrEqual(255);
    expect(sanitizeFileName(`${'x'.repeat(120)}.md`)).toBe(`${'x'.repeat(97)}.md`);
  });

  it('turns disallowed characters into _, and falls back to a generic name when no letter or digit is left', () => {
    expect(sanitizeFileName('😀.png')).toBe('_.png');
    expect(sanitizeFileName('report 😀 final.pdf')).toBe('report _ final.pdf');
    for (const odd of ['😀'.repeat(100), '..', '...', '/', 'a/', '---', '\u0000\u0001']) expect(sanitizeFileName(odd), JSON.stringify(odd)).toBe(FALLBACK_FILE_NAME);
    expect(FALLBACK_FILE_NAME).toBe('file');
  });
});

let harness: InProcessServer;
let conversationId: string;

beforeAll(async () => {
  harness = await startInProcessServer('responses: []\n');
  conversationId = await harness.conversation();
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

/** Where an attachment's file is while its conversation is staged (no input yet). */
const storedFile = (id: string, name: string) => path.join(harness.environment.paths.dataDir, 'staging', conversationId, `${id}-${name}`);

async function postUpload(name: string): Promise<{ status: number; body: { attachment?: { id: string; name: string }; error?: string } }> {
  const query = new URLSearchParams({ conversationId, name }).toString();
  const answer = await rawRequest(harness.server.url, `/api/v1/uploads?${query}`, { method: 'POST', headers: { authorization: `Bearer ${harness.server.token}` }, body: 'content' });
  return { status: answer.status, body: JSON.parse(answer.body) as { attachment?: { id: string; name: string }; error?: string } };
}

function tusUpload(filename: string): Promise<{ attachment: { id: string; name: string }; workspacePath: string | null }> {
  return new Promise((resolve, reject) => {
    const upload = new Upload(Buffer.from('content'), {
      endpoint: `${harness.server.url}/api/v1/uploads/tus`,
      headers: { authorization: `Bearer ${harness.server.token}` },
      metadata: { conversationId, filename },
      retryDelays: null,
      storeFingerprintForResuming: false,
      onSuccess: ({ lastResponse }) => resolve(JSON.parse(lastResponse.getBody()) as { attachment: { id: string; name: string }; workspacePath: string | null }),
      onError: reject,
    });
    upload.start();
  });
}

describe('uploaded file names', () => {
  it('POST /api/v1/uploads stores a name of 100 CJK characters, cut to fit, and an emoji-only name as "file"', async () => {
    const long = await postUpload('日'.repeat(100));
    expect(long.status, long.body.error).toBe(201);
    expect(long.body.attachment?.name).toBe(sanitizeFileName('日'.repeat(100)));
    expect(existsSync(storedFile(long.body.attachment!.id, long.body.attachment!.name))).toBe(true);
    const emoji = await postUpload('😀'.repeat(100));
    expect(emoji.status, emoji.body.error).toBe(201);
    expect(emoji.body.attachment?.name).toBe('file');
    expect(existsSync(storedFile(emoji.body.attachment!.id, 'file'))).toBe(true);
    // Bytes that are not UTF-8 decode to U+FFFD, which is no letter either.
    const answer = await rawRequest(harness.server.url, `/api/v1/uploads?conversationId=${conversationId}&name=%FF%FE`, { method: 'POST', headers: { authorization: `Bearer ${harness.server.token}` }, body: 'content' });
    expect([answer.status, (JSON.parse(answer.body) as { attachment: { name: string } }).attachment.name]).toEqual([201, 'file']);
    expect((await postUpload('')).body).toEqual({ error: 'query name: the file name is missing' });
  });

  it('resumable uploads store the same names, in the attachments and in the workspace', async () => {
    const long = await tusUpload(`${'日'.repeat(100)}.txt`);
    expect(long.attachment.name.endsWith('.txt')).toBe(true);
    expect(PREFIX_BYTES + bytes(long.attachment.name)).toBeLessThanOrEqual(255);
    expect(existsSync(storedFile(long.attachment.id, long.attachment.name))).toBe(true);
    expect(long.workspacePath).toBe(`.openvaala/attachments/${long.attachment.name}`);
    expect(existsSync(path.join(harness.environment.workDir, long.workspacePath!))).toBe(true);
    // Taken in the workspace: the numbered name still fits.
    const again = await tusUpload(`${'日'.repeat(100)}.txt`);
    expect(again.workspacePath).toBe(`.openvaala/attachments/${long.attachment.name.slice(0, -4)}-2.txt`);
    const emoji = await tusUpload('😀'.repeat(100));
    expect(emoji.attachment.name).toBe('file');
    expect(emoji.workspacePath).toBe('.openvaala/attachments/file');
  });
});
