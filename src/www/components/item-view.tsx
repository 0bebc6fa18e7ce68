/**
 * One transcript item by kind (SPEC §3 "Item kinds"), stored or in progress, with the actions
 * every item offers (fork from it, rewind to it).
 */
import type { ComponentChildren } from 'preact';
import type { Item } from '../../protocol/items.js';
import type { LiveItem } from '../state/conversation-state.js';
import type { ReviewDraft } from '../state/review.js';
import { Markdown } from './markdown.js';
import { PlanView } from './plan-view.js';
import { liveToolCall, storedToolCall, ToolCallView } from './tool-call-view.js';

/** What a person can do with an item. */
export interface ItemActions {
  fork(itemId: string): void;
  rewind(itemId: string): void;
}

/** Context an item needs to render. */
export interface ItemContext {
  review?: ReviewDraft | undefined;
  subagents?: (sessionIds: string[]) => ComponentChildren;
  actions?: ItemActions | undefined;
}

function Reasoning({ parts, raw, streaming }: { parts: readonly string[]; raw?: string | undefined; streaming: boolean }) {
  const text = parts.filter((part) => part !== '').join('\n\n');
  return (
    <details class="reasoning" open={streaming}>
      <summary>{streaming ? 'Thinking…' : 'Reasoning'}</summary>
      {text ? <Markdown text={text} className="muted" /> : null}
      {raw ? <pre class="reasoning-raw">{raw}</pre> : null}
    </details>
  );
}

/**
 * The mark under an answer or reasoning that did not end whole: `failed`, cut off by the
 * provider's stream (retried, or the turn failed); `interrupted`, stopped by the user. Without
 * it a cut-off answer followed by its retry would read as the answer given twice.
 */
function CutShort({ status }: { status: Item['status'] }) {
  if (status === 'completed') return null;
  return <p class="note cut-short">{status === 'failed' ? '■ Cut off' : '■ Interrupted'}</p>;
}

function ItemMenu({ itemId, actions }: { itemId: string; actions: ItemActions }) {
  return (
    <details class="item-menu">
      <summary aria-label="Item actions">⋯</summary>
      <div class="item-menu-list" role="menu">
        <button type="button" role="menuitem" onClick={() => actions.fork(itemId)}>
          Fork from here
        </button>
        <button type="button" role="menuitem" onClick={() => actions.rewind(itemId)}>
          Rewind to here
        </button>
      </div>
    </details>
  );
}

function body(item: Item, context: ItemContext): ComponentChildren {
  switch (item.kind) {
    case 'user_message':
      return (
        <div class="bubble">
          {item.mode === 'steer' ? <span class="badge">steer</span> : null}
          {item.content.map((part, index) =>
            part.type === 'text' ? (
              <div key={index} class="user-text">
                {part.text}
              </div>
            ) : part.type === 'file' ? (
              <span key={index} class="chip">
                <span class="muted">file</span> {part.name ?? part.path}
              </span>
            ) : (
              <img key={index} src={part.url} alt="attached image" class="attached-image" />
            ),
          )}
        </div>
      );
    case 'assistant_message':
      return (
        <>
          <Markdown text={item.text} />
          <CutShort status={item.status} />
        </>
      );
    case 'reasoning':
      return (
        <>
          <Reasoning parts={item.summaryParts ?? [item.summary]} raw={item.rawText} streaming={false} />
          <CutShort status={item.status} />
        </>
      );
    case 'tool_call':
      return <ToolCallView call={storedToolCall(item)} review={context.review} subagents={context.subagents} />;
    case 'plan':
      return <PlanView steps={item.steps} explanation={item.explanation} />;
    case 'approval':
      return (
        <div class="note">
          {item.decision.startsWith('allow') ? '✔' : '✖'} {item.toolName}: {item.decision.replace('_', ' ')} by {item.decidedBy.replace(/^client:/, '')}{item.automatic ? ' (automatic, no one was asked)' : ''}
          {item.prefix ? ` (prefix “${item.prefix.join(' ')}”)` : ''}
          {item.message ? ` — ${item.message}` : ''}
        </div>
      );
    case 'model_error':
      return (
        <div class="error-box" role="alert">
          {item.model}: {item.httpStatus ? `HTTP ${item.httpStatus}: ` : ''}
          {item.message}
          {/* Errors recorded since the message says how many attempts were made do not need the count again. */}
          {item.retries && !/\battempts?\b/.test(item.message) ? ` (after ${item.retries} retries)` : ''}
        </div>
      );
    case 'interruption':
      return <div class="note">Interrupted ({item.reason.replace('_', ' ')}){item.message ? `: ${item.message}` : ''}</div>;
    case 'model_change':
    case 'agent_change':
    case 'executor_change':
      return (
        <div class="note">
          {item.kind.replace('_change', '')} changed: {item.from} → {item.to}
        </div>
      );
    case 'instruction':
      return (
        <details class="note">
          <summary>
            Instructions: {item.name} ({item.source.replace('_', ' ')})
          </summary>
          <pre class="tool-output">{item.body}</pre>
        </details>
      );
    case 'hook_run':
      return (
        <details class="note">
          <summary>
            Hook {item.event}
            {item.toolName ? ` on ${item.toolName}` : ''}: <code>{item.command}</code> exit {item.exitCode ?? '—'}
          </summary>
          <pre class="tool-output">{item.output}</pre>
        </details>
      );
    case 'context_summary':
      return (
        <details class="note">
          <summary>Earlier conversation summarized</summary>
          <Markdown text={item.text} />
        </details>
      );
    case 'agent_message':
      return (
        <div class="note">
          Message {item.fromSessionId.slice(-6)} → {item.toSessionId.slice(-6)}: {item.text}
        </div>
      );
  }
}

/** A stored item. */
export function ItemView({ item, context }: { item: Item; context: ItemContext }) {
  return (
    <article class={`item item-${item.kind}`} data-item-id={item.id} data-kind={item.kind} aria-label={item.kind.replace('_', ' ')}>
      {body(item, context)}
      {context.actions && (item.kind === 'user_message' || item.kind === 'assistant_message' || item.kind === 'tool_call') ? <ItemMenu itemId={item.id} actions={context.actions} /> : null}
    </article>
  );
}

/** An item in progress (text and output as streamed so far). */
export function LiveItemView({ live, context }: { live: LiveItem; context: ItemContext }) {
  let content: ComponentChildren;
  if (live.kind === 'assistant_message') content = <Markdown text={live.text || '…'} className="streaming" />;
  else if (live.kind === 'reasoning') content = <Reasoning parts={live.reasoningParts} raw={live.reasoningRaw} streaming />;
  else if (live.kind === 'tool_call') content = <ToolCallView call={liveToolCall(live)} subagents={context.subagents} />;
  else content = <div class="note">{live.kind.replace('_', ' ')}…</div>;
  return (
    <article class={`item item-${live.kind} live`} data-item-id={live.itemId} data-kind={live.kind} aria-busy="true">
      {content}
    </article>
  );
}
