/**
 * Gives memory back once the work that needed it is over. With nothing allocating, V8 shrinks
 * its heap only through its memory reducer, which waits about 8 s after the last collection before it starts
 * (V8 `heap/memory-reducer.cc`, `kLongDelayMs`), and in the meantime an idle server keeps the
 * young generation it grew and the old-generation pages its last turn touched. Measured on the
 * server after one turn of 200,000 deltas: 115 MiB RSS 5 s after the turn, 89 MiB once the
 * reducer had run 17 s after it, 86 MiB at 5 s with the collection below.
 *
 * So once the server has been idle for {@link IDLE_QUIET_MS} after work, it asks V8 for the
 * same memory-reducing collection the reducer makes (through the inspector protocol, below),
 * once per stretch of idleness.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How often the server looks, ms. */
export const IDLE_MEMORY_CHECK_MS = 1_000;
/** How long the server must have been idle after its last work before it collects, ms. */
export const IDLE_QUIET_MS = 1_000;
/** Growth of the used heap since the last collection that makes one worth it even without a sign of work, bytes. */
export const IDLE_COLLECTION_GROWTH_BYTES = 16 * 1024 * 1024;

/** A full collection; resolves once it is over. */
export type Collect = () => Promise<void>;

/**
 * The collection that gives memory back: `HeapProfiler.collectGarbage` of the inspector
 * protocol (Chrome DevTools Protocol), sent on an in-process `node:inspector` session, which
 * needs no debugger and no open port. V8 runs it as a low-memory collection: full collections
 * that reduce the footprint (the young generation shrinks back to its smallest size, fragmented
 * old-generation pages are compacted, freed pages are unmapped), where the `gc()` of
 * `--expose-gc` leaves freed pages mapped: on the idle server it took RSS from 78 to 71 MiB,
 * where `gc()` freed heap but left RSS as it was. `gc()` remains the fallback for a Node.js
 * built without the inspector. Costs 15–100 ms of the main thread on a 20 MiB heap.
 */
export async function memoryReducingCollector(): Promise<Collect | undefined> {
  try {
    const { Session } = await import('node:inspector');
    return async () => {
      const session = new Session();
      session.connect();
      try {
        await new Promise<void>((resolve, reject) => session.post('HeapProfiler.collectGarbage', (error) => (error ? reject(error) : resolve())));
      } finally {
        session.disconnect();
      }
    };
  } catch {
    const collect = exposedCollector();
    return collect ? () => Promise.resolve(collect()) : undefined;
  }
}

/**
 * Runs one memory-reducing collection now (see {@link memoryReducingCollector}); resolves once it
 * is over, whether it could run or not. The server runs it once it is ready, before it tells
 * clients where it is: what loading its modules grew (a young generation of 16 MiB, pages of
 * code since unused) is given back before the first turn, whose allocations then run in the
 * smallest young generation (see {@link stopYoungGenerationGrowth}).
 */
export async function collectOnce(): Promise<void> {
  const collect = await memoryReducingCollector();
  await collect?.().catch(() => undefined);
}

/**
 * V8's `gc`, exposed for this process: `--expose-gc` set at run time makes a new context
 * define `gc` (V8's own function), without making the main context's `gc` global appear.
 */
function exposedCollector(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  try {
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as unknown;
    return typeof collect === 'function' ? (collect as () => void) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stops V8's young generation from growing past the size it has now. It starts small and doubles
 * under allocation up to 2 × 16 MiB on 64-bit: one busy turn left an idle server holding 16 MiB
 * more of young generation it had touched. The size cannot be lowered once the process runs
 * (`--max-semi-space-size` is read only at start), but its growth can be stopped
 * (`--semi-space-growth-factor`, read at each growth; V8 `heap/new-spaces.cc`). More frequent
 * young collections are the price, each as cheap as what survives it. (A memory-reducing
 * collection, see {@link memoryReducingCollector}, still shrinks it when the server is idle.)
 */
export function stopYoungGenerationGrowth(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** What {@link releaseMemoryWhenIdle} watches. */
export interface IdleMemoryWatch {
  /** Whether no work runs now (no turn): a collection then pauses nobody's stream. */
  isIdle: () => boolean;
  /** When the server last did work that allocates (a conversation used or opened), ms since the epoch. */
  lastActivityAt: () => number;
  /**
   * When the server last let memory go without new work (idle conversations closed), ms since
   * the epoch. It calls for one more collection once it is `quietMs` old, but never delays the
   * one that follows work: idle conversations close one after another for seconds after a burst
   * of use (each when its grace ends), and memory is not held through all of it.
   */
  lastReleaseAt?: () => number;
  /** The collection to run (tests); default {@link memoryReducingCollector}. */
  collect?: Collect;
  /**
   * Gives back memory held outside V8 (caches of native libraries, the C heap's free pages), run
   * after each collection: the collection frees the array buffers and native objects V8 held,
   * and only then are their pages free to hand back. Runs on the main thread; an error it throws
   * is passed to `onReleaseError`.
   */
  releaseNativeMemory?: () => void;
  /** Told of an error thrown by `releaseNativeMemory`; watching goes on. */
  onReleaseError?: (error: Error) => void;
  /** How often to look, ms; default {@link IDLE_MEMORY_CHECK_MS}. */
  checkMs?: number;
  /** Idle time after work before collecting, ms; default {@link IDLE_QUIET_MS}. */
  quietMs?: number;
}

/**
 * Starts watching: every `checkMs`, when `isIdle()`, collects once the last work (the later of
 * `lastActivityAt()` and the first check that found the server idle after one that found work
 * running) is at least `quietMs` old and newer than the last collection, once the last release
 * (`lastReleaseAt()`) is, or when the used heap
 * grew by {@link IDLE_COLLECTION_GROWTH_BYTES} since the last collection, then runs
 * `releaseNativeMemory`. Meant to start right after a collection (the server makes one when it
 * is ready: {@link collectOnce}). A failed collection is retried at the next sign of work.
 * @returns the function that stops watching
 */
export function releaseMemoryWhenIdle(watch: IdleMemoryWatch): () => void {
  const checkMs = watch.checkMs ?? IDLE_MEMORY_CHECK_MS;
  const quietMs = watch.quietMs ?? IDLE_QUIET_MS;
  let collect: Promise<Collect | undefined> | undefined = watch.collect ? Promise.resolve(watch.collect) : undefined;
  // Whether the last check found work running, and when the first idle check after such work ran.
  let workWasRunning = false;
  let workEndSeenAt = 0;
  // Watching starts right after the collection made when the server became ready.
  let collectedAt = Date.now();
  let heapAfterCollection = process.memoryUsage().heapUsed;
  let collecting = false;
  const timer = setInterval(() => {
    const now = Date.now();
    if (!watch.isIdle()) {
      workWasRunning = true;
      return;
    }
    if (workWasRunning) {
      // The work seen running at the last check may have ended only just now, so the quiet
      // spell starts here. Counted from that check instead, it let a memory-reducing collection
      // (tens of ms of the main thread) fall in the short gap between two turns in a row.
      workWasRunning = false;
      workEndSeenAt = now;
    }
    if (collecting) return;
    const lastWork = Math.max(workEndSeenAt, watch.lastActivityAt());
    const lastRelease = watch.lastReleaseAt?.() ?? 0;
    // Work stamped in the very millisecond a collection started came during it (what started it
    // is at least quietMs older), so it still calls for the next one.
    const afterWork = lastWork >= collectedAt && now - lastWork >= quietMs;
    const afterRelease = lastRelease >= collectedAt && now - Math.max(lastRelease, lastWork) >= quietMs;
    if (!afterWork && !afterRelease && process.memoryUsage().heapUsed - heapAfterCollection < IDLE_COLLECTION_GROWTH_BYTES) return;
    collecting = true;
    collectedAt = now;
    collect ??= memoryReducingCollector();
    collect
      .then((run) => run?.())
      .catch(() => undefined)
      .finally(() => {
        try {
          watch.releaseNativeMemory?.();
        } catch (error) {
          watch.onReleaseError?.(error as Error);
        }
        collecting = false;
        heapAfterCollection = process.memoryUsage().heapUsed;
      });
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}
