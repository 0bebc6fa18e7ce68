/**
 * A session's transcript: its stored items in seq order, the end of each turn with its stop
 * reason and usage, then the items in progress. Long transcripts render windowed: only the
 * last rows are mounted at first, earlier ones as the reader scrolls up (an observer at the
 * top), and each row is laid out lazily by the browser (`content-visibility: auto`), so a
 * conversation of thousands of items paints as fast as a short one.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Turn } from '../../protocol/entities.js';
import type { StoredItem } from '../../protocol/items.js';
import { describeStopReason } from '../../protocol/stop-reasons.js';
import { formatTokens, formatUsd } from '../components/format.js';
import { ItemView, LiveItemView, type ItemActions } from '../components/item-view.js';
import type { ConversationState, LiveItem } from '../state/conversation-state.js';
import type { ReviewDraft } from '../state/review.js';

/** Rows mounted at first; more are mounted per step when scrolling up. */
export const INITIAL_ROWS = 120;
const ROWS_PER_STEP = 200;

type Row = { key: string; stored: StoredItem } | { key: string; turn: Turn } | { key: string; live: LiveItem };

/** The rows of a session: items, each finished turn's end after its last item, items in progress. */
export function transcriptRows(state: ConversationState, sessionId: string): Row[] {
  const rows: Row[] = [];
  const items = state.itemsOf(sessionId);
  for (let index = 0; index < items.length; index++) {
    const stored = items[index] as StoredItem;
    rows.push({ key: stored.item.id, stored });
    const next = items[index + 1];
    if (!next || next.item.turnId !== stored.item.turnId) {
      const turn = state.turns.get(stored.item.turnId);
      if (turn && turn.status !== 'running' && !turn.rewound && turn.sessionId === sessionId) rows.push({ key: `end-${turn.id}`, turn });
    }
  }
  for (const live of state.liveOf(sessionId)) rows.push({ key: live.itemId, live });
  return rows;
}

function TurnEnd({ turn }: { turn: Turn }) {
  return (
    <div class={`turn-end ${turn.status}`} role="note" data-turn-id={turn.id} data-stop-reason={turn.stopReason ?? ''}>
      <span>Turn {turn.stopReason ? describeStopReason(turn.stopReason).label : turn.status}</span>
      <span class="muted">
        {turn.steps} step{turn.steps === 1 ? '' : 's'} · {formatTokens(turn.usage.totalTokens)} tokens
        {turn.costUsd !== undefined ? ` · ${formatUsd(turn.costUsd)}` : ''}
        {turn.model ? ` · ${turn.model}` : ''}
      </span>
      {turn.error ? <span class="error-text">{turn.error}</span> : null}
    </div>
  );
}

/** A subagent session as a nested, expandable thread. */
function SubagentThreads({ state, sessionIds, review }: { state: ConversationState; sessionIds: string[]; review: ReviewDraft | undefined }) {
  return (
    <div class="subagents">
      {sessionIds.map((sessionId) => {
        const session = state.sessions.get(sessionId);
        return (
          <details key={sessionId} class="subagent-thread" data-session-id={sessionId}>
            <summary>
              Subagent {session?.agent ?? ''} <span class="muted">{session ? `${session.status} · ${state.itemsOf(sessionId).length} items` : sessionId}</span>
            </summary>
            <SessionRows state={state} sessionId={sessionId} review={review} nested />
          </details>
        );
      })}
    </div>
  );
}

function SessionRows({ state, sessionId, review, actions, nested, limit }: { state: ConversationState; sessionId: string; review: ReviewDraft | undefined; actions?: ItemActions; nested?: boolean; limit?: number }) {
  const rows = transcriptRows(state, sessionId);
  const shown = limit === undefined ? rows : rows.slice(Math.max(0, rows.length - limit));
  const context = { review, actions, subagents: (ids: string[]): ComponentChildren => <SubagentThreads state={state} sessionIds={ids} review={review} /> };
  return (
    <div class={nested ? 'rows nested' : 'rows'}>
      {shown.map((row) =>
        'stored' in row ? (
          <div class="row" key={row.key}>
            <ItemView item={row.stored.item} context={context} />
          </div>
        ) : 'turn' in row ? (
          <div class="row" key={row.key}>
            <TurnEnd turn={row.turn} />
          </div>
        ) : (
          <div class="row" key={row.key}>
            <LiveItemView live={row.live} context={context} />
          </div>
        ),
      )}
    </div>
  );
}

/** The root session's transcript, windowed, following the bottom while the reader is there. */
export function Transcript({ state, review, actions }: { state: ConversationState; review: ReviewDraft; actions: ItemActions }) {
  const root = state.conversation?.rootSessionId;
  const scroller = useRef<HTMLDivElement>(null);
  const top = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const [limit, setLimit] = useState(INITIAL_ROWS);
  // Rows are first mounted once the subscription's replay is over: mounted during it, the
  // window of the last rows would move on every frame and parse each message it passes.
  const shownOnce = useRef(false);
  if (state.synced) shownOnce.current = true;
  const total = root ? transcriptRows(state, root).length : 0;

  const earlierStored = root !== undefined && state.earlier.has(root);
  const showEarlier = () => {
    if (total > limit) setLimit((current) => current + ROWS_PER_STEP);
    else if (root && earlierStored) void state.loadEarlier(root).then(() => setLimit((current) => current + ROWS_PER_STEP));
  };
  useEffect(() => {
    const sentinel = top.current;
    if (!sentinel || (total <= limit && !earlierStored)) return undefined;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) showEarlier();
    }, { root: scroller.current });
    observer.observe(sentinel);
    return () => observer.disconnect();
  }, [total, limit, earlierStored]);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (element && atBottom.current) element.scrollTop = element.scrollHeight;
  });

  if (!root || !shownOnce.current) return <div class="transcript empty">{state.error ? <p role="alert">{state.error}</p> : <p role="status">Loading{root ? ` ${state.itemsOf(root).length} items` : ''}…</p>}</div>;
  return (
    <div
      class="transcript"
      ref={scroller}
      role="log"
      aria-label="Transcript"
      aria-busy={!state.synced}
      onScroll={(event) => {
        const element = event.currentTarget;
        atBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
      }}
    >
      {total > limit || earlierStored ? (
        <div ref={top} class="load-earlier">
          <button type="button" class="secondary" onClick={showEarlier}>
            Show earlier{total > limit ? ` (${total - limit} more)` : ''}
          </button>
        </div>
      ) : null}
      <SessionRows state={state} sessionId={root} review={review} actions={actions} limit={limit} />
    </div>
  );
}
