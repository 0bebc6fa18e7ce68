/**
 * `runtime-server.yaml` (SPEC §2): how local clients find the running server — url, token,
 * pid and data dir, readable by the owner only (mode 0600).
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { z } from 'zod';

/** Contents of `runtime-server.yaml`. */
export const ServerInfoSchema = z.object({
  /** Base URL, e.g. `http://127.0.0.1:8790`. */
  url: z.string(),
  /** Bearer token for the WebSocket API. */
  token: z.string(),
  pid: z.number().int(),
  dataDir: z.string(),
  /** Configuration directory the server loaded (absent in files written by older versions). */
  configDir: z.string().optional(),
  /** ms since the epoch. */
  startedAt: z.number(),
});
/** Contents of `runtime-server.yaml`. */
export type ServerInfo = z.infer<typeof ServerInfoSchema>;

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
  const parsed = ServerInfoSchema.safeParse(parse(text));
  if (!parsed.success) {
    throw new Error(`${file}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`);
  }
  return parsed.data;
}

/** Removes the file if it still describes this process. */
export function removeServerInfo(file: string, pid = process.pid): void {
  try {
    if (readServerInfo(file)?.pid === pid) unlinkSync(file);
  } catch {
    // A malformed or vanished file is not ours to clean up.
  }
}
