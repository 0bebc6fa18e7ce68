/**
 * The project secrets' block in the workspace `.env` (SPEC §9: "secrets written to the
 * workspace `.env` with mode 0600"). The server owns only the lines between its two marker
 * lines; every other line of the file is the user's and is kept byte for byte. The file is
 * replaced atomically (a temporary file with mode 0600 in the same directory, then a rename),
 * so a failed write leaves the previous file whole and no copy of a removed secret survives
 * a successful one. In a git repository the file is named in `info/exclude` before it is
 * written (`env-git-exclude.ts`), so it is never committed.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Executor } from '../../executors/executor.js';
import { shellQuote } from '../../shell-quote.js';
import { excludeFromGit } from './env-git-exclude.js';
import { envFileValue } from './secret-encodings.js';

/** First line of the managed block. */
export const ENV_BLOCK_BEGIN = '# >>> openvaala project secrets (managed by the server; edits inside this block are replaced) >>>';
/** Last line of the managed block. */
export const ENV_BLOCK_END = '# <<< openvaala project secrets <<<';
/** Name of the file in the workspace directory. */
export const ENV_FILE = '.env';

/**
 * The text of `.env` after replacing its managed block with one holding `secrets` (none:
 * no block). The user's lines keep their order and bytes; the block goes at the end.
 * @param current the file's text ('' when it does not exist)
 * @param secrets name → value, written in name order
 */
export function withManagedBlock(current: string, secrets: ReadonlyMap<string, string>): string {
  const lines = current === '' ? [] : current.split('\n');
  // A trailing newline splits into a last empty string: keep it out while editing.
  if (lines.at(-1) === '') lines.pop();
  const kept: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (line === ENV_BLOCK_BEGIN) inside = true;
    else if (line === ENV_BLOCK_END) inside = false;
    else if (!inside) kept.push(line);
  }
  if (secrets.size > 0) {
    kept.push(ENV_BLOCK_BEGIN);
    // Quoted and escaped values do not appear as themselves: the redactor hides this form too (`encodedForms`).
    for (const name of [...secrets.keys()].sort()) kept.push(`${name}=${envFileValue(secrets.get(name) ?? '')}`);
    kept.push(ENV_BLOCK_END);
  }
  return kept.length === 0 ? '' : `${kept.join('\n')}\n`;
}

/** What writing `.env` left to report. */
export interface EnvFileWrite {
  /** Why the file is not kept out of git although its workspace is in a repository (see `excludeFromGit`), for the server log. */
  gitWarning?: string;
}

/**
 * Rewrites the managed block of `<directory>/.env` on an executor, atomically and with mode
 * 0600. A file that does not exist and would hold nothing is not created. Before a file with
 * secrets is written, it is added to the `info/exclude` of the git repository holding the
 * workspace, if any (`excludeFromGit`), so the agent's `git add -A` never stages it.
 * @returns a warning when the file could not be kept out of git (the file is written all the same)
 * @throws Error naming the file when it cannot be read or replaced (the old file is then unchanged)
 */
export async function writeEnvFile(executor: Executor, directory: string, secrets: ReadonlyMap<string, string>): Promise<EnvFileWrite> {
  const file = path.posix.join(directory, ENV_FILE);
  const exists = (await executor.fs.stat(file)) !== undefined;
  const current = exists ? Buffer.from(await executor.fs.readFile(file)).toString('utf8') : '';
  if (!exists && secrets.size === 0) return {};
  const next = withManagedBlock(current, secrets);
  if (next === current) return {};
  // Excluded first, so the file is never there with secrets and visible to git.
  const gitWarning = next.includes(ENV_BLOCK_BEGIN) ? await excludeFromGit(executor, directory, ENV_FILE) : undefined;
  const written = gitWarning !== undefined ? { gitWarning } : {};
  if (executor.kind === 'local') {
    writeLocalAtomically(file, next);
    return written;
  }
  // Other executors: the shell writes the temporary file with umask 077, then renames it.
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const result = await executor.run({
    command: `umask 077 && printf '%s' "$OPENVAALA_ENV_TEXT" > ${shellQuote(temporary)} && chmod 600 ${shellQuote(temporary)} && mv -f ${shellQuote(temporary)} ${shellQuote(file)} || { rm -f ${shellQuote(temporary)}; exit 1; }`,
    cwd: directory,
    env: { OPENVAALA_ENV_TEXT: next },
    timeoutMs: 30_000,
    maxOutputBytes: 4096,
  });
  if (result.exitCode !== 0) throw new Error(`${file} on executor "${executor.name}": could not be replaced: ${result.output.trim().slice(0, 500)}`);
  return written;
}

function writeLocalAtomically(file: string, text: string): void {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const descriptor = fs.openSync(temporary, 'wx', 0o600);
    try {
      fs.writeFileSync(descriptor, text);
      fs.fsyncSync(descriptor);
    } finally {
      fs.closeSync(descriptor);
    }
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw new Error(`${file}: could not be replaced: ${(error as Error).message}`, { cause: error });
  }
}
