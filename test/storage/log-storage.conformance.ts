/**
 * The LogStorage contract (SPEC §4) as a test suite: every backend must pass it unchanged.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogEntry, LogStorage } from '../../src/storage/log-storage.js';

/** A storage made for one test, with whatever must be removed after it. */
export interface StorageUnderTest<S> {
  storage: S;
  /** Called after `storage.close()`; removes temp directories, checks for leftovers. */
  cleanup?: () => Promise<void>;
}

/** Makes a fresh, empty LogStorage for each test. */
export type LogStorageFactory = () => Promise<StorageUnderTest<LogStorage>>;

function values(count: number, start = 1): { n: number }[] {
  return Array.from({ length: count }, (_, index) => ({ n: start + index }));
}

function seqs(entries: LogEntry[]): number[] {
  return entries.map((entry) => entry.seq);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, index) => from + index);
}

/** Registers the LogStorage conformance tests for one backend. */
export function runLogStorageConformance(name: string, factory: LogStorageFactory): void {
  describe(`LogStorage conformance: ${name}`, () => {
    let storage: LogStorage;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      ({ storage, cleanup } = await factory());
    });

    afterEach(async () => {
      await storage.close();
      await cleanup?.();
    });

    async function fill(path: string, stream: string, count: number): Promise<void> {
      await storage.append(path, stream, values(count));
    }

    describe('append', () => {
      it('numbers entries from 1, contiguous across batches, and returns them', async () => {
        const first = await storage.append('conv/a', 'main', [{ text: 'one' }, { text: 'two' }]);
        expect(first).toEqual([
          { seq: 1, value: { text: 'one' } },
          { seq: 2, value: { text: 'two' } },
        ]);
        const second = await storage.append('conv/a', 'main', [{ text: 'three' }]);
        expect(second).toEqual([{ seq: 3, value: { text: 'three' } }]);
        expect(await storage.lastSeq('conv/a', 'main')).toBe(3);
      });

      it('keeps a separate sequence per stream and per path', async () => {
        await fill('conv/a', 'one', 3);
        await fill('conv/a', 'two', 1);
        await fill('conv/b', 'one', 2);
        expect(await storage.lastSeq('conv/a', 'one')).toBe(3);
        expect(await storage.lastSeq('conv/a', 'two')).toBe(1);
        expect(await storage.lastSeq('conv/b', 'one')).toBe(2);
      });

      it('treats an empty batch as a no-op that creates nothing', async () => {
        expect(await storage.append('conv/empty', 'main', [])).toEqual([]);
        expect(await storage.lastSeq('conv/empty', 'main')).toBe(0);
        expect(await storage.listStreams('conv/empty')).toEqual([]);
        expect(await storage.listPaths('conv')).toEqual([]);
      });

      it('round-trips JSON values of every kind', async () => {
        const stored = [
          { text: 'line one\nline two\r\n\ttabbed "quoted" \\ back', emoji: '😀 é 中文 \u2028' },
          [1, 'two', null, true, { nested: [[]] }],
          'a plain string',
          42.5,
          -7,
          0,
          null,
          false,
          { empty: {}, list: [], deep: { a: { b: { c: [1, 2, 3] } } } },
        ];
        await storage.append('conv/kinds', 'main', stored);
        const read = await storage.read('conv/kinds', 'main');
        expect(read.map((entry) => entry.value)).toEqual(stored);
      });

      it('stores large values and large batches', async () => {
        const big = 'x'.repeat(1024 * 1024);
        await storage.append('conv/large', 'main', [{ big }]);
        await storage.append('conv/large', 'main', values(5000));
        const first = await storage.read<{ big: string }>('conv/large', 'main', { limit: 1 });
        expect(first[0]?.value.big.length).toBe(big.length);
        const last = await storage.read('conv/large', 'main', { direction: 'backward', limit: 2 });
        expect(last).toEqual([
          { seq: 5001, value: { n: 5000 } },
          { seq: 5000, value: { n: 4999 } },
        ]);
      });

      it.each([
        ['..', 'main'],
        ['conv/../x', 'main'],
        ['conv//x', 'main'],
        ['/conv', 'main'],
        ['conv/', 'main'],
        ['conv/./x', 'main'],
        ['conv/a\0b', 'main'],
        ['conv/x.jsonl', 'main'],
        ['conv', 'a/b'],
        ['conv', ''],
        ['conv', '..'],
        ['conv', '.'],
        ['conv', 'a\0b'],
      ])('rejects path %j with stream %j, naming them', async (path, stream) => {
        const error = await storage.append(path, stream, [{ n: 1 }]).then(() => undefined, (caught: Error) => caught);
        expect(error).toBeInstanceOf(Error);
        const message = (error as Error).message;
        expect(message.includes(JSON.stringify(path)) || message.includes(JSON.stringify(stream))).toBe(true);
      });

      it.each([
        ['undefined', undefined],
        ['a BigInt', 10n],
        ['a function', () => 1],
      ])('rejects a batch holding %s and writes none of it', async (_label, bad) => {
        await fill('conv/bad', 'main', 2);
        const error = await storage.append('conv/bad', 'main', [{ n: 3 }, bad]).then(() => undefined, (caught: Error) => caught);
        expect(error?.message).toMatch(/"main"/);
        expect(error?.message).toMatch(/"conv\/bad"/);
        expect(error?.message).toMatch(/entry 1/);
        expect(await storage.lastSeq('conv/bad', 'main')).toBe(2);
        expect(await storage.append('conv/bad', 'main', [{ n: 3 }])).toEqual([{ seq: 3, value: { n: 3 } }]);
      });

      it('rejects a batch with a cycle and writes none of it', async () => {
        const cyclic: { self?: unknown } = {};
        cyclic.self = cyclic;
        await expect(storage.append('conv/cycle', 'main', [cyclic])).rejects.toThrow(/entry 0/);
        expect(await storage.lastSeq('conv/cycle', 'main')).toBe(0);
      });

      it('applies concurrent appends to one stream in call order with contiguous seq', async () => {
        const sizes = Array.from({ length: 40 }, (_, index) => (index % 5) + 1);
        let next = 1;
        const batches = sizes.map((size) => {
          const batch = values(size, next);
          next += size;
          return batch;
        });
        const results = await Promise.all(batches.map((batch) => storage.append('conv/race', 'main', batch)));
        let expected = 1;
        results.forEach((result, index) => {
          expect(seqs(result)).toEqual(range(expected, expected + (sizes[index] as number) - 1));
          expected += sizes[index] as number;
        });
        const all = await storage.read<{ n: number }>('conv/race', 'main');
        expect(seqs(all)).toEqual(range(1, next - 1));
        expect(all.every((entry) => entry.value.n === entry.seq)).toBe(true);
      });

      it('runs appends to different streams concurrently without mixing them', async () => {
        const streams = Array.from({ length: 12 }, (_, index) => `s${index}`);
        await Promise.all(streams.flatMap((stream) => [1, 2, 3].map((round) => storage.append(`conv/p${stream.length}`, stream, [{ stream, round }]))));
        for (const stream of streams) {
          const entries = await storage.read<{ stream: string }>(`conv/p${stream.length}`, stream);
          expect(seqs(entries)).toEqual([1, 2, 3]);
          expect(entries.every((entry) => entry.value.stream === stream)).toBe(true);
        }
      });
    });

    describe('read', () => {
      beforeEach(async () => {
        await storage.append('conv/r', 'main', values(4));
        await storage.append('conv/r', 'main', values(6, 5));
      });

      it('reads forward by default and backward on request', async () => {
        expect(seqs(await storage.read('conv/r', 'main'))).toEqual(range(1, 10));
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'forward' }))).toEqual(range(1, 10));
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'backward' }))).toEqual(range(1, 10).reverse());
        const entries = await storage.read<{ n: number }>('conv/r', 'main');
        expect(entries.every((entry) => entry.value.n === entry.seq)).toBe(true);
      });

      it('honours the forward cursor at both ends and in the middle', async () => {
        expect(seqs(await storage.read('conv/r', 'main', { after: 0 }))).toEqual(range(1, 10));
        expect(seqs(await storage.read('conv/r', 'main', { after: 4 }))).toEqual(range(5, 10));
        expect(seqs(await storage.read('conv/r', 'main', { after: 9 }))).toEqual([10]);
        expect(await storage.read('conv/r', 'main', { after: 10 })).toEqual([]);
        expect(await storage.read('conv/r', 'main', { after: 1000 })).toEqual([]);
      });

      it('honours the backward cursor at both ends and in the middle', async () => {
        expect(await storage.read('conv/r', 'main', { direction: 'backward', before: 1 })).toEqual([]);
        expect(await storage.read('conv/r', 'main', { direction: 'backward', before: 0 })).toEqual([]);
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'backward', before: 2 }))).toEqual([1]);
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'backward', before: 6 }))).toEqual([5, 4, 3, 2, 1]);
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'backward', before: 11 }))).toEqual(range(1, 10).reverse());
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'backward', before: 1000 }))).toEqual(range(1, 10).reverse());
      });

      it('applies limits in both directions', async () => {
        expect(seqs(await storage.read('conv/r', 'main', { limit: 3 }))).toEqual([1, 2, 3]);
        expect(seqs(await storage.read('conv/r', 'main', { after: 2, limit: 3 }))).toEqual([3, 4, 5]);
        expect(seqs(await storage.read('conv/r', 'main', { after: 8, limit: 5 }))).toEqual([9, 10]);
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'backward', limit: 3 }))).toEqual([10, 9, 8]);
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'backward', before: 3, limit: 5 }))).toEqual([2, 1]);
        expect(await storage.read('conv/r', 'main', { limit: 0 })).toEqual([]);
        expect(await storage.read('conv/r', 'main', { direction: 'backward', limit: 0 })).toEqual([]);
        expect(seqs(await storage.read('conv/r', 'main', { limit: 100 }))).toEqual(range(1, 10));
      });

      it('bounds a range with both cursors in either direction', async () => {
        expect(seqs(await storage.read('conv/r', 'main', { after: 3, before: 7 }))).toEqual([4, 5, 6]);
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'backward', after: 3, before: 7 }))).toEqual([6, 5, 4]);
        expect(seqs(await storage.read('conv/r', 'main', { direction: 'backward', after: 3, before: 7, limit: 2 }))).toEqual([6, 5]);
        expect(await storage.read('conv/r', 'main', { after: 5, before: 6 })).toEqual([]);
        expect(await storage.read('conv/r', 'main', { after: 7, before: 3 })).toEqual([]);
      });

      it('pages through a stream in both directions', async () => {
        const forward: number[] = [];
        let after = 0;
        for (let page = await storage.read('conv/r', 'main', { after, limit: 3 }); page.length > 0; page = await storage.read('conv/r', 'main', { after, limit: 3 })) {
          forward.push(...seqs(page));
          after = page.at(-1)?.seq ?? after;
        }
        expect(forward).toEqual(range(1, 10));
        const backward: number[] = [];
        let before = Number.MAX_SAFE_INTEGER;
        for (let page = await storage.read('conv/r', 'main', { direction: 'backward', before, limit: 4 }); page.length > 0; page = await storage.read('conv/r', 'main', { direction: 'backward', before, limit: 4 })) {
          backward.push(...seqs(page));
          before = page.at(-1)?.seq ?? before;
        }
        expect(backward).toEqual(range(1, 10).reverse());
      });

      it('reads a missing stream or path as empty', async () => {
        expect(await storage.read('conv/r', 'missing')).toEqual([]);
        expect(await storage.read('nowhere/at/all', 'main', { direction: 'backward', limit: 5 })).toEqual([]);
        expect(await storage.lastSeq('nowhere', 'main')).toBe(0);
      });

      it.each([
        [{ after: -1 }],
        [{ before: 1.5 }],
        [{ limit: -2 }],
        [{ limit: 2.5 }],
        [{ direction: 'sideways' }],
      ])('rejects the read option %j, naming it', async (options) => {
        const error = await storage.read('conv/r', 'main', options as never).then(() => undefined, (caught: Error) => caught);
        expect(error?.message).toMatch(new RegExp(Object.keys(options)[0] as string));
      });

      it('rejects invalid paths and streams on reads too', async () => {
        await expect(storage.read('../etc', 'main')).rejects.toThrow(/\.\./);
        await expect(storage.read('conv', 'a/b')).rejects.toThrow(/a\/b/);
        await expect(storage.lastSeq('conv//x', 'main')).rejects.toThrow(/empty segment/);
      });

      it('finds cursors in a long stream of uneven entries', async () => {
        const entries = Array.from({ length: 3000 }, (_, index) => ({ n: index + 1, pad: 'p'.repeat((index * 37) % 300) }));
        for (let start = 0; start < entries.length; start += 250) await storage.append('conv/long', 'main', entries.slice(start, start + 250));
        for (const after of [0, 1, 2, 499, 1234, 2047, 2998, 2999, 3000]) {
          const page = await storage.read<{ n: number }>('conv/long', 'main', { after, limit: 5 });
          expect(seqs(page)).toEqual(range(after + 1, Math.min(after + 5, 3000)));
          expect(page.every((entry) => entry.value.n === entry.seq)).toBe(true);
        }
        for (const before of [1, 2, 3, 500, 1777, 2999, 3000, 3001]) {
          const page = await storage.read('conv/long', 'main', { direction: 'backward', before, limit: 5 });
          expect(seqs(page)).toEqual(range(Math.max(1, before - 5), before - 1).reverse());
        }
      });
    });

    describe('listing', () => {
      it('lists the streams directly under a path, sorted', async () => {
        for (const stream of ['sess_b', 'metadata', 'sess_a']) await fill('conv/list', stream, 1);
        await fill('conv/list/nested', 'deeper', 1);
        expect(await storage.listStreams('conv/list')).toEqual(['metadata', 'sess_a', 'sess_b']);
        expect(await storage.listStreams('conv/list/nested')).toEqual(['deeper']);
        expect(await storage.listStreams('conv')).toEqual([]);
        expect(await storage.listStreams('missing/path')).toEqual([]);
      });

      it('lists the child paths directly under a path as names, sorted', async () => {
        await fill('conversations/conv_b', 'metadata', 1);
        await fill('conversations/conv_a', 'metadata', 1);
        await fill('conversations/conv_c/deep/er', 'main', 1);
        await fill('other', 'main', 1);
        expect(await storage.listPaths('conversations')).toEqual(['conv_a', 'conv_b', 'conv_c']);
        expect(await storage.listPaths('conversations/conv_c')).toEqual(['deep']);
        expect(await storage.listPaths('conversations/conv_a')).toEqual([]);
        expect(await storage.listPaths('')).toEqual(['conversations', 'other']);
        expect(await storage.listPaths('missing')).toEqual([]);
      });

      it('rejects invalid paths in listings', async () => {
        await expect(storage.listStreams('a/../b')).rejects.toThrow(/\.\./);
        await expect(storage.listPaths('a//b')).rejects.toThrow(/empty segment/);
      });
    });

    describe('delete', () => {
      it('deletes one stream, leaving its siblings; a new append starts again at 1', async () => {
        await fill('conv/d', 'one', 3);
        await fill('conv/d', 'two', 2);
        await storage.deleteStream('conv/d', 'one');
        expect(await storage.read('conv/d', 'one')).toEqual([]);
        expect(await storage.lastSeq('conv/d', 'one')).toBe(0);
        expect(await storage.listStreams('conv/d')).toEqual(['two']);
        expect(seqs(await storage.read('conv/d', 'two'))).toEqual([1, 2]);
        expect(seqs(await storage.append('conv/d', 'one', values(2)))).toEqual([1, 2]);
      });

      it('deleting a missing stream or path is not an error', async () => {
        await expect(storage.deleteStream('conv/none', 'main')).resolves.toBeUndefined();
        await expect(storage.deletePath('conv/none')).resolves.toBeUndefined();
      });

      it('removes a path from listings once its last stream is deleted', async () => {
        await fill('conv/only', 'main', 1);
        await fill('conv/kept', 'main', 1);
        await storage.deleteStream('conv/only', 'main');
        expect(await storage.listPaths('conv')).toEqual(['kept']);
      });

      it('deletes everything under a path, recursively, and nothing beside it', async () => {
        await fill('conv/a', 'main', 2);
        await fill('conv/a/sub', 'main', 2);
        await fill('conv/a/sub/deeper', 'x', 1);
        await fill('conv/ab', 'main', 3);
        await fill('conv/b', 'main', 1);
        await storage.deletePath('conv/a');
        expect(await storage.read('conv/a', 'main')).toEqual([]);
        expect(await storage.read('conv/a/sub', 'main')).toEqual([]);
        expect(await storage.lastSeq('conv/a/sub/deeper', 'x')).toBe(0);
        expect(await storage.listPaths('conv')).toEqual(['ab', 'b']);
        expect(seqs(await storage.read('conv/ab', 'main'))).toEqual([1, 2, 3]);
        expect(seqs(await storage.read('conv/b', 'main'))).toEqual([1]);
        expect(seqs(await storage.append('conv/a/sub', 'main', values(1)))).toEqual([1]);
      });

      it('deletes a nested path, keeping the streams of its parent', async () => {
        await fill('conv/n', 'main', 2);
        await fill('conv/n/child', 'main', 2);
        await storage.deletePath('conv/n/child');
        expect(seqs(await storage.read('conv/n', 'main'))).toEqual([1, 2]);
        expect(await storage.listPaths('conv/n')).toEqual([]);
        expect(await storage.listStreams('conv/n')).toEqual(['main']);
      });

      it('deletes a path while appends to it are queued, without losing later appends', async () => {
        const queued = Array.from({ length: 5 }, () => storage.append('conv/q', 'main', values(1)));
        const deletion = storage.deletePath('conv/q');
        const after = storage.append('conv/q', 'main', [{ n: 'after' }]);
        await Promise.all([...queued, deletion]);
        expect((await after).map((entry) => entry.value)).toEqual([{ n: 'after' }]);
        const remaining = await storage.read('conv/q', 'main');
        expect(remaining.map((entry) => entry.value)).toEqual([{ n: 'after' }]);
        expect(seqs(remaining)).toEqual([1]);
      });

      it('deletes everything with the root path', async () => {
        await fill('one', 'main', 1);
        await fill('two/three', 'main', 1);
        await storage.deletePath('');
        expect(await storage.listPaths('')).toEqual([]);
        expect(await storage.lastSeq('two/three', 'main')).toBe(0);
      });
    });

    describe('replaceStream', () => {
      it('replaces a stream with a prefix of itself, keeping seq numbers, and appends continue after it', async () => {
        await fill('conv/r', 'main', 6);
        await fill('conv/r', 'other', 2);
        const kept = (await storage.read('conv/r', 'main', { limit: 3 })).map((entry) => entry.value);
        expect(seqs(await storage.replaceStream('conv/r', 'main', kept))).toEqual([1, 2, 3]);
        expect(await storage.read('conv/r', 'main')).toEqual([1, 2, 3].map((seq) => ({ seq, value: { n: seq } })));
        expect(await storage.lastSeq('conv/r', 'main')).toBe(3);
        expect(await storage.read('conv/r', 'main', { direction: 'backward', limit: 1 })).toEqual([{ seq: 3, value: { n: 3 } }]);
        expect(seqs(await storage.append('conv/r', 'main', values(2, 100)))).toEqual([4, 5]);
        expect(seqs(await storage.read('conv/r', 'other'))).toEqual([1, 2]);
        expect(await storage.listStreams('conv/r')).toEqual(['main', 'other']);
      });

      it('creates a missing stream, and empties a stream with an empty list', async () => {
        expect(seqs(await storage.replaceStream('conv/new', 'main', values(2)))).toEqual([1, 2]);
        expect(seqs(await storage.read('conv/new', 'main'))).toEqual([1, 2]);
        await storage.replaceStream('conv/new', 'main', []);
        expect(await storage.read('conv/new', 'main')).toEqual([]);
        expect(await storage.lastSeq('conv/new', 'main')).toBe(0);
        expect(seqs(await storage.append('conv/new', 'main', values(1)))).toEqual([1]);
      });

      it('runs in order with appends queued before and after it', async () => {
        await fill('conv/o', 'main', 2);
        const before = storage.append('conv/o', 'main', [{ n: 'before' }]);
        const replaced = storage.replaceStream('conv/o', 'main', [{ n: 'only' }]);
        const after = storage.append('conv/o', 'main', [{ n: 'after' }]);
        await Promise.all([before, replaced, after]);
        expect(await storage.read('conv/o', 'main')).toEqual([
          { seq: 1, value: { n: 'only' } },
          { seq: 2, value: { n: 'after' } },
        ]);
      });

      it('refuses a value that is not JSON and keeps the old content', async () => {
        await fill('conv/bad', 'main', 3);
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        await expect(storage.replaceStream('conv/bad', 'main', [{ n: 1 }, cyclic])).rejects.toThrow(/conv\/bad|main/);
        expect(seqs(await storage.read('conv/bad', 'main'))).toEqual([1, 2, 3]);
        await expect(storage.replaceStream('conv/../x', 'main', [])).rejects.toThrow(/\.\./);
      });
    });

    it('rejects operations after close', async () => {
      await fill('conv/closed', 'main', 1);
      await storage.close();
      await expect(storage.append('conv/closed', 'main', values(1))).rejects.toThrow(/closed/);
    });
  });
}
