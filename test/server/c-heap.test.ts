/**
 * Handing the C heap's free memory back (`src/server/c-heap.ts`, the `@openvaala/release-memory`
 * addon): measured in fresh processes, since the resident size of a test worker depends on
 * everything else it ran.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime !== undefined;
const compiled = path.resolve('dist/src/server/c-heap.js');
const temporary: string[] = [];

afterEach(() => {
  for (const directory of temporary.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** Runs an ES module script in a new `node --expose-gc` and returns what it printed as JSON. */
function runScript(script: string): Record<string, unknown> {
  const result = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('trimming the C heap', () => {
  it.runIf(glibc)('gives back the pages of freed buffers that lay between buffers still in use', () => {
    // 4,096 buffers of 16 KiB (below glibc's mmap threshold, so on the heap); one in 16 is kept,
    // so no freed stretch reaches the top of the heap and free() alone gives nothing back.
    const { before, after, trimmed, available } = runScript(`
      import { canTrimCHeap, trimCHeap } from ${JSON.stringify(pathToFileURL(compiled).href)};
      const mebibytes = () => process.memoryUsage().rss / 1048576;
      let freed = [];
      const kept = [];
      for (let index = 0; index < 4096; index++) {
        const buffer = Buffer.alloc(16 * 1024, 1);
        (index % 16 === 15 ? kept : freed).push(buffer);
      }
      freed = undefined;
      gc();
      gc();
      const before = mebibytes();
      const trimmed = trimCHeap();
      console.log(JSON.stringify({ before, after: mebibytes(), trimmed, available: canTrimCHeap(), kept: kept.length }));
    `);
    expect(available).toBe(true);
    expect(trimmed).toBe(true);
    // 60 MiB were freed; at least half of it must leave the resident set.
    expect((before as number) - (after as number)).toBeGreaterThan(30);
  });

  it('does nothing, and says so, where the addon is not installed', () => {
    // The compiled module alone in a directory with no node_modules above it: the optional
    // dependency cannot be found, as on a machine where it could not be built.
    const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-c-heap-'));
    temporary.push(directory);
    const lonely = path.join(directory, 'c-heap.js');
    copyFileSync(compiled, lonely);
    const { trimmed, available } = runScript(`
      import { canTrimCHeap, trimCHeap } from ${JSON.stringify(pathToFileURL(lonely).href)};
      console.log(JSON.stringify({ trimmed: trimCHeap(), available: canTrimCHeap() }));
    `);
    expect(trimmed).toBe(false);
    expect(available).toBe(false);
  });

  it.runIf(glibc)('with SQLite shrunk first, gives back the page cache of a database that read a large table', () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-c-heap-'));
    temporary.push(directory);
    const sqlite = pathToFileURL(path.resolve('dist/src/storage/sqlite/sqlite-database.js')).href;
    const { cached, shrunkOnly, shrunkAndTrimmed, rows } = runScript(`
      import { openSqliteDatabase, shrinkSqliteMemory } from ${JSON.stringify(sqlite)};
      import { trimCHeap } from ${JSON.stringify(pathToFileURL(compiled).href)};
      const mebibytes = () => process.memoryUsage().rss / 1048576;
      const database = openSqliteDatabase(${JSON.stringify(path.join(directory, 'big.db'))}, 'NORMAL');
      database.pragma('cache_size = -65536');
      database.exec('CREATE TABLE pages (id INTEGER PRIMARY KEY, body TEXT)');
      const insert = database.prepare('INSERT INTO pages (body) VALUES (?)');
      database.transaction(() => { for (let index = 0; index < 12_000; index++) insert.run(String(index).padEnd(3000, 'x')); })();
      // A small allocation made after the cache filled keeps the heap's top in use.
      const keep = database.prepare('SELECT count(*) AS count FROM pages');
      const rows = keep.get().count;
      const cached = mebibytes();
      shrinkSqliteMemory();
      const shrunkOnly = mebibytes();
      trimCHeap();
      console.log(JSON.stringify({ cached, shrunkOnly, shrunkAndTrimmed: mebibytes(), rows }));
      database.close();
    `);
    expect(rows).toBe(12_000);
    // About 40 MiB of pages were cached; shrinking and trimming gives most of it back.
    expect((cached as number) - (shrunkAndTrimmed as number)).toBeGreaterThan(20);
    expect(shrunkAndTrimmed as number).toBeLessThan(shrunkOnly as number);
  });
});
