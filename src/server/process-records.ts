/**
 * Commands a dead server left running. A server killed with SIGKILL cannot stop the commands
 * its turns started, and they would go on changing files while the turn shows `interrupted`.
 * So the server records each process group it starts in a journal,
 * `<dataDir>/processes/journal.jsonl` (one line when a group starts, one when its leader ends),
 * and on start stops the groups a predecessor's journal leaves open. One append per start and
 * per end keeps the record out of a step's cost: a file per command (create, later unlink)
 * cost a command step about 5 % of the server's CPU (docs/performance.md, twenty-first round).
 * Records of older servers, one `<pid>.json` file per group, are still read.
 *
 * A pid may have been reused since the record was written: a group is only killed when its
 * leader is alive with the recorded start time (`/proc/<pid>/stat` field 22, clock ticks
 * since boot) on the same boot (`/proc/sys/kernel/random/boot_id`). A (pid, start time) pair
 * names one process per boot, so an unrelated process is never signalled. Linux only; where
 * `/proc` is missing nothing is recorded.
 *
 * The journal is not synced: it guards against the server's death, which leaves written pages
 * to the kernel, not against the machine's, which ends the commands too.
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
/** The running server's journal of process groups, in the records folder. */
export const PROCESS_JOURNAL_FILE = 'journal.jsonl';
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
/**
 * Lines appended to the journal before it is rewritten with only the groups still running
 * (about 60 bytes a line: a journal stays under about 250 KB however many commands run).
 */
const COMPACT_AFTER_LINES = 4096;

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

/** First line of a journal: whose records follow. */
interface JournalHeader {
  bootId: string;
  serverPid: number;
}

/** The journal's lines after its header: a group started, or its leader ended. */
type JournalLine = { started: number; startTime: string } | { ended: number };

/** Writes the journal of one server's process groups (see the module comment). */
export class ProcessRecords implements ProcessTracker {
  private readonly directory: string;
  private readonly journalFile: string;
  private readonly header: string;
  /** Groups started and not yet ended: pgid → the leader's start time. */
  private readonly running = new Map<number, string>();
  private descriptor: number | undefined;
  /** Set by {@link close}: the server is stopping and writes no more. */
  private stopped = false;
  private linesWritten = 0;
  /** See {@link COMMAND_TAG_VARIABLE}: random, one per server. */
  readonly environment: Record<string, string>;

  /**
   * Writes the tag file and starts an empty journal (a predecessor's must have been read first,
   * see {@link stopLeftoverProcesses}).
   * @param dataDir the server's data directory (records go to its `processes` folder, mode 0700)
   * @throws the file system's error when the folder, the tag or the journal cannot be written
   */
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
    this.journalFile = path.join(this.directory, PROCESS_JOURNAL_FILE);
    const header: JournalHeader = { bootId: currentBootId(), serverPid: process.pid };
    this.header = `${JSON.stringify(header)}\n`;
    this.rewriteJournal();
  }

  /** Records a group whose leader was just started. A failure is logged: the command runs anyway. */
  started(pid: number): void {
    const startTime = processStartTime(pid);
    if (startTime === undefined) return;
    this.running.set(pid, startTime);
    this.append({ started: pid, startTime }, 'cannot record a started command; it would survive a crash of this server');
  }

  /** Records that the leader of a group ended (nothing for a group that was never recorded). */
  ended(pid: number): void {
    if (!this.running.delete(pid)) return;
    this.append({ ended: pid }, 'cannot record the end of a command; the next start will find it gone');
    if (this.linesWritten >= COMPACT_AFTER_LINES) {
      try {
        this.rewriteJournal();
      } catch (error) {
        // Tried again after as many lines, not at every end: one warning per attempt.
        this.linesWritten = 0;
        this.logger?.warn({ error: (error as Error).message }, 'cannot rewrite the journal of running commands; it keeps growing');
      }
    }
  }

  /** Stops writing (the server is stopping); the journal stays for the next start to read. */
  close(): void {
    this.stopped = true;
    this.closeDescriptor();
  }

  private closeDescriptor(): void {
    if (this.descriptor !== undefined) fs.closeSync(this.descriptor);
    this.descriptor = undefined;
  }

  private append(line: JournalLine, failure: string): void {
    // After `close` (the server stopping) a late end is left out: the next start finds the process gone.
    if (this.stopped) return;
    try {
      // Opened again here when a rewrite could not reopen it: each failure is told, none is silent.
      this.descriptor ??= fs.openSync(this.journalFile, 'a', PRIVATE_FILE_MODE);
      fs.writeSync(this.descriptor, `${JSON.stringify(line)}\n`);
      this.linesWritten += 1;
    } catch (error) {
      this.logger?.warn({ line, error: (error as Error).message }, failure);
    }
  }

  /** Replaces the journal, whole or not at all, by its header and the groups still running. */
  private rewriteJournal(): void {
    const lines = [...this.running].map(([started, startTime]) => `${JSON.stringify({ started, startTime } satisfies JournalLine)}\n`);
    writeFileAtomicallySync(this.journalFile, this.header + lines.join(''), { mode: PRIVATE_FILE_MODE });
    this.closeDescriptor();
    this.descriptor = fs.openSync(this.journalFile, 'a', PRIVATE_FILE_MODE);
    this.linesWritten = lines.length;
  }
}

/** What a journal, or an older server's record files, say is still running; see {@link recordedProcessGroups}. */
export interface RecordedGroups {
  /** Groups started and not ended, in the order they started. */
  records: ProcessRecord[];
  /** Files or lines that cannot be read (torn by a crash, or not records), as `file` or `file:line`. */
  unreadable: string[];
}

/**
 * Reads one journal: its header, then each group started and not ended. A line that does not
 * parse is named in `unreadable` and skipped (a crash can tear the last one); a journal without
 * a readable header gives no records.
 */
function readJournal(file: string): RecordedGroups {
  const result: RecordedGroups = { records: [], unreadable: [] };
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return result;
  }
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let header: JournalHeader | undefined;
  try {
    const value = JSON.parse(lines[0] ?? '') as Partial<JournalHeader>;
    if (typeof value.bootId === 'string' && Number.isInteger(value.serverPid)) header = value as JournalHeader;
  } catch {
    // Named as unreadable below.
  }
  if (header === undefined) return { records: [], unreadable: [`${file}:1`] };
  const running = new Map<number, string>();
  lines.slice(1).forEach((line, index) => {
    let value: Partial<{ started: unknown; startTime: unknown; ended: unknown }> | undefined;
    try {
      value = JSON.parse(line) as typeof value;
    } catch {
      value = undefined;
    }
    if (value !== undefined && isGroupId(value.started) && typeof value.startTime === 'string') running.set(value.started, value.startTime);
    else if (value !== undefined && isGroupId(value.ended)) running.delete(value.ended);
    else result.unreadable.push(`${file}:${index + 2}`);
  });
  result.records = [...running].map(([pgid, startTime]) => ({ pgid, startTime, bootId: header.bootId, serverPid: header.serverPid }));
  return result;
}

/** A process group id a record may name: never 0 or 1 (signalling those reaches far beyond one command). */
function isGroupId(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) > 1;
}

function readRecord(file: string): ProcessRecord | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ProcessRecord>;
    if (isGroupId(value.pgid) && typeof value.startTime === 'string' && typeof value.bootId === 'string') return value as ProcessRecord;
  } catch {
    // Torn or foreign file: named as unreadable.
  }
  return undefined;
}

/**
 * The process groups recorded in a data directory's records folder and not recorded as ended:
 * those of its journal, then those of older servers' `<pid>.json` files.
 * @param dataDir the data directory
 */
export function recordedProcessGroups(dataDir: string): RecordedGroups {
  const directory = path.join(dataDir, PROCESS_RECORDS_DIRECTORY);
  let names: string[];
  try {
    names = fs.readdirSync(directory);
  } catch {
    return { records: [], unreadable: [] };
  }
  const result = readJournal(path.join(directory, PROCESS_JOURNAL_FILE));
  for (const name of names) {
    if (name === PROCESS_JOURNAL_FILE || name === TAG_FILE) continue;
    const file = path.join(directory, name);
    const record = readRecord(file);
    if (record === undefined) result.unreadable.push(file);
    else result.records.push(record);
  }
  return result;
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
  const recorded = recordedProcessGroups(dataDir);
  for (const where of recorded.unreadable) {
    logger.warn({ where }, 'a process record cannot be read (torn by a crash, or not a record); the command it named is still stopped if it carries the dead server\'s tag');
  }
  report.dropped += recorded.unreadable.length;
  // Descendants that left the group (setsid) are found through their parents, and each is
  // identified by its start time too, so a pid reused during the grace is never signalled.
  const targets: { record: ProcessRecord; members: { pid: number; startTime: string | undefined }[] }[] = [];
  for (const record of recorded.records) {
    if (record.serverPid !== process.pid && stillRecordedProcess(record, bootId)) {
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
  for (const name of names) fs.rmSync(path.join(directory, name), { force: true });
  return report;
}
