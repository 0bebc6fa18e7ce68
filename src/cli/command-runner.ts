/**
 * What every command declaration of the command line shares: how a command's failure becomes
 * `openvaala: <command>: <message>` on stderr with an exit code, and the process's streams.
 */
import { printableText } from '../printable-text.js';
import { ExecExitCode } from './exit-codes.js';
import { UsageError } from './usage-error.js';

/** All of stdin, as UTF-8 text (for a prompt or a patch piped in). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Writes `openvaala: <message>` to stderr and exits with `code` (default 1). Control characters
 * in the message (it may quote a value typed or read from a file) are written as `\u` escapes.
 */
export function fail(message: string, code = 1): never {
  process.stderr.write(`openvaala: ${printableText(message)}\n`);
  process.exit(code);
}

/** The process's output streams, as the command modules take them. */
export const streams = { stdout: process.stdout, stderr: process.stderr };

/**
 * Runs a command's work and sets the exit code it returns; an error becomes
 * `openvaala: <command>: <message>` and exit 64 for a {@link UsageError} (sysexits.h), else 1.
 */
export async function run(command: string, work: () => Promise<number> | number): Promise<void> {
  try {
    process.exitCode = await work();
  } catch (error) {
    fail(`${command}: ${(error as Error).message}`, error instanceof UsageError ? ExecExitCode.usage : 1);
  }
}
