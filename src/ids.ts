import { monotonicFactory } from 'ulid';

const nextUlid = monotonicFactory();

/** The prefixes of the ids the runtime makes (SPEC §3: sortable by time, typed by prefix). */
export type IdPrefix = 'conv' | 'sess' | 'turn' | 'item' | 'call' | 'input' | 'appr' | 'cmd' | 'term' | 'att' | 'task';

/**
 * Makes a new id `<prefix>_<ULID>`: lexicographically sortable by creation time (ULIDs are
 * monotonic within one process), and readable as to what it names.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}
