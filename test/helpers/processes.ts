/** Waiting on processes and conditions in tests. */
import { readFileSync } from 'node:fs';

/**
 * True when the process has ended. A process that ended but was not reaped yet still answers
 * signal 0; its `/proc` state (`Z`) says it is gone.
 */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

/** True when `file` exists and holds something besides whitespace (a pid file once written). */
export function fileWritten(file: string): boolean {
  try {
    return readFileSync(file, 'utf8').trim() !== '';
  } catch {
    return false;
  }
}

/** Polls `condition` every 20 ms. @throws Error naming `what` after `timeoutMs` */
export async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The command_id a still-running exec_command result names. @throws Error when there is none */
export function commandIdOf(output: string): string {
  const match = /command_id (cmd_[0-9a-z]+)/.exec(output);
  if (!match) throw new Error(`no command_id in: ${output}`);
  return match[1] as string;
}
