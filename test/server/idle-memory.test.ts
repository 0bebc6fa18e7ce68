/**
 * The server gives memory back once work is over: a memory-reducing collection after a quiet
 * spell following work, never while a turn runs, once per stretch of idleness.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { releaseMemoryWhenIdle } from '../../src/server/idle-memory.js';

let stopWatching: (() => void) | undefined;

afterEach(() => {
  vi.useRealTimers();
  stopWatching?.();
  stopWatching = undefined;
});

/** A watch whose idleness and last activity the test sets, counting checks and collections. */
function watched() {
  const state = { idle: true, activityAt: 0, checks: 0, collections: 0 };
  stopWatching = releaseMemoryWhenIdle({
    isIdle: () => {
      state.checks++;
      return state.idle;
    },
    lastActivityAt: () => state.activityAt,
    collect: () => {
      state.collections++;
      return Promise.resolve();
    },
    checkMs: 10,
    quietMs: 30,
  });
  /** Resolves after `count` more checks. */
  const checksPass = (count: number) => {
    const target = state.checks + count;
    return expect.poll(() => state.checks, { timeout: 5_000, interval: 5 }).toBeGreaterThanOrEqual(target);
  };
  return { state, checksPass };
}

describe('releasing memory when idle', () => {
  it('collects once after work, when the server has been quiet, and not again until new work', async () => {
    const { state, checksPass } = watched();
    // No work since watching began: nothing to give back.
    await checksPass(5);
    expect(state.collections).toBe(0);
    state.activityAt = Date.now();
    await expect.poll(() => state.collections, { timeout: 5_000, interval: 5 }).toBe(1);
    await checksPass(10);
    expect(state.collections).toBe(1);
    state.activityAt = Date.now();
    await expect.poll(() => state.collections, { timeout: 5_000, interval: 5 }).toBe(2);
  });

  it('never collects while a turn runs, and collects after a turn seen running ends', async () => {
    const { state, checksPass } = watched();
    state.idle = false;
    state.activityAt = Date.now();
    await checksPass(10);
    expect(state.collections).toBe(0);
    // A turn the checks saw running is work even when no conversation was used since.
    state.activityAt = 0;
    state.idle = true;
    await expect.poll(() => state.collections, { timeout: 5_000, interval: 5 }).toBe(1);
  });

  it('counts the quiet spell after a turn from the first check that finds it over', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const start = Date.now();
    const collections: number[] = [];
    let idle = false;
    // As the server's defaults: the quiet spell is as long as the time between two checks.
    stopWatching = releaseMemoryWhenIdle({
      isIdle: () => idle,
      lastActivityAt: () => 0,
      collect: () => {
        collections.push(Date.now() - start);
        return Promise.resolve();
      },
      checkMs: 10,
      quietMs: 10,
    });
    // The checks at 10, 20 and 30 ms see a turn running; it ends just before the one at 40 ms.
    await vi.advanceTimersByTimeAsync(35);
    idle = true;
    await vi.advanceTimersByTimeAsync(5);
    // Idle for a moment only (the next turn may start at once): no collection yet.
    expect(collections).toEqual([]);
    await vi.advanceTimersByTimeAsync(10);
    expect(collections).toEqual([50]);
  });

  it('counts work stamped in the same millisecond a collection started as work after it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const start = Date.now();
    const collections: number[] = [];
    let activityAt = 0;
    stopWatching = releaseMemoryWhenIdle({
      isIdle: () => true,
      lastActivityAt: () => activityAt,
      collect: () => {
        collections.push(Date.now());
        return Promise.resolve();
      },
      checkMs: 10,
      quietMs: 30,
    });
    activityAt = start + 5;
    await vi.advanceTimersByTimeAsync(40);
    expect(collections).toEqual([start + 40]);
    // A conversation opened while that collection ran, within its first millisecond.
    activityAt = start + 40;
    await vi.advanceTimersByTimeAsync(100);
    expect(collections).toEqual([start + 40, start + 70]);
    // And nothing more without new work.
    await vi.advanceTimersByTimeAsync(200);
    expect(collections).toHaveLength(2);
  });

  it('collects after work without waiting for the closings that follow it, then once more after them', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const start = Date.now();
    const collections: number[] = [];
    let activityAt = 0;
    let releaseAt = 0;
    stopWatching = releaseMemoryWhenIdle({
      isIdle: () => true,
      lastActivityAt: () => activityAt,
      lastReleaseAt: () => releaseAt,
      collect: () => {
        collections.push(Date.now() - start);
        return Promise.resolve();
      },
      checkMs: 10,
      quietMs: 30,
    });
    activityAt = start + 5;
    // Idle conversations close every 20 ms for 100 ms after the work: never 30 ms of quiet.
    for (let elapsed = 0; elapsed < 100; elapsed += 20) {
      releaseAt = Date.now();
      await vi.advanceTimersByTimeAsync(20);
    }
    expect(collections).toEqual([40]);
    await vi.advanceTimersByTimeAsync(200);
    // Once more, 30 ms after the last closing (at 80 ms); then nothing without new work or closings.
    expect(collections).toEqual([40, 110]);
  });

  it('releases native memory after each collection; a failure to release is reported and watching goes on', async () => {
    const order: string[] = [];
    const errors: string[] = [];
    let activityAt = 0;
    let fail = true;
    stopWatching = releaseMemoryWhenIdle({
      isIdle: () => true,
      lastActivityAt: () => activityAt,
      collect: () => {
        order.push('collect');
        return Promise.resolve();
      },
      releaseNativeMemory: () => {
        order.push('release');
        if (fail) throw new Error('no memory to release');
      },
      onReleaseError: (error) => errors.push(error.message),
      checkMs: 10,
      quietMs: 30,
    });
    // Work counts when it comes after the watch's start (a collection at ready).
    await new Promise((resolve) => setTimeout(resolve, 5));
    activityAt = Date.now();
    await expect.poll(() => order.length, { timeout: 5_000, interval: 5 }).toBe(2);
    expect(errors).toEqual(['no memory to release']);
    fail = false;
    activityAt = Date.now();
    await expect.poll(() => order.length, { timeout: 5_000, interval: 5 }).toBe(4);
    expect(order).toEqual(['collect', 'release', 'collect', 'release']);
    expect(errors).toHaveLength(1);
  });

  it('the memory-reducing collection shrinks a grown young generation and unmaps freed heap', () => {
    // A fresh process: the young generation's size must not depend on what other tests allocated.
    const module = pathToFileURL(path.resolve('dist/src/server/idle-memory.js')).href;
    const script = `
      import { getHeapSpaceStatistics } from 'node:v8';
      import { collectOnce } from ${JSON.stringify(module)};
      const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
      let kept = [];
      for (let index = 0; index < 3_000_000; index++) { kept.push({ index }); if (kept.length > 200_000) kept = []; }
      kept = undefined;
      const before = { young: young(), heap: process.memoryUsage().heapTotal };
      await collectOnce();
      console.log(JSON.stringify({ before, after: { young: young(), heap: process.memoryUsage().heapTotal } }));
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    const { before, after } = JSON.parse(result.stdout) as Record<'before' | 'after', { young: number; heap: number }>;
    expect(after.young).toBeLessThan(before.young / 4);
    expect(after.heap).toBeLessThan(before.heap);
  });
});
