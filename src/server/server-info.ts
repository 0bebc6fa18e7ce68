/**
 * `runtime-server.yaml` (SPEC §2): how local clients find the running server — url, token,
 * pid and data dir, readable by the owner only (mode 0600).
 */
import { closeSync, fchmodSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { makeDirectorySync } from '../make-directory.js';

/** Contents of `runtime-server.yaml`. */
export interface ServerInfo {
  /** Base URL, e.g. `http://127.0.0.1:8790`. */
  url: string;
  /** Bearer token for the WebSocket API. */
  token: string;
  pid: number;
  dataDir: string;
  /** Configuration directory the server loaded (absent in files written by older versions). */
  configDir?: string;
  /** ms since the epoch. */
  startedAt: number;
}

/** The fields of {@link ServerInfo}, each with whether it is optional and a check of its value. */
const FIELDS: readonly { key: keyof ServerInfo; optional: boolean; check: (value: unknown) => string | undefined }[] = [
  { key: 'url', optional: false, check: (value) => (typeof value === 'string' ? undefined : 'expected a string') },
  { key: 'token', optional: false, check: (value) => (typeof value === 'string' ? undefined : 'expected a string') },
  { key: 'pid', optional: false, check: (value) => (Number.isInteger(value) ? undefined : 'expected an integer') },
  { key: 'dataDir', optional: false, check: (value) => (typeof value === 'string' ? undefined : 'expected a string') },
  { key: 'configDir', optional: true, check: (value) => (typeof value === 'string' ? undefined : 'expected a string') },
  { key: 'startedAt', optional: false, check: (value) => (typeof value === 'number' && Number.isFinite(value) ? undefined : 'expected a number') },
];

/**
 * Checks the parsed contents of a server file. Checked by hand rather than with a zod schema:
 * every client command reads this file, and building zod (its core and this schema) was a
 * measurable part of a client's start-up time and memory.
 * @returns the problems, each `<key path>: <message>` (`(root)` for the document), empty when valid
 */
export function serverInfoProblems(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['(root): expected a mapping'];
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const field of FIELDS) {
    const given = record[field.key];
    if (given === undefined) {
      if (!field.optional) problems.push(`${field.key}: missing`);
      continue;
    }
    const problem = field.check(given);
    if (problem) problems.push(`${field.key}: ${problem}`);
  }
  return problems;
}

/**
 * Writes the file so that a reader, or the next start after a crash, sees either the old file
 * or the whole new one: a temporary file in the same directory (mode 0600), flushed to disk,
 * then renamed over it. Its directory is created (mode 0700) when missing.
 * @throws Error naming the file when it cannot be written (nothing is left behind then)
 */
export function writeServerInfo(file: string, info: ServerInfo): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    makeDirectorySync(path.dirname(file), 0o700);
    const descriptor = openSync(temporary, 'w', 0o600);
    try {
      writeSync(descriptor, stringify(info));
      // A temporary file left by a dead process that had this pid keeps its own mode when opened again.
      fchmodSync(descriptor, 0o600);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    renameSync(temporary, file);
  } catch (error) {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Never made (its directory is missing or not one): nothing to remove.
    }
    throw new Error(`cannot write the server file ${file}: ${(error as Error).message}`, { cause: error });
  }
}

/** A server file that exists but cannot be read or does not describe a server. */
export class DamagedServerInfoError extends Error {
  constructor(
    readonly file: string,
    /** What is wrong, e.g. `not valid YAML: …` or `url: missing`. */
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'DamagedServerInfoError';
  }
}

/**
 * Reads the file.
 * @returns undefined when it does not exist
 * @throws DamagedServerInfoError naming the file and what is wrong (every wrong or missing field) when it exists but cannot be read or is malformed
 */
export function readServerInfo(file: string): ServerInfo | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new DamagedServerInfoError(file, `cannot read: ${(error as Error).message}`);
  }
  // What a system crash can leave of a write whose data had not reached the disk yet.
  if (text.trim() === '') throw new DamagedServerInfoError(file, 'empty');
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    // The parser's message goes on with a picture of the line; its first line says it all.
    throw new DamagedServerInfoError(file, `not valid YAML: ${(error as Error).message.split('\n')[0]?.replace(/:$/, '')}`);
  }
  const problems = serverInfoProblems(parsed);
  if (problems.length > 0) throw new DamagedServerInfoError(file, problems.join('; '));
  const record = parsed as ServerInfo;
  // Only the known fields: a newer server may write more.
  return { url: record.url, token: record.token, pid: record.pid, dataDir: record.dataDir, ...(record.configDir !== undefined ? { configDir: record.configDir } : {}), startedAt: record.startedAt };
}

/**
 * Reads the file, taking one that cannot be read or is malformed for one that describes no
 * server: only servers write it, for clients to find them, so a damaged one (a torn write of an
 * older version, a disk error, a hand edit) holds nothing to keep, and refusing it would block
 * every start until someone removed it by hand. The next server start overwrites it.
 * @param onDamaged told what is wrong with a damaged file (the file and the problem)
 * @returns undefined when the file does not exist or is damaged
 */
export function readServerInfoIfSound(file: string, onDamaged: (error: DamagedServerInfoError) => void): ServerInfo | undefined {
  try {
    return readServerInfo(file);
  } catch (error) {
    if (!(error instanceof DamagedServerInfoError)) throw error;
    onDamaged(error);
    return undefined;
  }
}

/** Removes the file if it still describes this process (a damaged or vanished one is left as it is). */
export function removeServerInfo(file: string, pid = process.pid): void {
  try {
    if (readServerInfo(file)?.pid === pid) unlinkSync(file);
  } catch {
    // A damaged or vanished file is not ours to clean up.
  }
}
