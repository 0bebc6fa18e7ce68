/**
 * Handing the C heap's free memory back to the operating system.
 *
 * glibc's `free()` returns memory to the system only from the top of the main heap. Memory freed
 * between allocations that stay (SQLite's page cache, the buffers of a long model stream, V8's
 * array buffers) stays resident until `malloc_trim(0)` releases its whole free pages
 * (malloc_trim(3); every arena since glibc 2.8). Node.js has no call for it, so the small addon
 * `@openvaala/release-memory` (`native/release-memory`, built when the package is installed)
 * provides one. It is an optional dependency: where it could not be built, or where the C library
 * is not glibc, nothing is trimmed and the server works as before.
 */
import { createRequire } from 'node:module';

/** The addon's interface (`native/release-memory/index.d.ts`). */
interface ReleaseMemoryAddon {
  trim(): boolean;
  supported(): boolean;
}

/** Loaded on the first trim: `null` once loading failed (not built here). */
let addon: ReleaseMemoryAddon | null | undefined;

function loadAddon(): ReleaseMemoryAddon | null {
  if (addon !== undefined) return addon;
  try {
    addon = createRequire(import.meta.url)('@openvaala/release-memory') as ReleaseMemoryAddon;
  } catch {
    // An optional dependency that was not built (no compiler at install time): nothing to trim with.
    addon = null;
  }
  return addon;
}

/** Whether {@link trimCHeap} can give memory back in this process (the addon is built and the C library is glibc). */
export function canTrimCHeap(): boolean {
  return loadAddon()?.supported() ?? false;
}

/**
 * Asks the C allocator to hand its free pages back to the operating system (`malloc_trim(0)`).
 * Runs on the calling thread; a few milliseconds on a heap of tens of MiB.
 * @returns whether any memory was given back (`false` where trimming is not available: see {@link canTrimCHeap})
 */
export function trimCHeap(): boolean {
  return loadAddon()?.trim() ?? false;
}
