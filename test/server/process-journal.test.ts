/**
 * The journal of running process groups (`processes/journal.jsonl`): one line per start and per
 * end, read back by the next start as the groups still open, kept small by rewriting it, and
 * read safely when a crash tore it. Records of older servers (`<pid>.json`) are still read.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { currentBootId, PROCESS_JOURNAL_FILE, PROCESS_RECORDS_DIRECTORY, ProcessRecords, processStartTime, recordedProcessGroups, stopLeftoverProcesses } from '../../src/server/process-records.js';
import { processGone, until } from '../helpers/processes.js';
import { recordingLogger } from '../helpers/recording-logger.js';

let dataDir: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'process-journal-'));
});

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** A process of our own, leader of its own group as a command is. */
async function groupLeader(): Promise<number> {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  children.push(child);
  const pid = child.pid as number;
  await until(() => processStartTime(pid) !== undefined, 5000, 'the process to start');
  return pid;
}

const journal = (): string => path.join(dataDir, PROCESS_RECORDS_DIRECTORY, PROCESS_JOURNAL_FILE);

it('reads back the groups started and not ended, with the boot and the server that started them', async () => {
  const [first, second] = [await groupLeader(), await groupLeader()];
  const records = new ProcessRecords(dataDir);
  records.started(first);
  records.started(second);
  records.ended(first);
  expect(recordedProcessGroups(dataDir)).toEqual({
    records: [{ pgid: second, startTime: processStartTime(second), bootId: currentBootId(), serverPid: process.pid }],
    unreadable: [],
  });
  // One line for each start and end after the header: nothing is rewritten per command.
  expect(readFileSync(journal(), 'utf8').trim().split('\n')).toHaveLength(4);
  records.close();
});

it('rewrites itself with only the running groups once it has grown, and keeps them', async () => {
  const kept = await groupLeader();
  const records = new ProcessRecords(dataDir);
  records.started(kept);
  // The test's own process stands in for commands that start and end.
  for (let command = 0; command < 3000; command++) {
    records.started(process.pid);
    records.ended(process.pid);
  }
  // 6,001 lines were written; the rewrite after 4,096 left the running one and what came after.
  expect(readFileSync(journal(), 'utf8').trim().split('\n').length).toBeLessThan(2000);
  expect(recordedProcessGroups(dataDir).records.map((record) => record.pgid)).toEqual([kept]);
  records.ended(kept);
  expect(recordedProcessGroups(dataDir).records).toEqual([]);
  records.close();
});

it('warns once per attempt when it cannot rewrite itself, and keeps recording', async () => {
  const leader = await groupLeader();
  const { logger, warnings } = recordingLogger();
  const records = new ProcessRecords(dataDir, logger);
  records.started(leader);
  // The folder gone, a file in its place: the rewrite cannot write there, the open journal still takes lines.
  const directory = path.join(dataDir, PROCESS_RECORDS_DIRECTORY);
  rmSync(directory, { recursive: true });
  writeFileSync(directory, 'not a folder');
  for (let command = 0; command < 3000; command++) {
    records.started(process.pid);
    records.ended(process.pid);
  }
  expect(warnings.filter((warning) => /cannot rewrite the journal/.test(warning.message))).toHaveLength(1);
  expect(warnings.filter((warning) => /cannot record/.test(warning.message))).toEqual([]);
  records.close();
});

it('skips a torn line, naming the file and line, and still stops the groups of the readable ones', async () => {
  const leader = await groupLeader();
  const records = new ProcessRecords(dataDir);
  records.started(leader);
  records.close();
  // A crash in the middle of a write leaves half a line at the end.
  appendFileSync(journal(), '{"started":12');
  expect(recordedProcessGroups(dataDir).unreadable).toEqual([`${journal()}:3`]);

  const { logger, warnings } = recordingLogger();
  // The journal names this process as its server: a successor is another process.
  writeFileSync(journal(), readFileSync(journal(), 'utf8').replace(`"serverPid":${process.pid}`, '"serverPid":1'));
  const report = await stopLeftoverProcesses(dataDir, logger);
  expect(report.stopped.map((record) => record.pgid)).toEqual([leader]);
  await until(() => processGone(leader), 5000, 'the recorded group to be stopped');
  expect(warnings.some((warning) => warning.fields.where === `${journal()}:3` && /cannot be read/.test(warning.message))).toBe(true);
  // Consumed: the next server starts a journal of its own.
  expect(recordedProcessGroups(dataDir)).toEqual({ records: [], unreadable: [] });
});

it('gives no records for a journal whose header cannot be read, and says so', () => {
  const records = new ProcessRecords(dataDir);
  records.close();
  writeFileSync(journal(), `not a header\n{"started":4242,"startTime":"1"}\n`);
  expect(recordedProcessGroups(dataDir)).toEqual({ records: [], unreadable: [`${journal()}:1`] });
});

it('never records process group 0 or 1, whatever a line says', () => {
  const records = new ProcessRecords(dataDir);
  records.close();
  appendFileSync(journal(), '{"started":1,"startTime":"1"}\n{"started":0,"startTime":"1"}\n');
  const read = recordedProcessGroups(dataDir);
  expect(read.records).toEqual([]);
  expect(read.unreadable).toHaveLength(2);
});

it('still reads the record files of an older server', async () => {
  const leader = await groupLeader();
  const directory = path.join(dataDir, PROCESS_RECORDS_DIRECTORY);
  new ProcessRecords(dataDir).close();
  writeFileSync(path.join(directory, `${leader}.json`), JSON.stringify({ pgid: leader, startTime: processStartTime(leader), bootId: currentBootId(), serverPid: 1 }));
  writeFileSync(path.join(directory, '777.json'), '{"pgid": 7');
  const read = recordedProcessGroups(dataDir);
  expect(read.records.map((record) => record.pgid)).toEqual([leader]);
  expect(read.unreadable).toEqual([path.join(directory, '777.json')]);
});
