/**
 * The conversation's files: a tree of its working directory listed lazily with `fs/list`, and
 * a read-only viewer of a file read with `fs/read` (text highlighted by its extension; binary
 * files and the rest of files over 1 MiB are not shown).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { highlightCode } from '../components/markdown.js';
import { useApp } from '../state/app-state.js';
import { LatestRequest } from '../state/latest-request.js';

interface Entry {
  name: string;
  kind: string;
}

function Directory({ conversationId, path, onOpen }: { conversationId: string; path: string; onOpen: (path: string) => void }) {
  const app = useApp();
  const [entries, setEntries] = useState<Entry[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    app.client.request('fs/list', { conversationId, path }).then(
      (listing) => setEntries(listing.entries),
      (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
    );
  }, [conversationId, path]);
  if (error) return <p class="error-text">{error}</p>;
  if (!entries) return <p class="muted">Loading…</p>;
  return (
    <ul class="file-tree" role="group">
      {entries.map((entry) => {
        const child = path === '.' ? entry.name : `${path}/${entry.name}`;
        return entry.kind === 'directory' ? (
          <li key={entry.name} role="treeitem">
            <details>
              <summary>{entry.name}/</summary>
              <DirectoryWhenOpen conversationId={conversationId} path={child} onOpen={onOpen} />
            </details>
          </li>
        ) : (
          <li key={entry.name} role="treeitem">
            <button type="button" class="link" onClick={() => onOpen(child)}>
              {entry.name}
            </button>
          </li>
        );
      })}
    </ul>
  );
}

/** Lists a directory only once its `<details>` opens. */
function DirectoryWhenOpen(props: { conversationId: string; path: string; onOpen: (path: string) => void }) {
  const [open, setOpen] = useState(false);
  return (
    <div
      ref={(element) => {
        const details = element?.parentElement;
        if (details instanceof HTMLDetailsElement && !details.dataset.watched) {
          details.dataset.watched = 'yes';
          details.addEventListener('toggle', () => setOpen(details.open));
        }
      }}
    >
      {open ? <Directory {...props} /> : null}
    </div>
  );
}

/** The files drawer of a conversation. */
export function FilesDrawer({ conversationId }: { conversationId: string }) {
  const app = useApp();
  const [file, setFile] = useState<{ path: string; html: string; note: string } | undefined>();
  // Files opened one after the other: the last one opened is shown, even if an earlier, larger
  // one is read after it.
  const reads = useRef(new LatestRequest()).current;
  const open = (path: string) =>
    void reads.run(() => app.client.request('fs/read', { conversationId, path }), {
      onAnswer: (result) => {
        const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1];
        const html = result.encoding === 'utf8' ? highlightCode(result.content, extension) : '';
        setFile({ path, html, note: result.encoding === 'base64' ? `binary file, ${result.size} bytes` : result.truncated ? `first ${result.length} of ${result.size} bytes` : `${result.size} bytes` });
      },
      onFailure: (failure) => setFile({ path, html: '', note: failure instanceof Error ? failure.message : String(failure) }),
    });
  return (
    <div class="files-drawer">
      <nav class="files-tree" aria-label="Workspace files" role="tree">
        <Directory conversationId={conversationId} path="." onOpen={open} />
      </nav>
      {file ? (
        <section class="file-viewer" aria-label={`File ${file.path}`}>
          <div class="file-viewer-header">
            <code>{file.path}</code> <span class="muted">{file.note}</span>
            <button type="button" class="secondary small" onClick={() => setFile(undefined)} aria-label="Close file">
              ×
            </button>
          </div>
          <pre class="code">
            <code class="hljs" dangerouslySetInnerHTML={{ __html: file.html }} />
          </pre>
        </section>
      ) : null}
    </div>
  );
}
