/**
 * Commands a dead server left running. A server killed with SIGKILL cannot stop the commands
 * its turns started, and they would go on changing files while the turn shows `interrupted`.
 * So the server records each process group it starts in `<dataDir>/processes/<pid>.json`
 * (removed when the leader ends), and on start stops the groups a predecessor recorded.
 *
 * A pid may have been reused since the record was written: a group is only killed when its
 * leader is alive with the recorded start time (`/proc/<pid>/stat` field 22, clock ticks
 * since boot) on the same boot (`/proc/sys/kernel/random/boot_id`). A (pid, start time) pair
 * names one process per boot, so an unrelated process is never signalled. Linux only; where
 * `/proc` is missing nothing is recorded.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ProcessTracker } from '../executors/process-tracker.js';
import { findDescendants, processExists, sendSignal } from '../executors/local/run-command.js';
import type { Logger } from '../logger.js';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE } from './private-files.js';
import { writeFileAtomicallySync } from '../write-file-atomically.js';

/** Folder of the records, in the data directory. */
export const PROCESS_RECORDS_DIRECTORY = 'processes';
/** File holding the running server's command tag, in the records folder. */
const TAG_FILE = 'server-tag';
/**
 * Environment variable carrying the server's command tag into every command it starts. It
 * finds what the group records cannot: a command killed with its server between its start
 * and its record, and descendants that left the group and lost their parent.
 */
export const COMMAND_TAG_VARIABLE = 'OPENVAALA_COMMAND_TAG';
/** How long a recorded group gets to end after SIGTERM before SIGKILL, in ms. */
const TERMINATE_GRACE_MS = 500;

/** One record: a process group started by a server. */
export interface ProcessRecord {
  /** The group id (= its leader's pid). */
  pgid: number;
  /** The leader's start time, `/proc/<pid>/stat` field 22 (clock ticks since boot), as text. */
  startTime: string;
  /** The boot the record was made in. */
  bootId: string;
  /** The server that started it. */
  serverPid: number;
}

/** Field 22 of `/proc/<pid>/stat` (start time, clock ticks since boot), or undefined when the process is gone. */
export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Field 2, the command name, is in parentheses and may hold spaces or ")": fields 3… follow the last ")".
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[22 - 3];
}

/** The id of the current boot, or '' where Linux does not tell it. */
export function currentBootId(): string {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

/** Writes and removes the records of one server's process groups (see the module comment). */
export class ProcessRecords implements ProcessTracker {
  private readonly directory: string;
  private readonly bootId = currentBootId();
  /** See {@link COMMAND_TAG_VARIABLE}: random, one per server. */
  readonly environment: Record<string, string>;

  /** @param dataDir the server's data directory (records go to its `processes` folder, mode 0700) */
  constructor(
    dataDir: string,
    private readonly logger?: Logger,
  ) {
    this.directory = path.join(dataDir, PROCESS_RECORDS_DIRECTORY);
    ensurePrivateDirectory(this.directory);
    const tag = randomBytes(16).toString('hex');
    // Written before any command starts, so a crash at any later moment leaves it behind.
    // Whole or not at all: a torn tag would hide from the next start the commands that carry it.
    writeFileAtomicallySync(path.join(this.directory, TAG_FILE), `${tag}\n`, { mode: PRIVATE_FILE_MODE });
    this.environment = { [COMMAND_TAG_VARIABLE]: tag };
  }

  /** Records a group whose leader was just started. A failure is logged: the command runs anyway. */
  started(pid: number): void {
    const startTime = processStartTime(pid);
    if (startTime === undefined) return;
    const record: ProcessRecord = { pgid: pid, startTime, bootId: this.bootId, serverPid: process.pid };
    try {
      fs.writeFileSync(path.join(this.directory, `${pid}.json`), `${JSON.stringify(record)}\n`, { mode: PRIVATE_FILE_MODE });
    } catch (error) {
      this.logger?.warn({ pid, error: (error as Error).message }, 'cannot record a started command; it would survive a crash of this server');
    }
  }

  /** Removes the record of a group whose leader ended (none when it could not be written). */
  ended(pid: number): void {
    // `unlinkSync`, not `rmSync`: one system call per command instead of a `lstat` and the checks of a recursive removal.
    try {
      fs.unlinkSync(path.join(this.directory, `${pid}.json`));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/** What {@link stopLeftoverProcesses} did. */
export interface LeftoverReport {
  /** Groups killed (their leaders were still the recorded processes). */
  stopped: ProcessRecord[];
  /** Records dropped without a signal: leader gone, pid reused, other boot, or unreadable. */
  dropped: number;
  /** Processes found by the dead server's command tag in their environment. */
  tagged: number;
}

/** True when the process's environment holds the tag (other users' processes cannot be read: false). */
function hasTag(pid: number, tag: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`${COMMAND_TAG_VARIABLE}=${tag}`);
  } catch {
    return false;
  }
}

/** Every process whose environment holds the tag. */
function processesWithTag(tag: string): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return entries.map(Number).filter((pid) => pid !== process.pid && hasTag(pid, tag));
}

function readRecord(file: string): ProcessRecord | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ProcessRecord>;
    if (Number.isInteger(value.pgid) && (value.pgid as number) > 1 && typeof value.startTime === 'string' && typeof value.bootId === 'string') return value as ProcessRecord;
  } catch {
    // Torn or foreign file: dropped below.
  }
  return undefined;
}

/** True when the recorded leader is alive and is the recorded process (same boot, same start time). */
function stillRecordedProcess(record: ProcessRecord, bootId: string): boolean {
  return record.bootId === bootId && processStartTime(record.pgid) === record.startTime;
}

/**
 * Stops the process groups recorded by a server that is gone (run on start, holding the data
 * directory's lock, before any turn runs): SIGTERM to each group whose leader is still the
 * recorded process and to its descendants that left the group, SIGKILL after a short grace
 * to whatever remains; then removes every record. Logs one line per group stopped.
 */
export async function stopLeftoverProcesses(dataDir: string, logger: Logger): Promise<LeftoverReport> {
  const directory = path.join(dataDir, PROCESS_RECORDS_DIRECTORY);
  const report: LeftoverReport = { stopped: [], dropped: 0, tagged: 0 };
  let names: string[];
  try {
    names = fs.readdirSync(directory);
  } catch {
    return report;
  }
  const bootId = currentBootId();
  let tag = '';
  try {
    tag = fs.readFileSync(path.join(directory, TAG_FILE), 'utf8').trim();
  } catch {
    // No tag: an older server, or none ever ran a command.
  }
  names = names.filter((name) => name !== TAG_FILE);
  // Descendants that left the group (setsid) are found through their parents, and each is
  // identified by its start time too, so a pid reused during the grace is never signalled.
  const targets: { record: ProcessRecord; members: { pid: number; startTime: string | undefined }[] }[] = [];
  for (const name of names) {
    const file = path.join(directory, name);
    const record = readRecord(file);
    if (record === undefined) logger.warn({ file }, 'a process record cannot be read (torn by a crash, or not a record); the command it named is still stopped if it carries the dead server\'s tag');
    if (record && record.serverPid !== process.pid && stillRecordedProcess(record, bootId)) {
      targets.push({ record, members: findDescendants(record.pgid).map((pid) => ({ pid, startTime: processStartTime(pid) })) });
    } else {
      report.dropped += 1;
    }
  }
  for (const { record, members } of targets) {
    // Checked again right before the signal: the leader may have ended since.
    if (!stillRecordedProcess(record, bootId)) continue;
    sendSignal(-record.pgid, 'SIGTERM');
    for (const member of members) if (member.startTime !== undefined && processStartTime(member.pid) === member.startTime) sendSignal(member.pid, 'SIGTERM');
    report.stopped.push(record);
    logger.warn({ pgid: record.pgid, serverPid: record.serverPid }, 'stopped a command left running by a server that stopped');
  }
  // Processes carrying the dead server's tag that the records did not reach.
  const tagged = /^[0-9a-f]{32}$/.test(tag) ? processesWithTag(tag) : [];
  for (const pid of tagged) sendSignal(pid, 'SIGTERM');
  if (tagged.length > 0) logger.warn({ processes: tagged.length }, 'stopped processes of commands left running by a server that stopped');
  report.tagged = tagged.length;
  const deadline = Date.now() + TERMINATE_GRACE_MS;
  while (Date.now() < deadline && targets.some(({ record }) => processExists(-record.pgid))) await new Promise((resolve) => setTimeout(resolve, 20));
  for (const { record, members } of targets) {
    // A group id is not reused while any member lives; a live leader must still be the recorded one.
    const leaderStart = processStartTime(record.pgid);
    if (processExists(-record.pgid) && (leaderStart === undefined || leaderStart === record.startTime)) sendSignal(-record.pgid, 'SIGKILL');
    for (const member of members) if (member.startTime !== undefined && processStartTime(member.pid) === member.startTime) sendSignal(member.pid, 'SIGKILL');
  }
  // Signalled again only while they still carry the tag: a pid reused in between is left alone.
  for (const pid of tagged) if (hasTag(pid, tag)) sendSignal(pid, 'SIGKILL');
  for (const name of [...names, TAG_FILE]) fs.rmSync(path.join(directory, name), { force: true });
  return report;
}
