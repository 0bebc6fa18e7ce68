/**
 * The input box of a conversation: send (Ctrl/Cmd+Enter), queue or steer while a turn runs,
 * interrupt (Escape), withdraw queued inputs (`session/dequeue`), attachments through the
 * upload endpoint, a model and reasoning effort for one input, and `@`-mentions of workspace
 * files listed with `fs/list` (docs/protocol.md, "Input: queue and steer"). Unsent text is kept
 * as the tab's draft of the conversation (state/drafts.ts).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ContentPart } from '../../protocol/items.js';
import type { ReasoningEffort } from '../../protocol/request-params.js';
import { askNotificationPermission } from '../client/browser-notifications.js';
import { uploadAttachment } from '../client/uploads.js';
import { useApp } from '../state/app-state.js';
import { clearDraft, conversationDraftKey, loadDraft, saveDraft } from '../state/drafts.js';
import type { ConversationState } from '../state/conversation-state.js';
import { completeMention, LatestLookup, mentionAt } from '../state/mention.js';

/** The files offered for the `@`-word at the cursor. */
interface Mention {
  options: string[];
  selected: number;
}

function newMessageId(): string {
  return `web-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * The composer of one conversation. Render it with `key` set to the conversation id, so that
 * its text starts from that conversation's draft.
 */
export function Composer({ state }: { state: ConversationState }) {
  const app = useApp();
  const draftKey = conversationDraftKey(state.conversationId);
  const [text, setTextState] = useState(() => loadDraft(draftKey));
  const setText = (value: string) => {
    setTextState(value);
    saveDraft(draftKey, value);
  };
  const [mode, setMode] = useState<'queue' | 'steer'>('queue');
  const [model, setModel] = useState('');
  const [effort, setEffort] = useState<ReasoningEffort | ''>('');
  const [attachments, setAttachments] = useState<Array<{ name: string; part: ContentPart }>>([]);
  const [error, setError] = useState<string | undefined>();
  const [sending, setSending] = useState(false);
  const [mention, setMention] = useState<Mention | undefined>();
  const input = useRef<HTMLTextAreaElement>(null);
  const mentionLookups = useRef(new LatestLookup()).current;
  const root = state.rootSession();
  const running = Boolean(root?.activeTurnId);
  const conversationId = state.conversationId;
  const chosenModel = app.catalog.models.find((entry) => entry.id === (model || root?.model));
  const efforts = chosenModel?.reasoningEfforts ?? [];

  const send = async () => {
    const trimmed = text.trim();
    if ((trimmed === '' && attachments.length === 0) || sending) return;
    askNotificationPermission();
    setSending(true);
    setError(undefined);
    const steer = running && mode === 'steer';
    try {
      await app.client.request('session/input', {
        conversationId,
        input: attachments.length > 0 ? [...(trimmed ? [{ type: 'text' as const, text: trimmed }] : []), ...attachments.map((entry) => entry.part)] : trimmed,
        mode: steer ? 'steer' : 'queue',
        ...(steer && root?.activeTurnId ? { expectedTurnId: root.activeTurnId } : {}),
        ...(model ? { model } : {}),
        ...(effort ? { reasoningEffort: effort } : {}),
        clientMessageId: newMessageId(),
      });
      setTextState('');
      clearDraft(draftKey);
      setAttachments([]);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setSending(false);
    }
  };

  const interrupt = () => {
    app.client.request('session/interrupt', { conversationId }).catch((failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)));
  };

  const withdraw = (inputId: string) => {
    app.client.request('session/dequeue', { conversationId, inputId }).catch((failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)));
  };

  const attach = async (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      try {
        const result = await uploadAttachment(conversationId, file, file.name);
        setAttachments((current) => [...current, { name: result.attachment.name, part: result.contentPart }]);
      } catch (failure) {
        setError(failure instanceof Error ? failure.message : String(failure));
      }
    }
  };

  // @-mentions: list the directory named before the cursor and offer its entries.
  const updateMention = (value: string, cursor: number) => {
    const word = mentionAt(value, cursor);
    if (!word) {
      mentionLookups.cancel();
      return setMention(undefined);
    }
    const isLatest = mentionLookups.begin();
    const directory = word.query.includes('/') ? word.query.slice(0, word.query.lastIndexOf('/') + 1) : '';
    const prefix = word.query.slice(directory.length);
    app.client.request('fs/list', { conversationId, path: directory || '.' }).then(
      (listing) => {
        if (!isLatest()) return;
        const options = listing.entries.filter((entry) => entry.name.startsWith(prefix) && !entry.name.startsWith('.git')).slice(0, 20).map((entry) => `${directory}${entry.name}${entry.kind === 'directory' ? '/' : ''}`);
        setMention(options.length > 0 ? { options, selected: 0 } : undefined);
      },
      () => {
        if (isLatest()) setMention(undefined);
      },
    );
  };

  const pick = (option: string) => {
    // The text and cursor as they are now: keys typed since the list was drawn are kept.
    const box = input.current;
    const current = box?.value ?? text;
    const completed = completeMention(current, box?.selectionStart ?? current.length, option);
    mentionLookups.cancel();
    setMention(undefined);
    if (!completed) return;
    setText(completed.text);
    requestAnimationFrame(() => {
      input.current?.focus();
      input.current?.setSelectionRange(completed.cursor, completed.cursor);
      if (option.endsWith('/')) updateMention(completed.text, completed.cursor);
    });
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (mention) {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        const step = event.key === 'ArrowDown' ? 1 : -1;
        setMention({ ...mention, selected: (mention.selected + step + mention.options.length) % mention.options.length });
        return;
      }
      if (event.key === 'Tab' || (event.key === 'Enter' && !event.ctrlKey && !event.metaKey)) {
        event.preventDefault();
        pick(mention.options[mention.selected] as string);
        return;
      }
      if (event.key === 'Escape') {
        event.preventDefault();
        setMention(undefined);
        return;
      }
    }
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      void send();
    } else if (event.key === 'Escape' && running) {
      event.preventDefault();
      interrupt();
    }
  };

  // Escape interrupts from anywhere on the page while a turn runs (not only in the box).
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape' && running && !event.defaultPrevented && !document.querySelector('dialog[open]') && event.target !== input.current) interrupt();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  });

  return (
    <div class="composer">
      {root && root.queuedInputs.length > 0 ? (
        <ul class="queue" aria-label="Queued inputs">
          {root.queuedInputs.map((queued) => (
            <li key={queued.id} data-input-id={queued.id}>
              <span class="badge">queued</span>
              <span class="queue-text">{queued.text}</span>
              <button type="button" class="secondary small" onClick={() => withdraw(queued.id)} aria-label={`Withdraw queued input: ${queued.text}`}>
                Withdraw
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {attachments.length > 0 ? (
        <div class="attachments">
          {attachments.map((entry, index) => (
            <span class="chip" key={index}>
              <span class="muted">file</span> {entry.name}
              <button type="button" class="chip-remove" aria-label={`Remove attachment ${entry.name}`} onClick={() => setAttachments(attachments.filter((_, at) => at !== index))}>
                ×
              </button>
            </span>
          ))}
        </div>
      ) : null}
      <div class="composer-box">
        <textarea
          ref={input}
          aria-label="Message"
          placeholder={running ? 'Queue a message or steer the running turn…' : 'Message the agent (@ to mention a file, Ctrl+Enter to send)'}
          value={text}
          rows={3}
          aria-autocomplete="list"
          aria-controls={mention ? 'mention-list' : undefined}
          onInput={(event) => {
            setText(event.currentTarget.value);
            updateMention(event.currentTarget.value, event.currentTarget.selectionStart);
          }}
          onKeyDown={onKeyDown}
        />
        {mention ? (
          <ul id="mention-list" class="mention-list" role="listbox" aria-label="Files">
            {mention.options.map((option, index) => (
              <li key={option} role="option" aria-selected={index === mention.selected} onMouseDown={(event) => (event.preventDefault(), pick(option))}>
                {option}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <div class="composer-controls">
        <label class="file-button">
          <span>Attach</span>
          <input type="file" multiple aria-label="Attach files" onChange={(event) => void attach(event.currentTarget.files)} />
        </label>
        <select aria-label="Model for this input" value={model} onChange={(event) => setModel(event.currentTarget.value)}>
          <option value="">Model: {root?.model ?? 'default'}</option>
          {app.catalog.models.map((entry) => (
            <option key={entry.id} value={entry.id}>
              {entry.displayName} ({entry.id})
            </option>
          ))}
        </select>
        <select aria-label="Reasoning effort for this input" value={effort} onChange={(event) => setEffort(event.currentTarget.value as ReasoningEffort | '')} disabled={efforts.length === 0}>
          <option value="">Effort: default</option>
          {efforts.map((entry) => (
            <option key={entry} value={entry}>
              {entry}
            </option>
          ))}
        </select>
        {running ? (
          <span class="mode" role="radiogroup" aria-label="While the turn runs">
            <label>
              <input type="radio" name="mode" checked={mode === 'queue'} onChange={() => setMode('queue')} /> Queue
            </label>
            <label>
              <input type="radio" name="mode" checked={mode === 'steer'} onChange={() => setMode('steer')} /> Steer
            </label>
          </span>
        ) : null}
        <span class="spacer" />
        {running ? (
          <button type="button" class="danger" onClick={interrupt} aria-keyshortcuts="Escape">
            Interrupt
          </button>
        ) : null}
        <button type="button" onClick={() => void send()} disabled={sending || (text.trim() === '' && attachments.length === 0)} aria-keyshortcuts="Control+Enter Meta+Enter">
          {running ? (mode === 'steer' ? 'Steer' : 'Queue') : 'Send'}
        </button>
      </div>
      {error ? (
        <p role="alert" class="error-text">
          {error}
        </p>
      ) : null}
    </div>
  );
}
