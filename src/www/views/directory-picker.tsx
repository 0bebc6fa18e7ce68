/**
 * Browsing directories for a new conversation's work location. `fs/list` reads inside a
 * conversation's working directory only, so browsing starts from the directory of an earlier
 * conversation on the same executor that contains the typed path, and goes down from there.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useApp } from '../state/app-state.js';
import { LatestRequest } from '../state/latest-request.js';

/** Subdirectories of `path`, browsable when an earlier conversation's directory contains it. */
export function DirectoryPicker({ executor, path, onPick }: { executor: string | undefined; path: string; onPick: (path: string) => void }) {
  const app = useApp();
  const [entries, setEntries] = useState<string[] | undefined>();
  const listings = useRef(new LatestRequest()).current;
  const base = app.list.conversations
    .filter((summary) => (executor === undefined || summary.executor === executor) && (path === summary.cwd || path.startsWith(`${summary.cwd.replace(/\/$/, '')}/`)))
    .sort((a, b) => b.cwd.length - a.cwd.length)[0];
  useEffect(() => {
    setEntries(undefined);
    if (!base || !path.startsWith('/')) return;
    const timer = setTimeout(() => {
      // A listing of a path typed earlier may arrive after this one: only the last is shown.
      void listings.run(() => app.client.request('fs/list', { conversationId: base.id, path: path.replace(/\/$/, '') || '/' }), {
        onAnswer: (listing) => setEntries(listing.entries.filter((entry) => entry.kind === 'directory' && !entry.name.startsWith('.')).map((entry) => entry.name)),
        onFailure: () => setEntries([]),
      });
    }, 200);
    return () => {
      clearTimeout(timer);
      listings.dropPending();
    };
  }, [base?.id, path]);
  if (!base) return <p class="muted small-text">Type an absolute directory; directories of earlier conversations can be browsed.</p>;
  return (
    <div class="directory-picker" role="group" aria-label="Browse directories">
      <button type="button" class="secondary small" disabled={path.replace(/\/$/, '') === base.cwd.replace(/\/$/, '')} onClick={() => onPick(path.replace(/\/[^/]+\/?$/, '') || '/')}>
        ↑ Up
      </button>
      {(entries ?? []).map((name) => (
        <button key={name} type="button" class="secondary small" onClick={() => onPick(`${path.replace(/\/$/, '')}/${name}`)}>
          {name}/
        </button>
      ))}
    </div>
  );
}
