/**
 * The git worktree of a conversation made with one: its changes against the base branch
 * (`worktree/diff`), and merge, rebase and discard (`worktree/merge | rebase | discard`).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ConversationWorktree } from '../../protocol/entities.js';
import type { WorktreeFileChange } from '../../protocol/worktrees.js';
import { confirmAction } from '../components/confirm-dialog.js';
import { highlightCode } from '../components/markdown.js';
import { useApp } from '../state/app-state.js';
import { LatestRequest } from '../state/latest-request.js';

interface ShownDiff {
  files: WorktreeFileChange[];
  html: string;
  truncated: boolean;
}

/** The worktree drawer of a conversation. */
export function WorktreeDrawer({ conversationId, worktree }: { conversationId: string; worktree: ConversationWorktree }) {
  const app = useApp();
  const [diff, setDiff] = useState<ShownDiff | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [status, setStatus] = useState<string | undefined>();
  const fail = (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure));
  // The diff and the actions share the error line: only the outcome of the request started last
  // is shown, so a diff loaded late cannot clear why a merge was refused.
  const requests = useRef(new LatestRequest()).current;
  const load = () =>
    requests.run(() => app.client.request('worktree/diff', { conversationId }), {
      onAnswer: (result) => {
        setDiff({ files: result.files, html: highlightCode(result.diff, 'diff'), truncated: result.truncated });
        setError(undefined);
      },
      onFailure: fail,
    });
  useEffect(() => {
    if (worktree.removedAt === undefined) void load();
  }, [conversationId, worktree.removedAt]);
  if (worktree.removedAt !== undefined) return <p class="muted">The worktree {worktree.path} was discarded.</p>;

  // A merge or rebase changes the diff against the base: it is loaded again after either.
  const moveBranch = (method: 'worktree/merge' | 'worktree/rebase', done: (commit: string) => string) =>
    void requests.run(() => app.client.request(method, { conversationId }), {
      onAnswer: (result) => {
        setStatus(done(result.commit.slice(0, 8)));
        void load();
      },
      onFailure: fail,
    });
  const merge = () => moveBranch('worktree/merge', (commit) => `Merged into ${worktree.baseBranch ?? 'the base'} as ${commit}.`);
  const rebase = () => moveBranch('worktree/rebase', (commit) => `Rebased onto ${worktree.baseBranch ?? 'the base'}; now at ${commit}.`);
  const discard = async () => {
    if (!(await confirmAction(`Discard the worktree ${worktree.path} and delete branch ${worktree.branch}? Its changes are lost.`, 'Discard'))) return;
    void requests.run(() => app.client.request('worktree/discard', { conversationId }), { onAnswer: () => setStatus('Discarded.'), onFailure: fail });
  };
  return (
    <div class="worktree-drawer">
      <p class="muted">
        Branch <code>{worktree.branch}</code> from <code>{worktree.baseBranch ?? worktree.baseCommit.slice(0, 8)}</code>
      </p>
      <div class="worktree-actions">
        <button type="button" class="secondary small" disabled={worktree.baseBranch === undefined} onClick={merge}>
          Merge
        </button>
        <button type="button" class="secondary small" disabled={worktree.baseBranch === undefined} onClick={rebase}>
          Rebase
        </button>
        <button type="button" class="secondary small danger-text" onClick={() => void discard()}>
          Discard
        </button>
        <button type="button" class="secondary small" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      {status ? <p role="status">{status}</p> : null}
      {error ? (
        <p class="error-text" role="alert">
          {error}
        </p>
      ) : null}
      {!diff ? (
        <p class="muted">Loading…</p>
      ) : (
        <section aria-label="Worktree changes">
          {diff.files.length === 0 ? <p class="muted">No changes against the base.</p> : null}
          <ul aria-label="Changed files">
            {diff.files.map((file) => (
              <li key={file.path}>
                <code>{file.status}</code> {file.path}
              </li>
            ))}
          </ul>
          <pre class="code">
            <code class="hljs" dangerouslySetInnerHTML={{ __html: diff.html }} />
          </pre>
          {diff.truncated ? <p class="muted">The diff was cut (over 1 MiB).</p> : null}
        </section>
      )}
    </div>
  );
}
