/**
 * A read racing a stream's replacement (a rewind) or deletion must never leave the storage
 * serving the old file: once `replaceStream` or `deleteStream` has resolved, every read sees
 * the new content (or nothing). Two windows are covered, each made deterministic by holding
 * a file-system call: a read that opens the file between the drop of the cached descriptors
 * and the rename, and a read whose open of the old file completes only after the whole
 * replacement or deletion. Either used to pin the old file's descriptor and cached state in
 * the pool, so reads returned the items a rewind had dropped, indefinitely.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';

let directory: string;
const open: FileLogStorage[] = [];

function storage(): FileLogStorage {
  const created = new FileLogStorage(directory);
  open.push(created);
  return created;
}

beforeEach(() => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-replace-race-'));
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((each) => each.close()));
  fs.rmSync(directory, { recursive: true, force: true });
});

const values = (entries: { value: unknown }[]): unknown[] => entries.map((entry) => entry.value);

/** A storage over a stream written by an earlier instance (so no descriptor of it is pooled yet). */
async function writtenStream(): Promise<{ logs: FileLogStorage; file: string }> {
  const writer = new FileLogStorage(directory);
  await writer.append('conversations/c1', 'sess_1', ['one', 'two', 'three']);
  await writer.close();
  const logs = storage();
  return { logs, file: logs.streamFilePath('conversations/c1', 'sess_1') };
}

it('a read opening the file while it is being replaced leaves no stale descriptor behind', async () => {
  const { logs, file } = await writtenStream();
  const rename = fs.promises.rename.bind(fs.promises);
  let readDuringReplace: unknown[] | undefined;
  vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
    if (to === file) readDuringReplace = values(await logs.read('conversations/c1', 'sess_1'));
    return rename(from, to);
  });
  await logs.replaceStream('conversations/c1', 'sess_1', ['one']);
  expect(readDuringReplace).toEqual(['one', 'two', 'three']);
  expect(values(await logs.read('conversations/c1', 'sess_1'))).toEqual(['one']);
  expect(await logs.lastSeq('conversations/c1', 'sess_1')).toBe(1);
  await logs.append('conversations/c1', 'sess_1', ['four']);
  expect(values(await logs.read('conversations/c1', 'sess_1'))).toEqual(['one', 'four']);
});

/** Holds the completion of the next open of `file` for reading and writing until `release` is called. */
function holdNextOpen(file: string): { opened: Promise<void>; release: () => void } {
  const original = fs.open.bind(fs) as (...args: unknown[]) => void;
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let opened: () => void = () => undefined;
  const openedPromise = new Promise<void>((resolve) => (opened = resolve));
  let holding = true;
  vi.spyOn(fs, 'open').mockImplementation(((...args: unknown[]) => {
    const callback = args.at(-1) as (error: Error | null, fd?: number) => void;
    if (!holding || args[0] !== file || args[1] !== (fs.constants.O_RDWR | fs.constants.O_NONBLOCK)) return original(...args);
    holding = false;
    original(...args.slice(0, -1), (error: Error | null, fd?: number) => {
      opened();
      held.then(() => callback(error, fd)).catch(() => undefined);
    });
  }) as typeof fs.open);
  return { opened: openedPromise, release };
}

it('a read whose open of the old file completes after the replacement does not pin the old file', async () => {
  const { logs, file } = await writtenStream();
  const hold = holdNextOpen(file);
  const slowRead = logs.read('conversations/c1', 'sess_1');
  await hold.opened;
  await logs.replaceStream('conversations/c1', 'sess_1', ['one']);
  hold.release();
  // It began before the replacement and may see either file; what follows must see the new one.
  expect([['one', 'two', 'three'], ['one']]).toContainEqual(values(await slowRead));
  expect(values(await logs.read('conversations/c1', 'sess_1'))).toEqual(['one']);
  expect(await logs.lastSeq('conversations/c1', 'sess_1')).toBe(1);
});

it('a read whose open of the file completes after its deletion does not bring it back', async () => {
  const { logs, file } = await writtenStream();
  const hold = holdNextOpen(file);
  const slowRead = logs.read('conversations/c1', 'sess_1');
  await hold.opened;
  await logs.deleteStream('conversations/c1', 'sess_1');
  hold.release();
  await slowRead;
  expect(await logs.read('conversations/c1', 'sess_1')).toEqual([]);
  expect(await logs.lastSeq('conversations/c1', 'sess_1')).toBe(0);
  await logs.append('conversations/c1', 'sess_1', ['new']);
  expect(await logs.read('conversations/c1', 'sess_1')).toEqual([{ seq: 1, value: 'new' }]);
});

it('a read opening the file while it is being deleted leaves no stale descriptor behind', async () => {
  const { logs, file } = await writtenStream();
  const unlink = fs.promises.unlink.bind(fs.promises);
  vi.spyOn(fs.promises, 'unlink').mockImplementation(async (target) => {
    if (target === file) await logs.read('conversations/c1', 'sess_1');
    return unlink(target);
  });
  await logs.deleteStream('conversations/c1', 'sess_1');
  expect(await logs.read('conversations/c1', 'sess_1')).toEqual([]);
  expect(await logs.lastSeq('conversations/c1', 'sess_1')).toBe(0);
});

it('a read whose open of a file completes after the deletion of its path does not bring it back', async () => {
  const { logs, file } = await writtenStream();
  const hold = holdNextOpen(file);
  const slowRead = logs.read('conversations/c1', 'sess_1');
  await hold.opened;
  await logs.deletePath('conversations/c1');
  hold.release();
  await slowRead;
  expect(await logs.read('conversations/c1', 'sess_1')).toEqual([]);
  expect(await logs.listStreams('conversations/c1')).toEqual([]);
});
