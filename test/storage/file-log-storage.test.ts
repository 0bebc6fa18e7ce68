/**
 * FileLogStorage specifics beyond the conformance suite: the on-disk format, reopening,
 * reads that touch only the end of the file, directory handling and descriptor limits.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogProblem } from '../../src/storage/log-storage.js';

let directory: string;
let problems: LogProblem[];
const open: FileLogStorage[] = [];

function storage(options: { maximumOpenFiles?: number } = {}): FileLogStorage {
  const created = new FileLogStorage(directory, { ...options, onProblem: (problem) => problems.push(problem) });
  open.push(created);
  return created;
}

beforeEach(() => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-file-log-'));
  problems = [];
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((each) => each.close()));
  fs.rmSync(directory, { recursive: true, force: true });
});

/** Counts the bytes `fs.read` is asked for while `action` runs. */
async function bytesReadDuring(action: () => Promise<unknown>): Promise<number> {
  let total = 0;
  const original = fs.read;
  const spy = vi.spyOn(fs, 'read').mockImplementation(((...args: unknown[]) => {
    total += args[3] as number;
    return (original as (...inner: unknown[]) => void)(...args);
  }) as typeof fs.read);
  try {
    await action();
  } finally {
    spy.mockRestore();
  }
  return total;
}

describe('FileLogStorage on disk', () => {
  it('writes one JSON line per entry, {"seq":N,"value":V}, in <root>/<path>/<stream>.jsonl', async () => {
    const logs = storage();
    await logs.append('conversations/conv_1', 'metadata', [{ a: 1 }, 'two']);
    await logs.append('conversations/conv_1', 'metadata', [[3]]);
    const file = path.join(directory, 'conversations', 'conv_1', 'metadata.jsonl');
    expect(logs.streamFilePath('conversations/conv_1', 'metadata')).toBe(file);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"seq":1,"value":{"a":1}}\n{"seq":2,"value":"two"}\n{"seq":3,"value":[3]}\n');
  });

  it('continues a stream after reopening, with the same entries', async () => {
    const first = storage();
    await first.append('p', 's', [1, 2, 3]);
    await first.close();
    const second = storage();
    expect(await second.lastSeq('p', 's')).toBe(3);
    expect(await second.append('p', 's', [4])).toEqual([{ seq: 4, value: 4 }]);
    expect((await second.read('p', 's')).map((entry) => entry.value)).toEqual([1, 2, 3, 4]);
    expect(problems).toEqual([]);
  });

  it('removes directories left empty by deletions, never the root', async () => {
    const logs = storage();
    await logs.append('a/b/c', 's', [1]);
    await logs.append('a', 's', [1]);
    await logs.deleteStream('a/b/c', 's');
    expect(fs.existsSync(path.join(directory, 'a', 'b'))).toBe(false);
    expect(fs.existsSync(path.join(directory, 'a', 's.jsonl'))).toBe(true);
    await logs.deletePath('a');
    expect(fs.readdirSync(directory)).toEqual([]);
    await logs.append('x', 's', [1]);
    await logs.deletePath('');
    expect(fs.existsSync(directory)).toBe(true);
    expect(fs.readdirSync(directory)).toEqual([]);
  });

  it('lists only stream files and directories with valid names', async () => {
    const logs = storage();
    await logs.append('p', 'real', [1]);
    fs.writeFileSync(path.join(directory, 'p', 'notes.txt'), 'x');
    fs.mkdirSync(path.join(directory, 'p', 'child.jsonl'));
    expect(await logs.listStreams('p')).toEqual(['real']);
    fs.mkdirSync(path.join(directory, 'p', 'child'));
    expect(await logs.listPaths('p')).toEqual(['child']);
  });

  it('creates nothing on disk for reads, listings and empty appends', async () => {
    const logs = storage();
    await logs.read('a/b', 's');
    await logs.lastSeq('a/b', 's');
    await logs.listPaths('a');
    await logs.append('a/b', 's', []);
    expect(fs.readdirSync(directory)).toEqual([]);
  });

  it('works with more streams than open descriptors allowed', async () => {
    const logs = storage({ maximumOpenFiles: 2 });
    const streams = Array.from({ length: 12 }, (_, index) => `s${index}`);
    for (let round = 1; round <= 3; round += 1) {
      await Promise.all(streams.map((stream) => logs.append('many', stream, [{ stream, round }])));
      await Promise.all(streams.map(async (stream) => expect((await logs.read('many', stream)).length).toBe(round)));
    }
    expect(await logs.listStreams('many')).toHaveLength(12);
  });

  it('keeps what it knows of a stream file only while the file stays open', async () => {
    const logs = storage({ maximumOpenFiles: 2 });
    const cachedFiles = (): string[] => (logs as unknown as { states: { cachedFiles(): string[] } }).states.cachedFiles();
    const streams = Array.from({ length: 50 }, (_, index) => `s${index}`);
    for (const stream of streams) await logs.append('many', stream, [{ stream }]);
    // Two idle files stay open, and one more while the last append held it.
    expect(cachedFiles().length).toBeLessThanOrEqual(3);
    // Read again from each file's tail: appends go on numbering where the file ends.
    for (const stream of streams) expect((await logs.append('many', stream, [{ again: stream }])).map((entry) => entry.seq)).toEqual([2]);
    expect(await logs.read('many', 's0')).toEqual([
      { seq: 1, value: { stream: 's0' } },
      { seq: 2, value: { again: 's0' } },
    ]);
    expect(cachedFiles().length).toBeLessThanOrEqual(3);
  });
});

describe('FileLogStorage reads touch only what they need', () => {
  const count = 20_000;

  beforeEach(async () => {
    const writer = storage();
    for (let start = 1; start <= count; start += 2000) {
      await writer.append('big', 'main', Array.from({ length: 2000 }, (_, index) => ({ n: start + index, text: `entry ${start + index}`.padEnd(60 + ((start + index) % 50), '.') })));
    }
    await writer.close();
  });

  it('reads the last entries and cursors near the end without scanning the file', async () => {
    const size = fs.statSync(path.join(directory, 'big', 'main.jsonl')).size;
    const logs = storage();
    let entries: { seq: number }[] = [];
    const tail = await bytesReadDuring(async () => {
      entries = await logs.read('big', 'main', { direction: 'backward', limit: 100 });
    });
    expect(entries.map((entry) => entry.seq)).toEqual(Array.from({ length: 100 }, (_, index) => count - index));
    expect(tail).toBeLessThan(size / 10);
    const nearEnd = await bytesReadDuring(async () => {
      entries = await logs.read('big', 'main', { after: count - 10 });
    });
    expect(entries.map((entry) => entry.seq)).toEqual(Array.from({ length: 10 }, (_, index) => count - 9 + index));
    expect(nearEnd).toBeLessThan(size / 4);
    const middle = await bytesReadDuring(async () => {
      entries = await logs.read('big', 'main', { after: count / 2, limit: 3 });
    });
    expect(entries.map((entry) => entry.seq)).toEqual([count / 2 + 1, count / 2 + 2, count / 2 + 3]);
    expect(middle).toBeLessThan(size / 4);
    const backwardMiddle = await bytesReadDuring(async () => {
      entries = await logs.read('big', 'main', { direction: 'backward', before: 7001, limit: 2 });
    });
    expect(entries.map((entry) => entry.seq)).toEqual([7000, 6999]);
    expect(backwardMiddle).toBeLessThan(size / 4);
  });

  it('finds every cursor correctly on a freshly opened stream', async () => {
    for (const after of [0, 1, 2, 1999, 2000, 2001, 4096, 9999, 12345, 19998, 19999, 20000]) {
      const logs = storage();
      const page = await logs.read<{ n: number }>('big', 'main', { after, limit: 3 });
      const expected = [after + 1, after + 2, after + 3].filter((seq) => seq <= count);
      expect(page.map((entry) => entry.seq), `after ${after}`).toEqual(expected);
      expect(page.every((entry) => entry.value.n === entry.seq)).toBe(true);
      const back = await logs.read('big', 'main', { direction: 'backward', before: after + 1, limit: 3 });
      expect(back.map((entry) => entry.seq), `before ${after + 1}`).toEqual([after, after - 1, after - 2].filter((seq) => seq >= 1));
      await logs.close();
    }
  });
});
