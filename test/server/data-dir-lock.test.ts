import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE } from '../../src/server/data-dir-lock.js';

const directories: string[] = [];
afterEach(() => directories.splice(0).forEach((directory) => rmSync(directory, { recursive: true, force: true })));
function dataDir(): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-lock-'));
  directories.push(directory);
  return directory;
}

describe('the data-dir lock', () => {
  it('refuses a second holder while the first lives, naming its pid', () => {
    const directory = dataDir();
    // A live process that is not this one holds the lock.
    writeFileSync(path.join(directory, LOCK_FILE), `${process.ppid}\n`);
    expect(() => acquireDataDirLock(directory)).toThrow(DataDirLockedError);
    expect(() => acquireDataDirLock(directory)).toThrow(`pid ${process.ppid}`);
  });

  it('takes over a lock left by a dead process, and releases only its own', () => {
    const directory = dataDir();
    const dead = spawnSync('true').pid;
    writeFileSync(path.join(directory, LOCK_FILE), `${dead}\n`);
    const lock = acquireDataDirLock(directory);
    expect(readFileSync(path.join(directory, LOCK_FILE), 'utf8').trim().split(' ')[0]).toBe(String(process.pid));
    lock.release();
    expect(() => readFileSync(path.join(directory, LOCK_FILE))).toThrow();
  });

  it('names the topmost directory it made, and none for an existing one', () => {
    const root = dataDir();
    const made = acquireDataDirLock(path.join(root, 'new', 'data'));
    expect(made.createdDirectory).toBe(path.join(root, 'new'));
    made.release();
    const existing = acquireDataDirLock(root);
    expect(existing.createdDirectory).toBeUndefined();
    existing.release();
  });

  it('a refused lock leaves the data directory it found in place', () => {
    const directory = dataDir();
    writeFileSync(path.join(directory, LOCK_FILE), `${process.ppid}\n`);
    expect(() => acquireDataDirLock(directory)).toThrow(DataDirLockedError);
    expect(readFileSync(path.join(directory, LOCK_FILE), 'utf8')).toBe(`${process.ppid}\n`);
  });
});
