/**
 * `workspace/gitLog` and `workspace/gitShow` (docs/protocol.md, "Workspace git history"): run
 * `git` in the working directory of a conversation's executor, through the executor like any
 * command, so local, SSH and sandboxed executors all answer the same way. Only fixed command
 * lines are run; the one value from the client, a commit hash, is checked to be hex first.
 */
import type { Workspace } from '../../executors/workspace.js';
import { shellQuote } from '../../shell-quote.js';
import { ErrorCodes, GIT_LOG_DEFAULT_LIMIT, GIT_SHOW_MAX_DIFF_BYTES, RpcError, type GitCommit, type MethodParams, type MethodResult } from '../../protocol/index.js';
import type { RpcConnection } from '../rpc-connection.js';
import { workspaceOf } from './workspace.js';

/** How long one git command may run, ms. */
const GIT_TIMEOUT_MS = 30_000;
/** Bytes of commit metadata and message `workspace/gitShow` reads besides the diff. */
const GIT_SHOW_MESSAGE_BYTES = 64 * 1024;
/** Separators in git's output (ASCII unit and record separators: never in names or subjects). */
const FIELD = '\x1f';
const RECORD = '\x1e';
/** Exit codes the scripts below use to say what went wrong before git ran. */
const EXIT = { notRepository: 90, unknownCommit: 91, noDirectory: 93, noGit: 127 } as const;

/** A `workspace/gitLog` cursor: the commit the listing started from and how many it has returned. */
const CURSOR = /^([0-9a-f]{40}|[0-9a-f]{64})\.(\d{1,9})$/;

type GitMethod = 'workspace/gitLog' | 'workspace/gitShow';
/** The handlers of the workspace git history, bound to one connection. */
export type WorkspaceGitHandlers = { [M in GitMethod]: (params: MethodParams<M>) => Promise<MethodResult<M>> };

/**
 * Runs `body` in the workspace root after checking that git exists and the root is in a
 * repository; returns git's output.
 * @throws RpcError conflict `git_unavailable` / `not_a_git_repository` (quoting git), notFound
 *   for an unknown commit (exit 91 of `body`), Error for any other failure
 */
async function runGit(workspace: Workspace, method: string, body: string, maxOutputBytes: number): Promise<string> {
  const script = [
    `cd ${shellQuote(workspace.root)} 2>/dev/null || exit ${EXIT.noDirectory}`,
    `command -v git >/dev/null 2>&1 || exit ${EXIT.noGit}`,
    `problem=$(git rev-parse --git-dir 2>&1 >/dev/null) || { printf '%s' "$problem"; exit ${EXIT.notRepository}; }`,
    body,
  ].join('\n');
  const result = await workspace.executor.run({
    command: script,
    cwd: '/',
    workspaceRoot: workspace.root,
    // No prompts for credentials, no locks taken (another git may be running), stable messages.
    env: { GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
    timeoutMs: GIT_TIMEOUT_MS,
    maxOutputBytes,
  });
  const where = `the working directory ${workspace.root} on executor "${workspace.executor.name}"`;
  if (result.exitCode === 0) return result.output;
  if (result.exitCode === EXIT.noGit) throw RpcError.conflict(`${method}: git is not installed on executor "${workspace.executor.name}"`, 'git_unavailable');
  if (result.exitCode === EXIT.notRepository) throw RpcError.conflict(`${method}: ${where} is not in a git repository (git: ${result.output.trim().slice(0, 500)})`, 'not_a_git_repository');
  if (result.exitCode === EXIT.noDirectory) throw new RpcError(ErrorCodes.notFound, `${method}: ${where} does not exist`);
  if (result.exitCode === EXIT.unknownCommit) throw new RpcError(ErrorCodes.notFound, `${method}: params.commit: no commit by that hash in the repository of ${where} (or the abbreviation names more than one object)`);
  throw new Error(`${method}: git failed in ${where} (${result.timedOut ? `timed out after ${GIT_TIMEOUT_MS} ms` : `exit ${result.exitCode ?? result.signal}`}): ${result.output.trim().slice(0, 500)}`);
}

/** Parses `hash FIELD name FIELD email FIELD seconds FIELD subject`. */
function parseCommit(fields: string[]): GitCommit {
  const [hash = '', author = '', authorEmail = '', seconds = '0', subject = ''] = fields;
  return { hash, author, authorEmail, date: Number(seconds) * 1000, subject };
}

/** The first `maxBytes` bytes of `text`, cut after the last whole line. */
function cutAtLine(text: string, maxBytes: number): string {
  const head = Buffer.from(text).subarray(0, maxBytes).toString('utf8');
  const end = head.lastIndexOf('\n');
  return end >= 0 ? head.slice(0, end + 1) : '';
}

/**
 * Builds the git history handlers of one connection.
 * @param connection the client connection (its runtime)
 */
export function createWorkspaceGitHandlers(connection: RpcConnection): WorkspaceGitHandlers {
  return {
    async 'workspace/gitLog'(params) {
      const method = 'workspace/gitLog';
      const limit = params.limit ?? GIT_LOG_DEFAULT_LIMIT;
      let start = 'HEAD';
      let skip = 0;
      if (params.cursor !== undefined) {
        const match = CURSOR.exec(params.cursor);
        if (!match) throw new RpcError(ErrorCodes.invalidParams, `${method}: params.cursor: not a cursor given by workspace/gitLog`);
        start = match[1] as string;
        skip = Number(match[2]);
      }
      const workspace = await workspaceOf(connection, method, params.conversationId, params.executor);
      const format = `${RECORD}%H${FIELD}%an${FIELD}%ae${FIELD}%at${FIELD}%s`;
      const body = [
        // A repository without commits lists none (HEAD names no commit yet).
        start === 'HEAD' ? 'git rev-parse -q --verify "HEAD^{commit}" >/dev/null || exit 0' : `git cat-file -e ${start}^{commit} 2>/dev/null || exit ${EXIT.unknownCommit}`,
        `git rev-parse "${start}^{commit}"`,
        // One more than asked for tells whether another page follows.
        `git --no-pager log --no-color --format=${shellQuote(format)} --max-count=${limit + 1} --skip=${skip} ${start} 2>/dev/null`,
      ].join('\n');
      let output: string;
      try {
        output = await runGit(workspace, method, body, 4 * 1024 * 1024);
      } catch (error) {
        if (error instanceof RpcError && error.code === ErrorCodes.notFound && params.cursor !== undefined) {
          throw new RpcError(ErrorCodes.invalidParams, `${method}: params.cursor: the commit it continues from is no longer in the repository; list again without a cursor`);
        }
        throw error;
      }
      const [head = '', ...records] = output.split(RECORD);
      const startHash = head.trim();
      if (startHash === '') return { commits: [] };
      const commits = records.map((record) => parseCommit(record.replace(/\n$/, '').split(FIELD)));
      const more = commits.length > limit;
      return { commits: commits.slice(0, limit), ...(more ? { nextCursor: `${startHash}.${skip + limit}` } : {}) };
    },

    async 'workspace/gitShow'(params) {
      const method = 'workspace/gitShow';
      const workspace = await workspaceOf(connection, method, params.conversationId, params.executor);
      const commit = params.commit.toLowerCase();
      const readBytes = GIT_SHOW_MAX_DIFF_BYTES + GIT_SHOW_MESSAGE_BYTES;
      const format = `${RECORD}%H${FIELD}%an${FIELD}%ae${FIELD}%at${FIELD}%s${FIELD}%P${FIELD}%b${RECORD}`;
      const body = [
        `git cat-file -e ${commit}^{commit} 2>/dev/null || exit ${EXIT.unknownCommit}`,
        // head stops the read at the bound; git ends on the closed pipe.
        `git --no-pager show --no-color --no-ext-diff --no-textconv --patch --format=${shellQuote(format)} ${commit} 2>/dev/null | head -c ${readBytes + 1}`,
      ].join('\n');
      const output = await runGit(workspace, method, body, 2 * (readBytes + 1024));
      const metaEnd = output.indexOf(RECORD, 1);
      if (!output.startsWith(RECORD) || metaEnd < 0) throw new Error(`${method}: git show printed no commit header for ${commit} (the commit message may be over ${GIT_SHOW_MESSAGE_BYTES} bytes)`);
      const fields = output.slice(1, metaEnd).split(FIELD);
      const [hash = '', author = '', authorEmail = '', seconds = '0', subject = '', parents = '', ...message] = fields;
      const diff = output.slice(metaEnd + 1).replace(/^\n/, '');
      const truncated = Buffer.byteLength(output) > readBytes || Buffer.byteLength(diff) > GIT_SHOW_MAX_DIFF_BYTES;
      return {
        commit: { ...parseCommit([hash, author, authorEmail, seconds, subject]), body: message.join(FIELD).replace(/\n+$/, ''), parents: parents.split(' ').filter(Boolean) },
        diff: truncated ? cutAtLine(diff, GIT_SHOW_MAX_DIFF_BYTES) : diff,
        truncated,
      };
    },
  };
}
