/**
 * The RecordStorage contract (SPEC §4) as a test suite: every backend must pass it unchanged.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordListOptions, RecordStorage, StoredRecord } from '../../src/storage/record-storage.js';
import type { StorageUnderTest } from './log-storage.conformance.js';

/** Makes a fresh, empty RecordStorage for each test. */
export type RecordStorageFactory = () => Promise<StorageUnderTest<RecordStorage>>;

interface Item {
  title: string;
  cwd?: string;
  kind?: string;
  n?: number;
}

function keys(records: StoredRecord[]): string[] {
  return records.map((record) => record.key);
}

function pad(index: number): string {
  return `k${String(index).padStart(3, '0')}`;
}

/** Registers the RecordStorage conformance tests for one backend. */
export function runRecordStorageConformance(name: string, factory: RecordStorageFactory): void {
  describe(`RecordStorage conformance: ${name}`, () => {
    let storage: RecordStorage;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      ({ storage, cleanup } = await factory());
      storage.defineNamespace({ name: 'items', filterFields: ['cwd', 'kind'] });
      storage.defineNamespace({ name: 'other' });
    });

    afterEach(async () => {
      await storage.close();
      await cleanup?.();
    });

    async function listAll(options: RecordListOptions, pageSize: number, between?: (page: number) => Promise<void>): Promise<string[]> {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 1000; page += 1) {
        const result = await storage.list('items', { ...options, limit: pageSize, ...(cursor ? { cursor } : {}) });
        expect(result.records.length).toBeLessThanOrEqual(pageSize);
        seen.push(...keys(result.records));
        cursor = result.nextCursor;
        if (cursor === undefined) return seen;
        await between?.(page);
      }
      throw new Error('pagination did not end');
    }

    describe('set, get, mset, mget', () => {
      it('stores and returns a record with its update time', async () => {
        await storage.set<Item>('items', 'a', { title: 'A' }, 1000);
        expect(await storage.get('items', 'a')).toEqual({ key: 'a', value: { title: 'A' }, updatedAt: 1000 });
      });

      it('defaults the update time to now, in ms', async () => {
        const before = Date.now();
        await storage.set('items', 'now', { title: 'now' });
        const record = await storage.get('items', 'now');
        expect(record?.updatedAt).toBeGreaterThanOrEqual(before);
        expect(record?.updatedAt).toBeLessThanOrEqual(Date.now());
      });

      it('replaces the value and the update time', async () => {
        await storage.set('items', 'a', { title: 'old' }, 1);
        await storage.set('items', 'a', { title: 'new' }, 2);
        expect(await storage.get('items', 'a')).toEqual({ key: 'a', value: { title: 'new' }, updatedAt: 2 });
      });

      it('returns undefined for a missing key and keeps namespaces apart', async () => {
        await storage.set('items', 'shared', { title: 'items' }, 1);
        await storage.set('other', 'shared', { title: 'other' }, 2);
        expect(await storage.get('items', 'missing')).toBeUndefined();
        expect((await storage.get<Item>('items', 'shared'))?.value.title).toBe('items');
        expect((await storage.get<Item>('other', 'shared'))?.value.title).toBe('other');
      });

      it('round-trips JSON values of every kind', async () => {
        const stored = [{ nested: { list: [1, 'two', null, true] } }, 'text\nwith newline', 12.5, null, [], false];
        await storage.mset('other', stored.map((value, index) => ({ key: `v${index}`, value, updatedAt: index })));
        const read = await storage.mget('other', stored.map((_, index) => `v${index}`));
        expect(read.map((record) => record?.value)).toEqual(stored);
      });

      it('stores several records with mset and reads them back in order with mget', async () => {
        await storage.mset<Item>('items', [
          { key: 'b', value: { title: 'B' }, updatedAt: 2 },
          { key: 'a', value: { title: 'A' }, updatedAt: 1 },
          { key: 'c', value: { title: 'C' } },
        ]);
        const records = await storage.mget<Item>('items', ['c', 'missing', 'a', 'b']);
        expect(records.map((record) => record?.value.title)).toEqual(['C', undefined, 'A', 'B']);
        expect(records[1]).toBeUndefined();
        expect(records[2]?.updatedAt).toBe(1);
        expect(await storage.mget('items', [])).toEqual([]);
      });

      it('stores nothing from an mset holding an invalid record', async () => {
        await expect(
          storage.mset('items', [
            { key: 'good', value: { title: 'good' } },
            { key: 'bad', value: 10n as unknown as Item },
          ]),
        ).rejects.toThrow(/"bad"/);
        expect(await storage.get('items', 'good')).toBeUndefined();
      });

      it('rejects bad keys, update times and values, naming them', async () => {
        await expect(storage.set('items', '', { title: 'x' })).rejects.toThrow(/key/);
        await expect(storage.set('items', 'a\0b', { title: 'x' })).rejects.toThrow(/key/);
        await expect(storage.set('items', 'k', { title: 'x' }, -5)).rejects.toThrow(/updatedAt/);
        await expect(storage.set('items', 'k', { title: 'x' }, 1.5)).rejects.toThrow(/updatedAt/);
        await expect(storage.set('items', 'k', undefined)).rejects.toThrow(/"k".*"items"|"items".*"k"/);
      });

      it('rejects an undeclared namespace, naming it', async () => {
        await expect(storage.set('undeclared', 'k', {})).rejects.toThrow(/undeclared/);
        await expect(storage.get('undeclared', 'k')).rejects.toThrow(/undeclared/);
        await expect(storage.list('undeclared')).rejects.toThrow(/undeclared/);
      });

      it('rejects invalid namespace definitions, naming what is wrong', () => {
        expect(() => storage.defineNamespace({ name: 'bad-name' })).toThrow(/bad-name/);
        expect(() => storage.defineNamespace({ name: 'ok', filterFields: ['bad.field'] })).toThrow(/bad\.field/);
      });
    });

    describe('delete', () => {
      it('deletes one key and reports whether it existed', async () => {
        await storage.set('items', 'a', { title: 'A' });
        expect(await storage.delete('items', 'a')).toBe(true);
        expect(await storage.delete('items', 'a')).toBe(false);
        expect(await storage.get('items', 'a')).toBeUndefined();
      });

      it('deletes a half-open key range and counts it', async () => {
        await storage.mset('items', ['a', 'b', 'ba', 'c', 'd'].map((key) => ({ key, value: { title: key } })));
        expect(await storage.deleteRange('items', 'b', 'c')).toBe(2);
        expect(keys((await storage.list('items')).records)).toEqual(['a', 'c', 'd']);
        expect(await storage.deleteRange('items', 'x', 'z')).toBe(0);
        expect(await storage.deleteRange('items', 'd', 'a')).toBe(0);
        expect(await storage.deleteRange('items', '', '\uffff')).toBe(3);
        expect((await storage.list('items')).records).toEqual([]);
      });
    });

    describe('list', () => {
      beforeEach(async () => {
        const records = Array.from({ length: 30 }, (_, index) => ({
          key: pad(index),
          value: { title: `item ${index}`, cwd: index % 3 === 0 ? '/home/dev/a' : '/home/dev/b', kind: index % 2 === 0 ? 'even' : 'odd', n: index },
          // Several records share an update time so that ties are broken by key.
          updatedAt: 1000 + (29 - index) - (index % 4 === 0 ? 1 : 0) - ((29 - index) % 3),
        }));
        await storage.mset('items', records);
      });

      function sortedBy(orderBy: 'key' | 'updatedAt', order: 'asc' | 'desc', records: StoredRecord[]): string[] {
        const sorted = [...records].sort((left, right) => {
          const byTime = orderBy === 'updatedAt' ? left.updatedAt - right.updatedAt : 0;
          return byTime !== 0 ? byTime : left.key < right.key ? -1 : left.key > right.key ? 1 : 0;
        });
        if (order === 'desc') sorted.reverse();
        return keys(sorted);
      }

      it('lists by key ascending by default, 100 per page', async () => {
        await storage.mset('other', Array.from({ length: 150 }, (_, index) => ({ key: pad(index), value: index, updatedAt: 1 })));
        const first = await storage.list('other');
        expect(keys(first.records)).toEqual(Array.from({ length: 100 }, (_, index) => pad(index)));
        expect(first.nextCursor).toBeTypeOf('string');
        const second = await storage.list('other', { cursor: first.nextCursor as string });
        expect(keys(second.records)).toEqual(Array.from({ length: 50 }, (_, index) => pad(index + 100)));
        expect(second.nextCursor).toBeUndefined();
      });

      it('orders by key or by update time (ties by key), in both directions', async () => {
        const all = (await storage.list('items', { limit: 1000 })).records;
        expect(all).toHaveLength(30);
        for (const orderBy of ['key', 'updatedAt'] as const) {
          for (const order of ['asc', 'desc'] as const) {
            const listed = (await storage.list('items', { orderBy, order, limit: 1000 })).records;
            expect(keys(listed), `${orderBy} ${order}`).toEqual(sortedBy(orderBy, order, all));
          }
        }
      });

      it('restricts by keyFrom (inclusive), keyTo (exclusive) and keyPrefix', async () => {
        expect(keys((await storage.list('items', { keyFrom: 'k027' })).records)).toEqual(['k027', 'k028', 'k029']);
        expect(keys((await storage.list('items', { keyTo: 'k003' })).records)).toEqual(['k000', 'k001', 'k002']);
        expect(keys((await storage.list('items', { keyFrom: 'k010', keyTo: 'k013' })).records)).toEqual(['k010', 'k011', 'k012']);
        expect(keys((await storage.list('items', { keyPrefix: 'k01' })).records)).toHaveLength(10);
        expect(keys((await storage.list('items', { keyPrefix: 'k02', keyFrom: 'k025', order: 'desc' })).records)).toEqual(['k029', 'k028', 'k027', 'k026', 'k025']);
        expect(keys((await storage.list('items', { keyPrefix: 'k02', keyTo: 'k022' })).records)).toEqual(['k020', 'k021']);
        expect((await storage.list('items', { keyPrefix: 'zzz' })).records).toEqual([]);
        expect((await storage.list('items', { keyPrefix: '' , limit: 1000 })).records).toHaveLength(30);
      });

      it('filters on declared fields with equality', async () => {
        const inA = (await storage.list<Item>('items', { where: { cwd: '/home/dev/a' }, limit: 1000 })).records;
        expect(keys(inA)).toEqual(Array.from({ length: 10 }, (_, index) => pad(index * 3)));
        const evenInA = (await storage.list<Item>('items', { where: { cwd: '/home/dev/a', kind: 'even' }, orderBy: 'updatedAt', order: 'desc' })).records;
        expect(evenInA.every((record) => record.value.cwd === '/home/dev/a' && record.value.kind === 'even')).toBe(true);
        expect(keys(evenInA)).toEqual(sortedBy('updatedAt', 'desc', evenInA));
        expect(evenInA).toHaveLength(5);
        expect((await storage.list('items', { where: { cwd: '/nowhere' } })).records).toEqual([]);
      });

      it('matches only string field values', async () => {
        await storage.set('items', 'numeric', { title: 'n', kind: 5 as unknown as string }, 1);
        expect(keys((await storage.list('items', { where: { kind: '5' } })).records)).toEqual([]);
      });

      it('accepts filter fields declared later, over records stored before', async () => {
        storage.defineNamespace({ name: 'items', filterFields: ['title'] });
        expect(keys((await storage.list('items', { where: { title: 'item 7' } })).records)).toEqual(['k007']);
        expect(keys((await storage.list('items', { where: { cwd: '/home/dev/a', title: 'item 9' } })).records)).toEqual(['k009']);
      });

      it('rejects a filter on an undeclared field, naming the field and the namespace', async () => {
        const error = await storage.list('items', { where: { title: 'x' } }).then(() => undefined, (caught: Error) => caught);
        expect(error?.message).toMatch(/"title"/);
        expect(error?.message).toMatch(/"items"/);
      });

      it('rejects bad list options and foreign cursors', async () => {
        await expect(storage.list('items', { limit: 0 })).rejects.toThrow(/limit/);
        await expect(storage.list('items', { orderBy: 'title' as never })).rejects.toThrow(/orderBy/);
        await expect(storage.list('items', { cursor: 'not-a-cursor' })).rejects.toThrow(/cursor/);
        const page = await storage.list('items', { limit: 2 });
        await expect(storage.list('items', { orderBy: 'updatedAt', cursor: page.nextCursor as string })).rejects.toThrow(/cursor/);
      });

      it('pages through every ordering without repeats or gaps, the last page without a cursor', async () => {
        for (const orderBy of ['key', 'updatedAt'] as const) {
          for (const order of ['asc', 'desc'] as const) {
            const full = keys((await storage.list('items', { orderBy, order, limit: 1000 })).records);
            for (const pageSize of [1, 7, 10, 30, 31]) {
              expect(await listAll({ orderBy, order }, pageSize), `${orderBy} ${order} by ${pageSize}`).toEqual(full);
            }
            expect(await listAll({ orderBy, order, where: { kind: 'odd' } }, 4)).toEqual(
              keys((await storage.list('items', { orderBy, order, where: { kind: 'odd' }, limit: 1000 })).records),
            );
          }
        }
      });

      it('stays stable under inserts between pages: no repeats, no pre-existing record skipped', async () => {
        const existing = keys((await storage.list('items', { limit: 1000 })).records);
        let inserted = 0;
        for (const orderBy of ['key', 'updatedAt'] as const) {
          for (const order of ['asc', 'desc'] as const) {
            const seen = await listAll({ orderBy, order }, 4, async (page) => {
              // New keys land before, between and after the ones already listed, with update times
              // before, inside and after the existing range.
              inserted += 1;
              await storage.mset('items', [
                { key: `k${String(page * 3).padStart(3, '0')}x${inserted}`, value: { title: 'new' }, updatedAt: 1000 + page },
                { key: `a-new-${inserted}`, value: { title: 'new' }, updatedAt: 5 },
                { key: `z-new-${inserted}`, value: { title: 'new' } },
              ]);
            });
            expect(new Set(seen).size, `${orderBy} ${order}: duplicates`).toBe(seen.length);
            const missing = existing.filter((key) => !seen.includes(key));
            expect(missing, `${orderBy} ${order}: skipped`).toEqual([]);
          }
        }
      });

      it('orders keys by code point, as UTF-8 bytes sort', async () => {
        const unicode = ['b', 'a', '\uffff', '\u{1F600}', 'é', 'Z'];
        await storage.mset('other', unicode.map((key) => ({ key, value: key, updatedAt: 1 })));
        const listed = keys((await storage.list('other')).records);
        expect(listed).toEqual(['Z', 'a', 'b', 'é', '\uffff', '\u{1F600}']);
        expect(await listAllOther(storage)).toEqual(listed);
      });
    });
  });
}

async function listAllOther(storage: RecordStorage): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await storage.list('other', { limit: 1, ...(cursor ? { cursor } : {}) });
    seen.push(...keys(page.records));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return seen;
}
