/**
 * A runtime.lock names its holder by pid and start time: once the pid belongs to another
 * program (the server died and the pid was reused), the lock no longer blocks the data dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE } from '../../src/server/data-dir-lock.js';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

function dataDir(): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-lock-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** A live program that is not an OpenVaala server. */
function otherProgram(): ChildProcess {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  cleanups.push(() => child.kill('SIGKILL'));
  return child;
}

/** Start time of a process in clock ticks after boot (/proc/<pid>/stat field 22). */
function startTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

it('takes over a lock whose pid now belongs to a program started later than the recorded holder', async () => {
  const directory = dataDir();
  const other = otherProgram();
  await new Promise((resolve) => other.once('spawn', resolve));
  const pid = other.pid as number;
  // The server that wrote this lock started at another time than the program now at its pid.
  writeFileSync(path.join(directory, LOCK_FILE), `${pid} ${startTicks(pid) - 500}\n`);
  const lock = acquireDataDirLock(directory);
  expect(readFileSync(path.join(directory, LOCK_FILE), 'utf8').split(' ')[0]).toBe(String(process.pid));
  lock.release();
});

it('takes over a pid-only lock (older servers) whose pid was reused after the lock was written', async () => {
  const directory = dataDir();
  const file = path.join(directory, LOCK_FILE);
  const other = otherProgram();
  await new Promise((resolve) => other.once('spawn', resolve));
  writeFileSync(file, `${other.pid}\n`);
  // Written an hour before the program now holding that pid started.
  const anHourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(file, anHourAgo, anHourAgo);
  acquireDataDirLock(directory).release();
});

it('still refuses while the recorded holder itself runs', async () => {
  const directory = dataDir();
  const other = otherProgram();
  await new Promise((resolve) => other.once('spawn', resolve));
  const pid = other.pid as number;
  writeFileSync(path.join(directory, LOCK_FILE), `${pid} ${startTicks(pid)}\n`);
  expect(() => acquireDataDirLock(directory)).toThrow(DataDirLockedError);
  expect(() => acquireDataDirLock(directory)).toThrow(`pid ${pid}`);
});

it('records its own start time', () => {
  const directory = dataDir();
  const lock = acquireDataDirLock(directory);
  expect(readFileSync(path.join(directory, LOCK_FILE), 'utf8').trim()).toBe(`${process.pid} ${startTicks(process.pid)}`);
  lock.release();
});
