/**
 * The git history of the conversation's working directory: `workspace/gitLog` lists commits,
 * newest first, a page at a time; `workspace/gitShow` shows one commit's message and diff.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { GitCommit } from '../../protocol/workspace-git.js';
import { formatTime } from '../components/format.js';
import { highlightCode } from '../components/markdown.js';
import { useApp } from '../state/app-state.js';
import { LatestRequest } from '../state/latest-request.js';

interface ShownCommit {
  hash: string;
  title: string;
  body: string;
  html: string;
  truncated: boolean;
}

/** The history drawer of a conversation. */
export function GitDrawer({ conversationId }: { conversationId: string }) {
  const app = useApp();
  const [commits, setCommits] = useState<GitCommit[] | undefined>();
  const [cursor, setCursor] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [shown, setShown] = useState<ShownCommit | undefined>();
  const load = (after: string | undefined) =>
    app.client.request('workspace/gitLog', { conversationId, ...(after ? { cursor: after } : {}) }).then(
      (result) => {
        setCommits((current) => [...(after ? (current ?? []) : []), ...result.commits]);
        setCursor(result.nextCursor);
      },
      (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
    );
  useEffect(() => void load(undefined), [conversationId]);
  // Commits shown one after the other: the last one clicked is shown, even if an earlier one's
  // larger diff arrives after it.
  const shows = useRef(new LatestRequest()).current;
  const show = (hash: string) =>
    void shows.run(() => app.client.request('workspace/gitShow', { conversationId, commit: hash }), {
      onAnswer: (result) => setShown({ hash, title: result.commit.subject, body: result.commit.body, html: highlightCode(result.diff, 'diff'), truncated: result.truncated }),
      onFailure: (failure) => setError(failure instanceof Error ? failure.message : String(failure)),
    });
  if (error) return <p class="error-text" role="alert">{error}</p>;
  if (!commits) return <p class="muted">Loading…</p>;
  return (
    <div class="git-drawer">
      {commits.length === 0 ? <p class="muted">No commits.</p> : null}
      <ol class="commits" aria-label="Commits">
        {commits.map((commit) => (
          <li key={commit.hash}>
            <button type="button" class="link" onClick={() => show(commit.hash)} aria-pressed={shown?.hash === commit.hash}>
              <code>{commit.hash.slice(0, 8)}</code> {commit.subject}
            </button>
            <span class="muted">
              {' '}
              {commit.author} · {formatTime(commit.date)}
            </span>
          </li>
        ))}
      </ol>
      {cursor ? (
        <button type="button" class="secondary small" onClick={() => void load(cursor)}>
          More commits
        </button>
      ) : null}
      {shown ? (
        <section class="commit" aria-label={`Commit ${shown.hash.slice(0, 8)}`}>
          <h3>{shown.title}</h3>
          {shown.body ? <pre class="muted">{shown.body}</pre> : null}
          <pre class="code">
            <code class="hljs" dangerouslySetInnerHTML={{ __html: shown.html }} />
          </pre>
          {shown.truncated ? <p class="muted">The diff was cut (over 1 MiB).</p> : null}
        </section>
      ) : null}
    </div>
  );
}
