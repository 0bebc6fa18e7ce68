/**
 * Keeps the project secrets' `.env` out of git (docs/platform.md, "Secrets"). The file lives
 * in the project's workspace, which is often a git checkout: without this, the agent's own
 * `git status` would list it and `git add -A` would commit the secrets. The server names the
 * file in the repository's `info/exclude`, which is local to the repository and never
 * committed, so no tracked file (such as `.gitignore`) changes. In a linked worktree `.git` is
 * a file pointing into the main repository; `git rev-parse --git-path info/exclude` finds the
 * exclude file shared by all of the repository's worktrees there.
 */
import type { Executor } from '../../executors/executor.js';
import { shellQuote } from '../../shell-quote.js';

/** Exit codes of the script below, beyond 0 (excluded, already ignored, or no repository). */
const EXIT = { noRepositoryInfo: 90, notWritable: 91, stillListed: 92, tracked: 93 } as const;

/** The comment line written above the pattern. */
const ENV_EXCLUDE_COMMENT = '# the secrets of an openvaala project (written by the server)';

/**
 * The shell script run in the workspace: nothing when git is missing, the directory is not in
 * a work tree, or the file is ignored already; a warning exit when the file is tracked (an
 * exclude cannot untrack it); else the file's path from the top of the work tree, with the
 * characters git reads as wildcards escaped, appended to `info/exclude` on a line of its own.
 */
function excludeScript(file: string): string {
  const quoted = shellQuote(file);
  return [
    'command -v git >/dev/null 2>&1 || exit 0',
    '[ "$(git rev-parse --is-inside-work-tree 2>/dev/null)" = true ] || exit 0',
    `git check-ignore -q -- ${quoted} 2>/dev/null && exit 0`,
    `git ls-files --error-unmatch -- ${quoted} >/dev/null 2>&1 && exit ${EXIT.tracked}`,
    `prefix=$(git rev-parse --show-prefix) || exit ${EXIT.noRepositoryInfo}`,
    `exclude=$(git rev-parse --git-path info/exclude) || exit ${EXIT.noRepositoryInfo}`,
    `pattern=$(printf '/%s%s' "$prefix" ${quoted} | sed 's/[][*?\\\\]/\\\\&/g')`,
    `mkdir -p "$(dirname "$exclude")" || exit ${EXIT.notWritable}`,
    `if [ -s "$exclude" ] && [ -n "$(tail -c 1 "$exclude")" ]; then printf '\\n' >> "$exclude" || exit ${EXIT.notWritable}; fi`,
    `printf '%s\\n' ${shellQuote(ENV_EXCLUDE_COMMENT)} "$pattern" >> "$exclude" || exit ${EXIT.notWritable}`,
    `git check-ignore -q -- ${quoted} || exit ${EXIT.stillListed}`,
  ].join('\n');
}

/**
 * Makes git ignore `<directory>/<file>` when `directory` is in a git work tree, by adding the
 * file to the repository's `info/exclude` (once: a file git already ignores is left alone).
 * Runs git on the executor, so it works the same locally, in a sandbox and over SSH.
 * @param executor the workspace's executor
 * @param directory the workspace directory (absolute)
 * @param file the file's name in it (`.env`)
 * @returns undefined when the file is ignored (or there is no repository, or no git); else a
 *   warning saying why it is not, for the server log (never thrown: the secrets still work)
 */
export async function excludeFromGit(executor: Executor, directory: string, file: string): Promise<string | undefined> {
  const where = `${directory}/${file} on executor "${executor.name}"`;
  let result;
  try {
    result = await executor.run({
      command: excludeScript(file),
      cwd: directory,
      workspaceRoot: directory,
      env: { GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
      timeoutMs: 30_000,
      maxOutputBytes: 8192,
    });
  } catch (error) {
    return `${where} could not be added to git's info/exclude: ${(error as Error).message}`;
  }
  const output = result.output.trim().slice(0, 500);
  switch (result.exitCode) {
    case 0:
      return undefined;
    case EXIT.tracked:
      return `${where} is tracked by git, so an exclude cannot keep it out of commits; untrack it (git rm --cached ${file}) and commit that`;
    case EXIT.stillListed:
      return `${where} was added to git's info/exclude but git still does not ignore it (a negating pattern in .gitignore?): ${output}`;
    default:
      return `${where} could not be added to git's info/exclude of its repository (exit ${String(result.exitCode)}): ${output}`;
  }
}
