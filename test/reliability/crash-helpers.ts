/** Helpers of the crash tests: reading a data directory's logs directly, waiting for files. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Item, Turn } from '../../src/protocol/index.js';

/** The JSON lines of a file (a torn last line is left out). */
export function readJsonLines(file: string): unknown[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as unknown];
      } catch {
        return [];
      }
    });
}

/** The value of a log line (log lines wrap it with their seq). */
function valueOf(line: unknown): unknown {
  return typeof line === 'object' && line !== null && 'value' in line ? (line as { value: unknown }).value : line;
}

/** The last recorded state of every turn of a conversation, read from its metadata log on disk. */
export function turnsOnDisk(dataDir: string, conversationId: string): Map<string, Turn> {
  const turns = new Map<string, Turn>();
  for (const line of readJsonLines(path.join(dataDir, 'conversations', conversationId, 'metadata.jsonl'))) {
    const entry = valueOf(line) as { type?: string; turn?: Turn };
    if (entry.type === 'turn' && entry.turn) turns.set(entry.turn.id, entry.turn);
  }
  return turns;
}

/** The items of one session's log on disk. */
export function itemsOnDisk(dataDir: string, conversationId: string, sessionId: string): Item[] {
  return readJsonLines(path.join(dataDir, 'conversations', conversationId, `${sessionId}.jsonl`)).map((line) => valueOf(line) as Item);
}

/** Waits until a file exists with non-empty content; returns the content trimmed. */
export async function waitForFileContent(file: string, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(file)) {
      const text = readFileSync(file, 'utf8').trim();
      if (text) return text;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${file} did not appear within ${timeoutMs} ms`);
}

/** Sends SIGKILL to a process, ignoring one that is gone. */
export function killQuietly(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
