/**
 * Flushing a directory's entries to disk: a file created, linked or renamed into a directory
 * only survives a power loss once the directory itself is fsynced (fsync(2), "Notes").
 */
import { closeSync, fsyncSync, openSync } from 'node:fs';

/**
 * fsyncs `directory` so a rename or link just made in it is durable. Best effort: some file
 * systems refuse to open a directory for syncing, and the rename or link itself has happened,
 * so a failure here is ignored rather than reported as a failed write.
 */
export function syncDirectoryEntries(directory: string): void {
  try {
    const descriptor = openSync(directory, 'r');
    try {
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
  } catch {
    // The entry change is done; only its durability across a power loss is not confirmed.
  }
}
