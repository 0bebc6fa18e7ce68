/**
 * Gives memory back once the work that needed it is over. V8 collects its old generation only
 * when allocation pushes it to, so after a big turn (a long answer streamed as hundreds of
 * thousands of deltas, a large command output) an idle server kept its grown heap for as long
 * as nothing else ran. When no turn runs and the heap has grown well past what it held after
 * the last collection, a full collection is run.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How often the server looks, ms. */
export const IDLE_MEMORY_CHECK_MS = 2_000;
/** Growth of the used heap since the last full collection that makes one worth it, bytes. */
export const IDLE_COLLECTION_GROWTH_BYTES = 16 * 1024 * 1024;

type Collect = () => void;

/**
 * The collector, exposed for this process: `--expose-gc` set at run time makes a new context
 * define `gc` (V8's own function), without making the main context's `gc` global appear.
 */
function loadCollector(): Collect | undefined {
  const existing = (globalThis as { gc?: Collect }).gc;
  if (existing) return existing;
  try {
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as unknown;
    return typeof collect === 'function' ? (collect as Collect) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stops V8's young generation from growing past the size it has now. It starts small and doubles
 * under allocation up to 2 × 16 MiB on 64-bit, and never shrinks back: one busy turn left an
 * idle server holding 16 MiB more of young generation it had touched. The size cannot be lowered
 * once the process runs (`--max-semi-space-size` is read only at start), but its growth can be
 * stopped (`--semi-space-growth-factor`, read at each growth; V8 `heap/new-spaces.cc`). More
 * frequent young collections are the price, each as cheap as what survives it.
 */
export function stopYoungGenerationGrowth(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/**
 * Starts watching: every {@link IDLE_MEMORY_CHECK_MS}, when `isIdle()` and the used heap grew by
 * more than {@link IDLE_COLLECTION_GROWTH_BYTES} since the last collection, collects.
 * @param isIdle whether no work runs (a collection then pauses nobody's stream)
 * @returns the function that stops watching
 */
export function releaseMemoryWhenIdle(isIdle: () => boolean): () => void {
  const collect = loadCollector();
  if (!collect) return () => undefined;
  let heapAfterCollection = process.memoryUsage().heapUsed;
  const timer = setInterval(() => {
    if (!isIdle()) return;
    if (process.memoryUsage().heapUsed - heapAfterCollection < IDLE_COLLECTION_GROWTH_BYTES) return;
    collect();
    heapAfterCollection = process.memoryUsage().heapUsed;
  }, IDLE_MEMORY_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
