/**
 * A new conversation: the work location (an executor from `executors/list` and a directory,
 * typed, suggested from earlier conversations, or browsed with `fs/list`), the agent
 * (`agents/list`), the model (`models/list`), a title and the first message. With a project
 * picked in the header's switcher, the conversation is made in that project's workspace.
 */
import { useMemo, useState } from 'preact/hooks';
import { ExecutorOptions, ModelOptions } from '../components/catalog-options.js';
import { ErrorText, failureMessage } from '../components/feedback.js';
import { useApp } from '../state/app-state.js';
import { clearDraft, loadDraft, NEW_CONVERSATION_DRAFT_KEY, saveDraft } from '../state/drafts.js';
import { navigate } from '../state/route.js';
import { useStore } from '../state/use-store.js';
import { DirectoryPicker } from './directory-picker.js';

/** The new-conversation form. */
export function NewConversation() {
  const app = useApp();
  useStore(app);
  const catalog = app.catalog;
  const recent = useMemo(() => [...new Set(app.list.conversations.map((summary) => summary.cwd))], [app.list.conversations]);
  const [executor, setExecutor] = useState('');
  const [cwd, setCwd] = useState(recent[0] ?? '');
  const [agent, setAgent] = useState('');
  const [model, setModel] = useState('');
  const [title, setTitle] = useState('');
  // The first message is kept as the tab's draft until the conversation is made.
  const [message, setMessageState] = useState(() => loadDraft(NEW_CONVERSATION_DRAFT_KEY));
  const setMessage = (value: string) => {
    setMessageState(value);
    saveDraft(NEW_CONVERSATION_DRAFT_KEY, value);
  };
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  useStore(app.projects);
  // With a project picked in the switcher, the conversation is made in its workspace.
  const project = app.projects.currentProject;

  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const result = await app.client.request('conversation/create', {
        ...(project ? { projectId: project.id } : { cwd: cwd.trim(), ...(executor ? { executor } : {}) }),
        ...(agent ? { agent } : {}),
        ...(model ? { model } : {}),
        ...(title.trim() ? { title: title.trim() } : {}),
        clientMessageId: `web-create-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
      });
      // The conversation exists now; its first message is no longer a new conversation's draft.
      clearDraft(NEW_CONVERSATION_DRAFT_KEY);
      if (message.trim()) await app.client.request('session/input', { conversationId: result.conversation.id, input: message.trim(), clientMessageId: `web-first-${result.conversation.id}` });
      navigate({ view: 'conversation', conversationId: result.conversation.id });
    } catch (failure) {
      setError(failureMessage(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="new-conversation" id="main" aria-label="New conversation">
      <h2>New conversation</h2>
      <form onSubmit={(event) => void create(event)} class="form">
        {project ? (
          <p class="muted project-note">
            In project <strong>{project.name}</strong>: it works in {project.workspace.executor}:{project.workspace.directory}.
          </p>
        ) : (
          <>
        <label>
          Executor
          <select value={executor} onChange={(event) => setExecutor(event.currentTarget.value)}>
            <option value="">default (local)</option>
            <ExecutorOptions executors={catalog.executors} />
          </select>
        </label>
        <label>
          Working directory
          <input type="text" required placeholder="/absolute/path/to/project" value={cwd} list="recent-directories" onInput={(event) => setCwd(event.currentTarget.value)} />
          <datalist id="recent-directories">
            {recent.map((directory) => (
              <option key={directory} value={directory} />
            ))}
          </datalist>
        </label>
        <DirectoryPicker executor={executor || undefined} path={cwd} onPick={setCwd} />
          </>
        )}
        <label>
          Agent
          <select value={agent} onChange={(event) => setAgent(event.currentTarget.value)}>
            <option value="">default{catalog.defaultAgent ? ` (${catalog.defaultAgent})` : ''}</option>
            {catalog.agents.map((entry) => (
              <option key={entry.name} value={entry.name}>
                {entry.name}
                {entry.description ? ` — ${entry.description}` : ''}
              </option>
            ))}
          </select>
        </label>
        <label>
          Model
          <select value={model} onChange={(event) => setModel(event.currentTarget.value)}>
            <option value="">default{catalog.defaultModel ? ` (${catalog.defaultModel})` : ''}</option>
            <ModelOptions models={catalog.models} />
          </select>
        </label>
        <label>
          Title (optional)
          <input type="text" value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
        </label>
        <label>
          First message (optional)
          <textarea rows={4} value={message} onInput={(event) => setMessage(event.currentTarget.value)} />
        </label>
        <ErrorText error={error} />
        <button type="submit" disabled={busy || (!project && !cwd.startsWith('/'))}>
          Create conversation
        </button>
      </form>
    </main>
  );
}
