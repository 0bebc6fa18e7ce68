/**
 * `runtime-server.yaml` (SPEC §2): how local clients find the running server — url, token,
 * pid and data dir, readable by the owner only (mode 0600).
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';

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

/** Writes the file atomically (temp file + rename) with mode 0600. */
export function writeServerInfo(file: string, info: ServerInfo): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, stringify(info), { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/**
 * Reads the file.
 * @returns undefined when it does not exist
 * @throws Error naming the file and field when it exists but is malformed
 */
export function readServerInfo(file: string): ServerInfo | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed: unknown = parse(text);
  const problems = serverInfoProblems(parsed);
  if (problems.length > 0) throw new Error(`${file}: ${problems.join('; ')}`);
  const record = parsed as ServerInfo;
  // Only the known fields: a newer server may write more.
  return { url: record.url, token: record.token, pid: record.pid, dataDir: record.dataDir, ...(record.configDir !== undefined ? { configDir: record.configDir } : {}), startedAt: record.startedAt };
}

/** Removes the file if it still describes this process. */
export function removeServerInfo(file: string, pid = process.pid): void {
  try {
    if (readServerInfo(file)?.pid === pid) unlinkSync(file);
  } catch {
    // A malformed or vanished file is not ours to clean up.
  }
}
