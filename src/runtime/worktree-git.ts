/**
 * The git work behind conversation worktrees (docs/protocol.md, "Worktrees"): every command
 * runs through the conversation's executor like any other command, so a worktree is made and
 * merged on the machine that holds the repository, locally, over SSH or in a sandbox. Only
 * fixed scripts run; the values in them (paths, branch names) are shell-quoted and branch
 * names are checked first.
 */
import path from 'node:path';
import type { Executor } from '../executors/executor.js';
import { shellQuote } from '../shell-quote.js';
import { WORKTREE_DIFF_MAX_BYTES, type ConversationWorktree, type WorktreeFileChange } from '../protocol/index.js';

/** How long one git script may run, ms. */
const GIT_TIMEOUT_MS = 60_000;
/** Separator between parts of a script's output (ASCII record separator: never in paths git prints here). */
const RECORD = '\x1e';
/** Exit codes the scripts use to say what went wrong. */
const EXIT = {
  notRepository: 90,
  unknownBranch: 91,
  dirty: 92,
  noDirectory: 93,
  conflict: 94,
  notOnBase: 95,
  gitFailed: 96,
  outsideBound: 97,
  noGit: 127,
} as const;

/** Why a worktree operation was refused; `field` names the request field at fault, when one is. */
export class WorktreeError extends Error {
  /**
   * @param kind what went wrong: bad input (`invalid`), a state that refuses the request (`dirty`,
   *   `conflict`, `not_on_base`), or git being absent or failing
   * @param message human-readable, naming the path or branch
   * @param field request field at fault (`cwd`, `worktree.baseBranch`), when one is
   * @param conflictingFiles paths git reported as conflicting (merge and rebase)
   */
  constructor(
    readonly kind: 'invalid' | 'dirty' | 'conflict' | 'not_on_base' | 'git_unavailable' | 'git_failed',
    message: string,
    readonly field?: string,
    readonly conflictingFiles: string[] = [],
  ) {
    super(message);
    this.name = 'WorktreeError';
  }
}

/** A branch name git accepts and a shell cannot misread (a subset of git-check-ref-format). */
const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[A-Za-z0-9._/-]{1,200}(?<![./])$/;

/** Runs `body` in `cwd` on the executor after checking git and the repository; returns its result. */
async function runScript(executor: Executor, cwd: string, body: string, maxOutputBytes = 4 * 1024 * 1024, workspaceRoot = cwd): Promise<{ exitCode: number | null; output: string }> {
  const script = [
    `cd ${shellQuote(cwd)} 2>/dev/null || exit ${EXIT.noDirectory}`,
    `command -v git >/dev/null 2>&1 || exit ${EXIT.noGit}`,
    `problem=$(git rev-parse --git-dir 2>&1 >/dev/null) || { printf '%s' "$problem"; exit ${EXIT.notRepository}; }`,
    body,
  ].join('\n');
  const result = await executor.run({
    command: script,
    cwd: '/',
    workspaceRoot,
    // No credential prompts, no editor for merge messages, stable messages to match.
    env: { GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true', GIT_MERGE_AUTOEDIT: 'no', LC_ALL: 'C' },
    timeoutMs: GIT_TIMEOUT_MS,
    maxOutputBytes,
  });
  const where = `${cwd} on executor "${executor.name}"`;
  if (result.exitCode === EXIT.noGit) throw new WorktreeError('git_unavailable', `git is not installed on executor "${executor.name}"`);
  if (result.exitCode === EXIT.noDirectory) throw new WorktreeError('invalid', `${where} does not exist`, 'cwd');
  if (result.exitCode === EXIT.notRepository) throw new WorktreeError('invalid', `${where} is not in a git repository (git: ${result.output.trim().slice(0, 300)})`, 'cwd');
  if (result.timedOut) throw new WorktreeError('git_failed', `git timed out after ${GIT_TIMEOUT_MS} ms in ${where}`);
  return { exitCode: result.exitCode, output: result.output };
}

function failed(what: string, output: string): WorktreeError {
  return new WorktreeError('git_failed', `${what} failed: ${output.trim().slice(0, 500)}`);
}

/** Where worktrees go inside a checkout that is the directory they must stay in (kept out of `git status` by `info/exclude`). */
const NESTED_WORKTREES_DIRECTORY = '.openvaala/worktrees';

/**
 * Script lines choosing the worktree's `path` and making its folder: next to the checkout in
 * `<checkout>.worktrees/<shortId>`; with `within`, only inside that directory (real paths
 * compared): next to the checkout when that lies below `within`, in the checkout's own
 * `.openvaala/worktrees/<shortId>` (excluded from git) when the checkout is `within`, and
 * refused when the checkout is above it, as a worktree of it would hold what lies outside.
 */
function placement(shortId: string, within: string | undefined): string[] {
  const beside = [`path="$top.worktrees/${shortId}"`, 'mkdir -p "$top.worktrees" || exit 96'];
  if (within === undefined) return beside;
  return [
    `within=$(cd ${shellQuote(within)} 2>/dev/null && pwd -P) || { printf '%s' ${shellQuote(within)}; exit ${EXIT.outsideBound}; }`,
    'case "$top" in',
    `  "$within") path="$top/${NESTED_WORKTREES_DIRECTORY}/${shortId}"; mkdir -p "$top/${NESTED_WORKTREES_DIRECTORY}" || exit 96`,
    `    exclude=$(git rev-parse --git-path info/exclude) || exit 96; mkdir -p "$(dirname "$exclude")" || exit 96`,
    `    grep -qxF '/${NESTED_WORKTREES_DIRECTORY}/' "$exclude" 2>/dev/null || printf '\n/${NESTED_WORKTREES_DIRECTORY}/\n' >> "$exclude" || exit 96 ;;`,
    `  "$within"/*) ${beside.join('; ')} ;;`,
    `  *) printf '%s' "$top"; exit ${EXIT.outsideBound} ;;`,
    'esac',
  ];
}

/**
 * Creates a worktree and branch `openvaala/<shortId>` for a conversation, from the base branch
 * (default: the branch checked out in `cwd`'s checkout, or its commit when detached), next to
 * the checkout in `<checkout>.worktrees/<shortId>`.
 * @param executor where the repository is
 * @param cwd a directory inside the main checkout (a subdirectory maps to the same one in the worktree)
 * @param shortId the conversation's short id (letters and digits)
 * @param baseBranch a local branch name to start from
 * @param within a directory the worktree and the checkout it comes from must lie in (a project's
 *   workspace, for a caller held to it); the worktree is then placed inside it (see `placement`)
 *   and git may write only there in a sandbox
 * @returns the worktree record and the working directory for the conversation
 * @throws WorktreeError `invalid` naming `cwd` (not a repository, no commit yet, a checkout
 *   reaching outside `within`) or `worktree.baseBranch` (not a branch name, unknown branch)
 */
export async function createWorktree(executor: Executor, cwd: string, shortId: string, baseBranch: string | undefined, within?: string): Promise<{ worktree: ConversationWorktree; cwd: string }> {
  if (baseBranch !== undefined && !BRANCH.test(baseBranch)) throw new WorktreeError('invalid', `"${baseBranch.slice(0, 200)}" is not a branch name git accepts`, 'worktree.baseBranch');
  const branch = `openvaala/${shortId}`;
  const body = [
    'top=$(git rev-parse --show-toplevel) || exit 96',
    'prefix=$(git rev-parse --show-prefix)',
    baseBranch !== undefined
      ? `base=${shellQuote(baseBranch)}; git rev-parse -q --verify "refs/heads/$base^{commit}" >/dev/null || exit ${EXIT.unknownBranch}`
      : 'base=$(git symbolic-ref -q --short HEAD || true)',
    `commit=$(git rev-parse -q --verify "\${base:-HEAD}^{commit}") || { echo 'the repository has no commit yet'; exit ${EXIT.notRepository}; }`,
    ...placement(shortId, within),
    `git worktree add -q -b ${shellQuote(branch)} "$path" "$commit" 2>&1 || exit ${EXIT.gitFailed}`,
    `printf '${RECORD}%s${RECORD}%s${RECORD}%s${RECORD}%s${RECORD}%s' "$top" "$path" "$prefix" "$base" "$commit"`,
  ].join('\n');
  const result = await runScript(executor, cwd, body, undefined, within ?? cwd);
  if (result.exitCode === EXIT.outsideBound) {
    throw new WorktreeError(
      'invalid',
      `the git repository holding ${cwd} on executor "${executor.name}" has its checkout at ${result.output.trim()}, which is not inside ${within}; a worktree of it would hold and change what lies outside that directory, so it is refused; make the worktree from a repository of its own inside it`,
      'cwd',
    );
  }
  if (result.exitCode === EXIT.unknownBranch) throw new WorktreeError('invalid', `no local branch "${baseBranch}" in the repository of ${cwd} on executor "${executor.name}"`, 'worktree.baseBranch');
  if (result.exitCode !== 0) throw failed(`git worktree add in ${cwd} on executor "${executor.name}"`, result.output);
  const [, repositoryRoot = '', worktreePath = '', prefix = '', base = '', commit = ''] = result.output.slice(result.output.indexOf(RECORD)).split(RECORD);
  const worktree: ConversationWorktree = { executor: executor.name, repositoryRoot, path: worktreePath, branch, baseCommit: commit.trim(), ...(base !== '' ? { baseBranch: base } : {}) };
  return { worktree, cwd: prefix === '' ? worktreePath : `${worktreePath}/${prefix.replace(/\/$/, '')}` };
}

/** The base a worktree is compared and merged against: its base branch, or its base commit. */
function baseOf(worktree: ConversationWorktree): string {
  return worktree.baseBranch !== undefined ? `refs/heads/${worktree.baseBranch}` : worktree.baseCommit;
}

/**
 * The worktree's changes against its base branch: committed and uncommitted changes of tracked
 * files since the merge base (`git diff <merge-base>`), and untracked files by name.
 * @returns the changed files, the unified diff (at most `WORKTREE_DIFF_MAX_BYTES`, cut at a line end) and whether it was cut
 */
export async function worktreeDiff(executor: Executor, worktree: ConversationWorktree): Promise<{ mergeBase: string; files: WorktreeFileChange[]; diff: string; truncated: boolean }> {
  const body = [
    `mb=$(git merge-base HEAD ${shellQuote(baseOf(worktree))}) || exit ${EXIT.unknownBranch}`,
    `printf '%s${RECORD}' "$mb"`,
    'git diff --no-color --no-ext-diff --name-status "$mb" || exit 96',
    `printf '${RECORD}'`,
    'git ls-files --others --exclude-standard || exit 96',
    `printf '${RECORD}'`,
    `git --no-pager diff --no-color --no-ext-diff --no-textconv "$mb" | head -c ${WORKTREE_DIFF_MAX_BYTES + 1}`,
  ].join('\n');
  const result = await runScript(executor, worktree.path, body, 2 * WORKTREE_DIFF_MAX_BYTES + 1024 * 1024);
  if (result.exitCode === EXIT.unknownBranch) throw new WorktreeError('invalid', `the base ${worktree.baseBranch !== undefined ? `branch "${worktree.baseBranch}"` : `commit ${worktree.baseCommit}`} is no longer in the repository`);
  if (result.exitCode !== 0) throw failed('git diff', result.output);
  const [mergeBase = '', nameStatus = '', untracked = '', ...rest] = result.output.split(RECORD);
  const files: WorktreeFileChange[] = nameStatus.split('\n').filter(Boolean).map((line) => {
    const [status = '', ...paths] = line.split('\t');
    return { status: status.charAt(0), path: paths[paths.length - 1] ?? '' };
  });
  for (const file of untracked.split('\n').filter(Boolean)) files.push({ status: '?', path: file });
  const diff = rest.join(RECORD);
  const truncated = Buffer.byteLength(diff) > WORKTREE_DIFF_MAX_BYTES;
  const cut = truncated ? Buffer.from(diff).subarray(0, WORKTREE_DIFF_MAX_BYTES).toString('utf8') : diff;
  return { mergeBase: mergeBase.trim(), files, diff: truncated ? cut.slice(0, cut.lastIndexOf('\n') + 1) : cut, truncated };
}

/** Script lines that refuse a checkout with uncommitted changes (untracked files included), listing them. */
function refuseDirty(): string {
  return `dirty=$(git status --porcelain --untracked-files=normal) || exit 96; if [ -n "$dirty" ]; then printf '%s' "$dirty"; exit ${EXIT.dirty}; fi`;
}

function dirtyFiles(output: string): string[] {
  return output.split('\n').filter(Boolean).map((line) => line.slice(3));
}

/**
 * Merges the worktree's branch into its base branch, in the main checkout, with a merge commit
 * (`git merge --no-ff`). A conflict aborts the merge (`git merge --abort`): the checkout is
 * left as it was, and the error lists the conflicting files.
 * @returns the merge commit
 * @throws WorktreeError `invalid` when the worktree has no base branch; `dirty` (worktree or
 *   main checkout has uncommitted changes, listed); `not_on_base` (the main checkout has
 *   another branch checked out); `conflict` with `conflictingFiles`
 */
export async function mergeWorktree(executor: Executor, worktree: ConversationWorktree, message: string): Promise<{ commit: string }> {
  if (worktree.baseBranch === undefined) throw new WorktreeError('invalid', `the worktree was made from commit ${worktree.baseCommit}, not a branch: there is no base branch to merge into`);
  const own = await runScript(executor, worktree.path, refuseDirty());
  if (own.exitCode === EXIT.dirty) throw new WorktreeError('dirty', `the worktree ${worktree.path} has uncommitted changes (${dirtyFiles(own.output).join(', ')}); commit or discard them first`, undefined, dirtyFiles(own.output));
  if (own.exitCode !== 0) throw failed('git status', own.output);
  const body = [
    `current=$(git symbolic-ref -q --short HEAD || true); if [ "$current" != ${shellQuote(worktree.baseBranch)} ]; then printf '%s' "$current"; exit ${EXIT.notOnBase}; fi`,
    refuseDirty(),
    `if ! git merge -q --no-ff -m ${shellQuote(message)} ${shellQuote(worktree.branch)} >/dev/null 2>&1; then`,
    `  conflicts=$(git diff --name-only --diff-filter=U); git merge --abort >/dev/null 2>&1; printf '%s' "$conflicts"; exit ${EXIT.conflict}`,
    'fi',
    'git rev-parse HEAD',
  ].join('\n');
  const result = await runScript(executor, worktree.repositoryRoot, body);
  if (result.exitCode === EXIT.notOnBase) throw new WorktreeError('not_on_base', `the main checkout ${worktree.repositoryRoot} has ${result.output.trim() === '' ? 'a detached HEAD' : `branch "${result.output.trim()}"`} checked out, not the base branch "${worktree.baseBranch}"; check out "${worktree.baseBranch}" there first`);
  if (result.exitCode === EXIT.dirty) throw new WorktreeError('dirty', `the main checkout ${worktree.repositoryRoot} has uncommitted changes (${dirtyFiles(result.output).join(', ')}); commit or stash them first`, undefined, dirtyFiles(result.output));
  if (result.exitCode === EXIT.conflict) {
    const files = result.output.split('\n').filter(Boolean);
    throw new WorktreeError('conflict', `merging ${worktree.branch} into ${worktree.baseBranch} conflicts in ${files.join(', ')}; the merge was aborted and ${worktree.repositoryRoot} is unchanged`, undefined, files);
  }
  if (result.exitCode !== 0) throw failed(`git merge in ${worktree.repositoryRoot}`, result.output);
  return { commit: result.output.trim().split('\n').pop() ?? '' };
}

/**
 * Rebases the worktree's branch onto its base branch (`git rebase`), in the worktree. A conflict
 * aborts the rebase (`git rebase --abort`), leaving the branch as it was.
 * @returns the new head commit of the worktree
 * @throws WorktreeError `invalid` (no base branch), `dirty`, `conflict` with `conflictingFiles`
 */
export async function rebaseWorktree(executor: Executor, worktree: ConversationWorktree): Promise<{ commit: string }> {
  if (worktree.baseBranch === undefined) throw new WorktreeError('invalid', `the worktree was made from commit ${worktree.baseCommit}, not a branch: there is no base branch to rebase onto`);
  const body = [
    refuseDirty(),
    `if ! git rebase -q ${shellQuote(worktree.baseBranch)} >/dev/null 2>&1; then`,
    `  conflicts=$(git diff --name-only --diff-filter=U); git rebase --abort >/dev/null 2>&1; printf '%s' "$conflicts"; exit ${EXIT.conflict}`,
    'fi',
    'git rev-parse HEAD',
  ].join('\n');
  const result = await runScript(executor, worktree.path, body);
  if (result.exitCode === EXIT.dirty) throw new WorktreeError('dirty', `the worktree ${worktree.path} has uncommitted changes (${dirtyFiles(result.output).join(', ')}); commit or discard them first`, undefined, dirtyFiles(result.output));
  if (result.exitCode === EXIT.conflict) {
    const files = result.output.split('\n').filter(Boolean);
    throw new WorktreeError('conflict', `rebasing ${worktree.branch} onto ${worktree.baseBranch} conflicts in ${files.join(', ')}; the rebase was aborted and the worktree is unchanged`, undefined, files);
  }
  if (result.exitCode !== 0) throw failed(`git rebase in ${worktree.path}`, result.output);
  return { commit: result.output.trim().split('\n').pop() ?? '' };
}

/**
 * Removes the worktree (uncommitted changes included) and deletes its branch, from the main
 * checkout. A worktree already gone is pruned; a branch already gone is fine.
 */
export async function removeWorktree(executor: Executor, worktree: ConversationWorktree): Promise<void> {
  const body = [
    `if [ -e ${shellQuote(worktree.path)} ]; then git worktree remove --force ${shellQuote(worktree.path)} 2>&1 || exit 96; else git worktree prune; fi`,
    `if git rev-parse -q --verify ${shellQuote(`refs/heads/${worktree.branch}`)} >/dev/null; then git branch -q -D ${shellQuote(worktree.branch)} 2>&1 || exit 96; fi`,
    // The folder holding worktrees goes once the last one does (rmdir keeps a non-empty one).
    `rmdir ${shellQuote(path.posix.dirname(worktree.path))} 2>/dev/null || true`,
  ].join('\n');
  const result = await runScript(executor, worktree.repositoryRoot, body);
  if (result.exitCode !== 0) throw failed(`removing worktree ${worktree.path}`, result.output);
}
