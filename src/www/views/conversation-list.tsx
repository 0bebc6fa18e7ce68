/**
 * The conversation list: search (full text), filters (working directory, archived), paging
 * by cursor, and live updates from the list feed with a running indicator and a mark for a
 * last turn that failed or whose answer may be cut.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ConversationSummary } from '../../protocol/index.js';
import { lastTurnMark } from '../../protocol/stop-reasons.js';
import { formatTime } from '../components/format.js';
import { useApp } from '../state/app-state.js';
import { navigate } from '../state/route.js';
import { useStore } from '../state/use-store.js';

/** The sidebar list; `current` is the open conversation. */
export function ConversationList({ current }: { current: string | undefined }) {
  const app = useApp();
  const list = app.list;
  useStore(list);
  useStore(app.projects);
  const project = app.projects.current;
  // The switcher narrows the list to the picked project's conversations.
  const shown = project === undefined ? list.conversations : list.conversations.filter((summary) => summary.projectId === project);
  const [query, setQuery] = useState(list.filters.query ?? '');
  const [cwd, setCwd] = useState(list.filters.cwd ?? '');
  const [archived, setArchived] = useState(list.filters.archived ?? false);
  useEffect(() => {
    const timer = setTimeout(() => {
      const filters = { ...(query.trim() ? { query: query.trim() } : {}), ...(cwd.trim() ? { cwd: cwd.trim() } : {}), ...(archived ? { archived } : {}) };
      if (JSON.stringify(filters) !== JSON.stringify(list.filters)) void list.setFilters(filters);
    }, 250);
    return () => clearTimeout(timer);
  }, [query, cwd, archived]);
  return (
    <nav class="conversation-list" aria-label="Conversations">
      <div class="list-filters">
        <input type="search" aria-label="Search conversations" placeholder="Search…" value={query} onInput={(event) => setQuery(event.currentTarget.value)} />
        <details class="more-filters">
          <summary>Filters</summary>
          <label>
            Filter by working directory
            <input type="text" placeholder="/path/to/project" value={cwd} onInput={(event) => setCwd(event.currentTarget.value)} />
          </label>
          <label class="inline">
            <input type="checkbox" checked={archived} onChange={(event) => setArchived(event.currentTarget.checked)} /> Archived only
          </label>
        </details>
      </div>
      {list.error ? (
        <p role="alert" class="error-text">
          {list.error}
        </p>
      ) : null}
      <ul class="conversations" aria-busy={list.loading}>
        {shown.map((summary) => (
          <li key={summary.id} class={summary.id === current ? 'current' : ''} data-conversation-id={summary.id}>
            <a href={`#/c/${summary.id}`} aria-current={summary.id === current ? 'page' : undefined} onClick={(event) => (event.preventDefault(), navigate({ view: 'conversation', conversationId: summary.id }))}>
              <span class="conversation-name">
                {summary.running ? <span class="running-dot" role="img" aria-label="running" /> : null}
                {summary.unread ? <span class="unread-dot" role="img" aria-label="unread" /> : null}
                {summary.title}
              </span>
              <span class="muted conversation-meta">
                <LastTurnMark summary={summary} />
                {formatTime(summary.updatedAt)} · {summary.cwd}
              </span>
              {summary.preview ? <span class="muted conversation-preview">{summary.preview}</span> : null}
            </a>
          </li>
        ))}
      </ul>
      {shown.length === 0 && !list.loading ? <p class="muted empty-list">No conversations{list.filters.query ? ' match' : ' yet'}.</p> : null}
      {list.nextCursor ? (
        <button type="button" class="secondary load-more" onClick={() => void list.loadMore()} disabled={list.loading}>
          Load more
        </button>
      ) : null}
    </nav>
  );
}

/** A last turn that failed (`✗ model error`) or completed with its answer maybe cut (`⚠ output limit reached`); see `lastTurnMark`. */
function LastTurnMark({ summary }: { summary: ConversationSummary }) {
  const mark = summary.running ? undefined : lastTurnMark(summary);
  if (mark === undefined) return null;
  return (
    <span class={`last-turn ${mark.kind}`} title={mark.kind === 'failed' ? 'The last turn failed' : 'The last answer may be incomplete'}>
      {mark.kind === 'failed' ? '✗' : '⚠'} {mark.text} ·{' '}
    </span>
  );
}
