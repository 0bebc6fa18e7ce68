/**
 * One conversation: its header with actions (rename, archive, delete, drawers), the current
 * plan, usage and context meter, the transcript, approvals and questions waiting, the review
 * draft and the composer. Fork and rewind are offered on every item.
 */
import { lazy, Suspense } from 'preact/compat';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApprovalCard } from '../components/approval-card.js';
import { confirmAction, promptText } from '../components/confirm-dialog.js';
import { formatTokens, formatUsd } from '../components/format.js';
import { PlanView } from '../components/plan-view.js';
import { useApp } from '../state/app-state.js';
import type { ConversationState } from '../state/conversation-state.js';
import { ReviewDraft, reviewText } from '../state/review.js';
import { navigate } from '../state/route.js';
import { useStore } from '../state/use-store.js';
import { Composer } from './composer.js';
import { FilesDrawer } from './files-drawer.js';
import { GitDrawer } from './git-drawer.js';
import { BrowserDrawer } from './browser-drawer.js';
import { WorktreeDrawer } from './worktree-drawer.js';
import { SchedulesDrawer } from './schedules-drawer.js';
import { ConversationCost, CostThresholdNotice } from './conversation-cost.js';
import { Transcript } from './transcript.js';

type Drawer = 'terminal' | 'files' | 'git' | 'schedules' | 'worktree' | 'browser' | undefined;

const DRAWER_TITLES = { terminal: 'Terminal', files: 'Files', git: 'History', schedules: 'Schedules', worktree: 'Worktree', browser: 'Browser' } as const;

// xterm.js is most of the code: it loads when a terminal is first opened.
const TerminalDrawer = lazy(() => import('./terminal-drawer.js').then((module) => ({ default: module.TerminalDrawer })));

function UsageMeter({ state }: { state: ConversationState }) {
  const root = state.conversation?.rootSessionId;
  const usage = root ? state.usage.get(root) : undefined;
  if (!usage) return null;
  const share = usage.contextWindow ? Math.min(1, usage.contextTokens / usage.contextWindow) : undefined;
  return (
    <div class="usage" aria-label="Usage">
      <span>
        {formatTokens(usage.turnTotal.totalTokens)} tokens this turn{usage.costUsd !== undefined ? ` · ${formatUsd(usage.costUsd)}` : ''}
      </span>
      {share !== undefined ? (
        <span class="meter-wrap">
          context
          <meter min={0} max={1} low={0.6} high={0.85} optimum={0} value={share} aria-label={`Context in use: ${Math.round(share * 100)}%`} />
          {Math.round(share * 100)}%
        </span>
      ) : (
        <span>{formatTokens(usage.contextTokens)} context tokens</span>
      )}
    </div>
  );
}

function QuestionCard({ state, requestId }: { state: ConversationState; requestId: string }) {
  const app = useApp();
  const request = state.userInputs.get(requestId);
  const [answer, setAnswer] = useState('');
  if (!request) return null;
  const respond = (text: string) => void app.client.request('input/respond', { conversationId: state.conversationId, requestId, answer: text }).catch(() => undefined);
  return (
    <section class="approval" role="alertdialog" aria-label="Question from the agent">
      <h3>{request.question}</h3>
      <div class="approval-options">
        {(request.choices ?? []).map((choice) => (
          <button key={choice} type="button" onClick={() => respond(choice)}>
            {choice}
          </button>
        ))}
      </div>
      {request.allowFreeText ? (
        <form onSubmit={(event) => (event.preventDefault(), respond(answer))}>
          <input aria-label="Your answer" value={answer} onInput={(event) => setAnswer(event.currentTarget.value)} />
          <button type="submit">Answer</button>
        </form>
      ) : null}
    </section>
  );
}

/** The page of one conversation. */
export function ConversationView({ conversationId }: { conversationId: string }) {
  const app = useApp();
  const state = app.open(conversationId);
  useStore(state);
  const review = useMemo(() => new ReviewDraft(), [conversationId]);
  useStore(review);
  const [drawer, setDrawer] = useState<Drawer>();
  const [error, setError] = useState<string | undefined>();
  const conversation = state.conversation;
  const root = state.rootSession();

  useEffect(() => () => app.close(conversationId), [conversationId]);
  useEffect(() => {
    if (conversation) document.title = `${conversation.title} · OpenVaala`;
  }, [conversation?.title]);

  const act = (work: Promise<unknown>) => work.catch((failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)));
  const actions = {
    fork: (itemId: string) =>
      void act(app.client.request('conversation/fork', { conversationId, fromItemId: itemId }).then((result) => navigate({ view: 'conversation', conversationId: result.conversation.id }))),
    rewind: async (itemId: string) => {
      if (!(await confirmAction('Rewind to this item? Every later item of the conversation is dropped.', 'Rewind'))) return;
      void act(app.client.request('conversation/rewind', { conversationId, afterItemId: itemId }));
    },
  };
  const rename = async () => {
    const title = await promptText('New title', conversation?.title ?? '');
    if (title) void act(app.client.request('conversation/update', { conversationId, title }));
  };
  const archive = () => void act(app.client.request(conversation?.archived ? 'conversation/unarchive' : 'conversation/archive', { conversationId }));
  const remove = async () => {
    const worktree = conversation?.worktree?.removedAt === undefined ? conversation?.worktree : undefined;
    const also = worktree ? ` Its worktree ${worktree.path} and branch ${worktree.branch} are removed.` : '';
    if (!(await confirmAction(`Delete “${conversation?.title ?? conversationId}”? Its files move to the server's trash.${also}`, 'Delete'))) return;
    void act(app.client.request('conversation/delete', { conversationId, ...(worktree ? { removeWorktree: true } : {}) }).then(() => navigate({ view: 'home' })));
  };
  const sendReview = () =>
    void act(
      app.client.request('session/input', { conversationId, input: reviewText(review.comments), clientMessageId: `review-${Date.now().toString(36)}` }).then(() => review.clear()),
    );

  // Approve (Ctrl+Shift+Y) or deny (Ctrl+Shift+N) the oldest waiting approval.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!event.ctrlKey || !event.shiftKey) return;
      const approval = [...state.approvals.values()][0];
      if (!approval) return;
      const key = event.key.toLowerCase();
      const option = key === 'y' ? approval.options[0] : key === 'n' ? approval.options.find((entry) => entry.decision === 'deny') : undefined;
      if (!option) return;
      event.preventDefault();
      void act(app.client.request('approval/respond', { conversationId, approvalId: approval.approvalId, decision: option.decision }));
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  });

  if (state.deleted)
    return (
      <main class="conversation" id="main">
        <p role="status">This conversation was deleted.</p>
      </main>
    );
  return (
    <main class={`conversation ${drawer ? 'with-drawer' : ''}`} id="main" aria-label={conversation?.title ?? 'Conversation'}>
      <header class="conversation-header">
        <h2 class="conversation-title" title={conversation?.title}>
          {conversation?.title ?? 'Loading…'}
          {root?.activeTurnId ? <span class="badge running">running</span> : null}
          {conversation?.archived ? <span class="badge">archived</span> : null}
        </h2>
        <div class="muted conversation-where">
          {conversation?.workLocation.map((entry) => `${entry.executor}:${entry.cwd}`).join(', ')}
          {root ? ` · ${root.agent} · ${root.model}` : ''}
        </div>
        <nav class="conversation-actions" aria-label="Conversation actions">
          <button type="button" class="secondary small" onClick={() => void rename()}>
            Rename
          </button>
          <button type="button" class="secondary small" onClick={archive}>
            {conversation?.archived ? 'Unarchive' : 'Archive'}
          </button>
          <button type="button" class="secondary small danger-text" onClick={() => void remove()}>
            Delete
          </button>
          {(['terminal', 'files', 'git', 'schedules', ...(conversation?.worktree ? (['worktree'] as const) : []), 'browser'] as const).map((name) => (
            <button key={name} type="button" class="secondary small" aria-pressed={drawer === name} onClick={() => setDrawer(drawer === name ? undefined : name)}>
              {DRAWER_TITLES[name]}
            </button>
          ))}
        </nav>
        <UsageMeter state={state} />
        <ConversationCost conversationId={conversationId} />
      </header>
      <CostThresholdNotice conversationId={conversationId} />
      {state.retrying ? (
        <p role="status" class="note">
          Model call failed ({state.retrying.httpStatus ?? 'connection'}): retry {state.retrying.attempt} of {state.retrying.maxRetries}…
        </p>
      ) : null}
      {state.warnings.map((warning) => (
        <p role="status" class="note" key={`${warning.turnId}:${warning.source}:${warning.name}`}>
          {warning.message}
        </p>
      ))}
      {state.damage.length > 0 ? (
        <div role="status" class="note">
          Parts of this conversation's logs are damaged and were skipped, so what is shown may be incomplete:
          <ul>
            {state.damage.map((entry) => (
              <li key={entry.location}>
                {entry.location}: {entry.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {error ? (
        <p role="alert" class="error-text">
          {error}{' '}
          <button type="button" class="secondary small" onClick={() => setError(undefined)}>
            Dismiss
          </button>
        </p>
      ) : null}
      <div class="conversation-body">
        <div class="conversation-main">
          {root?.plan && root.activeTurnId !== null && root.plan.turnId === root.activeTurnId ? (
            <div class="current-plan">
              <PlanView steps={root.plan.steps} explanation={root.plan.explanation} />
            </div>
          ) : null}
          <Transcript state={state} review={review} actions={actions} />
          {[...state.approvals.values()].map((approval) => (
            <ApprovalCard
              key={approval.approvalId}
              approval={approval}
              respond={async (option) => {
                await app.client.request('approval/respond', { conversationId, approvalId: approval.approvalId, decision: option.decision, ...(option.prefix ? { prefix: option.prefix } : {}) });
              }}
            />
          ))}
          {[...state.userInputs.keys()].map((requestId) => (
            <QuestionCard key={requestId} state={state} requestId={requestId} />
          ))}
          {review.comments.length > 0 ? (
            <section class="review-bar" aria-label="Review">
              <strong>
                Review: {review.comments.length} comment{review.comments.length === 1 ? '' : 's'}
              </strong>
              <ul>
                {review.comments.map((comment, index) => (
                  <li key={index}>
                    <code>
                      {comment.path}:{comment.line}
                    </code>{' '}
                    {comment.text}
                    <button type="button" class="secondary small" aria-label={`Remove comment on ${comment.path}:${comment.line}`} onClick={() => review.remove(index)}>
                      ×
                    </button>
                  </li>
                ))}
              </ul>
              <button type="button" onClick={sendReview}>
                Send review
              </button>
            </section>
          ) : null}
          <Composer key={state.conversationId} state={state} />
        </div>
        {drawer ? (
          <aside class="drawer" aria-label={`${drawer} drawer`}>
            <div class="drawer-header">
              <strong>{DRAWER_TITLES[drawer]}</strong>
              <button type="button" class="secondary small" aria-label="Close drawer" onClick={() => setDrawer(undefined)}>
                ×
              </button>
            </div>
            {drawer === 'terminal' ? (
              <Suspense fallback={<p class="muted">Loading terminal…</p>}>
                <TerminalDrawer conversationId={conversationId} />
              </Suspense>
            ) : drawer === 'files' ? (
              <FilesDrawer conversationId={conversationId} />
            ) : drawer === 'browser' ? (
              <BrowserDrawer conversationId={conversationId} />
            ) : drawer === 'schedules' ? (
              <SchedulesDrawer conversationId={conversationId} />
            ) : drawer === 'worktree' && conversation?.worktree ? (
              <WorktreeDrawer conversationId={conversationId} worktree={conversation.worktree} />
            ) : (
              <GitDrawer conversationId={conversationId} />
            )}
          </aside>
        ) : null}
      </div>
    </main>
  );
}
