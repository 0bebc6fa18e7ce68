import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** Random bytes drawn ahead, so an id costs no call into the system's random source of its own. */
const pool = new Uint8Array(4096);
let poolNext = pool.length;

/**
 * A fraction in [0, 1) from the operating system's cryptographic random source. The ULID library
 * asks one per character (16 per id) and by default draws each with its own `randomBytes(1)`;
 * one byte divided by 256 keeps every one of its 32 characters equally likely (256 = 8 × 32).
 */
function pooledRandom(): number {
  if (poolNext === pool.length) {
    randomFillSync(pool);
    poolNext = 0;
  }
  return (pool[poolNext++] as number) / 256;
}

const nextUlid = monotonicFactory(pooledRandom);

/** The prefixes of the ids the runtime makes (SPEC §3: sortable by time, typed by prefix). */
export type IdPrefix = 'conv' | 'sess' | 'turn' | 'item' | 'call' | 'input' | 'appr' | 'cmd' | 'term' | 'att' | 'proj' | 'task';

/**
 * Makes a new id `<prefix>_<ULID>`: lexicographically sortable by creation time (ULIDs are
 * monotonic within one process), and readable as to what it names.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}
