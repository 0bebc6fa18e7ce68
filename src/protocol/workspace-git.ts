/**
 * Git history of a conversation's working directory, for clients (docs/protocol.md,
 * "Workspace git history"): `workspace/gitLog` lists commits, newest first, a page at a time;
 * `workspace/gitShow` gives one commit with its unified diff, bounded in size. Both run `git`
 * on the conversation's executor. Spread into `methods` of `methods.ts`.
 */
import { z } from 'zod';

/** Most commits one `workspace/gitLog` returns. */
export const GIT_LOG_MAX_LIMIT = 200;
/** Commits `workspace/gitLog` returns when `limit` is not given. */
export const GIT_LOG_DEFAULT_LIMIT = 50;
/** Most bytes of diff one `workspace/gitShow` returns (1 MiB); the rest is cut, `truncated` says so. */
export const GIT_SHOW_MAX_DIFF_BYTES = 1024 * 1024;

const conversationIdParam = z.string().regex(/^conv_[0-9A-Za-z]{1,64}$/, { message: 'not a conversation id (expected conv_ followed by letters and digits)' });
/** An executor of the conversation's work location, by name; default its first executor. */
const executorParam = z.string().min(1).max(200).optional();

/** One commit as listed by `workspace/gitLog`. */
export const GitCommitSchema = z.object({
  /** Full commit hash (40 hex digits for SHA-1 repositories, 64 for SHA-256 ones). */
  hash: z.string(),
  /** Author name. */
  author: z.string(),
  /** Author e-mail address. */
  authorEmail: z.string(),
  /** Author date, ms since the epoch. */
  date: z.number().int(),
  /** First line of the message. */
  subject: z.string(),
});
/** One commit as listed by `workspace/gitLog`. */
export type GitCommit = z.infer<typeof GitCommitSchema>;

/** Request methods of the workspace git history: name → params and result schemas. */
export const workspaceGitMethods = {
  /**
   * Commits reachable from `HEAD` of the repository holding the executor's working directory,
   * newest first (`git log` order), `limit` at a time (default `GIT_LOG_DEFAULT_LIMIT`).
   * `nextCursor`, when present, continues the listing from where it stopped, even when
   * commits were added since. An empty repository lists no commits.
   */
  'workspace/gitLog': {
    params: z.object({
      conversationId: conversationIdParam,
      executor: executorParam,
      limit: z.number().int().min(1).max(GIT_LOG_MAX_LIMIT).optional(),
      /** `nextCursor` of the previous page (opaque). */
      cursor: z.string().min(1).max(200).optional(),
    }),
    result: z.object({
      commits: z.array(GitCommitSchema),
      /** Present when more commits follow. */
      nextCursor: z.string().optional(),
    }),
  },
  /**
   * One commit: its metadata, full message and the unified diff against its parent (a merge
   * commit gets git's combined diff), at most `GIT_SHOW_MAX_DIFF_BYTES`.
   */
  'workspace/gitShow': {
    params: z.object({
      conversationId: conversationIdParam,
      executor: executorParam,
      /** A commit hash, full or abbreviated (4 to 64 hex digits). */
      commit: z.string().regex(/^[0-9a-fA-F]{4,64}$/, { message: 'not a commit hash (expected 4 to 64 hex digits)' }),
    }),
    result: z.object({
      commit: GitCommitSchema.extend({
        /** The message after the subject line (may be empty). */
        body: z.string(),
        /** Hashes of the parent commits (none for a root commit, two or more for a merge). */
        parents: z.array(z.string()),
      }),
      /** Unified diff (`git show` patch output), cut at `GIT_SHOW_MAX_DIFF_BYTES` at a line end. */
      diff: z.string(),
      /** True when the diff was cut. */
      truncated: z.boolean(),
    }),
  },
} as const;
