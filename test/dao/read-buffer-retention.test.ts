/**
 * The whole-file reads of the log loader reuse one buffer, but never keep one larger than
 * RETAINED_READ_BUFFER_BYTES: a server that once read a large session log (a long answer)
 * must not hold that many bytes for the rest of its life (issue 12, "buffers released after
 * big outputs").
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { RETAINED_READ_BUFFER_BYTES, retainedReadBufferBytes, scanStreamFile } from '../../src/dao/jsonl-file-reader.js';

let root: string;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-read-buffer-'));
  fs.mkdirSync(path.join(root, 'conversations', 'conv_1'), { recursive: true });
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

/** Writes a session log of one assistant message of `characters` letters; returns its size in bytes. */
function writeSessionLog(stream: string, characters: number): number {
  const item = { kind: 'assistant_message', id: `item_${stream}`, sessionId: stream, turnId: 'turn_1', text: 'a'.repeat(characters), createdAt: 1 };
  const line = `${JSON.stringify({ seq: 1, at: 1, value: item })}\n`;
  fs.writeFileSync(path.join(root, 'conversations', 'conv_1', `${stream}.jsonl`), line);
  return Buffer.byteLength(line);
}

it('reads a log larger than the retained size whole, and keeps no buffer of its size afterwards', () => {
  writeSessionLog('sess_small', 1000);
  const small = scanStreamFile(root, 'conversations/conv_1', 'sess_small');
  expect(small?.texts).toEqual(['a'.repeat(1000)]);
  const kept = retainedReadBufferBytes();
  expect(kept).toBeGreaterThan(1000);

  const bytes = writeSessionLog('sess_large', 3 * RETAINED_READ_BUFFER_BYTES);
  expect(bytes).toBeGreaterThan(RETAINED_READ_BUFFER_BYTES);
  const large = scanStreamFile(root, 'conversations/conv_1', 'sess_large');
  expect(large?.texts[0]?.length).toBe(3 * RETAINED_READ_BUFFER_BYTES);
  expect(retainedReadBufferBytes()).toBe(kept);

  // The shared buffer grows for files up to the retained size, and stops there.
  writeSessionLog('sess_medium', RETAINED_READ_BUFFER_BYTES - 200);
  expect(scanStreamFile(root, 'conversations/conv_1', 'sess_medium')?.texts[0]?.length).toBe(RETAINED_READ_BUFFER_BYTES - 200);
  expect(retainedReadBufferBytes()).toBeLessThanOrEqual(RETAINED_READ_BUFFER_BYTES);
  expect(retainedReadBufferBytes()).toBeGreaterThan(RETAINED_READ_BUFFER_BYTES - 200);
});
