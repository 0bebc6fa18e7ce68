/**
 * Conversation worktrees (docs/protocol.md, "Worktrees"): a conversation made with
 * `conversation/create` `worktree` works in its own git worktree and branch; these methods
 * show its changes against the base branch and merge, rebase or discard them. All run `git`
 * on the conversation's executor. Spread into `methods` of `methods.ts`.
 */
import { z } from 'zod';
import { ConversationSchema } from './entities.js';

/** Most bytes of diff one `worktree/diff` returns (1 MiB); the rest is cut, `truncated` says so. */
export const WORKTREE_DIFF_MAX_BYTES = 1024 * 1024;

const conversationIdParam = z.string().regex(/^conv_[0-9A-Za-z]{1,64}$/, { message: 'not a conversation id (expected conv_ followed by letters and digits)' });

/** One file changed in a worktree against its base. */
export const WorktreeFileChangeSchema = z.object({
  /** Path relative to the repository root. */
  path: z.string(),
  /** git's status letter: `A` added, `M` modified, `D` deleted, `R` renamed, `T` type changed; `?` untracked (not in the diff). */
  status: z.string(),
});
/** One file changed in a worktree against its base. */
export type WorktreeFileChange = z.infer<typeof WorktreeFileChangeSchema>;

/** Request methods of conversation worktrees: name → params and result schemas. */
export const worktreeMethods = {
  /**
   * The worktree's changes since it parted from its base branch (`git diff <merge-base>`):
   * committed and uncommitted changes of tracked files, untracked files by name only.
   * Refused (conflict `no_worktree`) for a conversation without a worktree.
   */
  'worktree/diff': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({
      /** The base branch (absent when made from a detached HEAD). */
      baseBranch: z.string().optional(),
      /** The commit the diff is against: where the worktree's branch and its base parted. */
      mergeBase: z.string(),
      files: z.array(WorktreeFileChangeSchema),
      /** Unified diff, cut at `WORKTREE_DIFF_MAX_BYTES` at a line end. */
      diff: z.string(),
      /** True when the diff was cut. */
      truncated: z.boolean(),
    }),
  },
  /**
   * Merges the worktree's branch into the base branch in the main checkout, with a merge
   * commit. Refused when either checkout has uncommitted changes (`worktree_dirty`), the main
   * checkout has another branch checked out (`worktree_not_on_base`), or the merge conflicts
   * (`merge_conflict`, with `data.files`): the merge is then aborted and nothing changes.
   * Merge, rebase and discard are refused (`turn_running`) while a turn of the conversation runs.
   */
  'worktree/merge': {
    params: z.object({
      conversationId: conversationIdParam,
      /** The merge commit's message; default `Merge <branch> (<conversation title>)`. */
      message: z.string().min(1).max(10_000).optional(),
    }),
    result: z.object({ commit: z.string() }),
  },
  /**
   * Rebases the worktree's branch onto the base branch, in the worktree. Refused when the
   * worktree has uncommitted changes or the rebase conflicts (then aborted: nothing changes).
   */
  'worktree/rebase': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({ commit: z.string() }),
  },
  /**
   * Throws the worktree's work away: removes the worktree (uncommitted changes included) and
   * deletes its branch. The conversation stays, with `worktree.removedAt` set; its working
   * directory no longer exists.
   */
  'worktree/discard': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({ conversation: ConversationSchema }),
  },
} as const;
