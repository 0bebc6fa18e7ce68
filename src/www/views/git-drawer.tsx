/**
 * The git history of the conversation's working directory (`workspace/gitLog`, and
 * `workspace/gitShow` for one commit's changes).
 */
import { useEffect, useState } from 'preact/hooks';
import { useApp } from '../state/app-state.js';

interface Commit {
  hash: string;
  subject: string;
  author?: string;
  date?: string | number;
}

type LooseRequest = (method: string, params: unknown) => Promise<unknown>;

/** The history drawer of a conversation. */
export function GitDrawer({ conversationId }: { conversationId: string }) {
  const app = useApp();
  const request = app.client.request.bind(app.client) as unknown as LooseRequest;
  const [commits, setCommits] = useState<Commit[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [shown, setShown] = useState<{ hash: string; text: string } | undefined>();
  useEffect(() => {
    request('workspace/gitLog', { conversationId }).then(
      (result) => setCommits((result as { commits: Commit[] }).commits),
      (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
    );
  }, [conversationId]);
  const show = (hash: string) =>
    void request('workspace/gitShow', { conversationId, commit: hash }).then(
      (result) => setShown({ hash, text: JSON.stringify(result, null, 2) }),
      (failure: unknown) => setShown({ hash, text: failure instanceof Error ? failure.message : String(failure) }),
    );
  if (error) return <p class="error-text">{error}</p>;
  if (!commits) return <p class="muted">Loading…</p>;
  return (
    <div class="git-drawer">
      <ol class="commits" aria-label="Commits">
        {commits.map((commit) => (
          <li key={commit.hash}>
            <button type="button" class="link" onClick={() => show(commit.hash)}>
              <code>{commit.hash.slice(0, 8)}</code> {commit.subject}
            </button>
            <span class="muted"> {commit.author}</span>
          </li>
        ))}
      </ol>
      {shown ? <pre class="tool-output">{shown.text}</pre> : null}
    </div>
  );
}
