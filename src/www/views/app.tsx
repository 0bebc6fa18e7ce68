/**
 * The page: a header (connection state, project switcher, new conversation, projects, the
 * user's settings, server settings, theme), the conversation
 * list, and the routed main view. On a phone-sized screen the list is a panel opened from the
 * header, closed when a conversation is picked.
 */
import { useEffect, useState } from 'preact/hooks';
import { useApp } from '../state/app-state.js';
import { navigate, useRoute } from '../state/route.js';
import { useStore } from '../state/use-store.js';
import { ConversationList } from './conversation-list.js';
import { ConversationView } from './conversation-view.js';
import { NewConversation } from './new-conversation.js';
import { Settings } from './settings.js';
import { setTheme } from './theme.js';
import { ProjectMembers } from './project-members.js';
import { ProjectSecrets } from './project-secrets.js';
import { ProjectCosts } from './project-costs.js';
import { ProjectSwitcher } from './project-switcher.js';
import { ProjectsPage } from './projects-page.js';

const STATUS_TEXT = { connecting: 'Connecting…', open: 'Connected', reconnecting: 'Reconnecting…', unauthorized: 'Not signed in', closed: 'Disconnected' } as const;

/** The whole page. */
export function App() {
  const app = useApp();
  useStore(app);
  const route = useRoute();
  const [listOpen, setListOpen] = useState(false);
  useEffect(() => setListOpen(false), [route]);
  useEffect(() => {
    if (route.view !== 'conversation') document.title = 'OpenVaala';
  }, [route]);
  const current = route.view === 'conversation' ? route.conversationId : undefined;
  return (
    <div class={`app ${listOpen ? 'list-open' : ''}`}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="app-header">
        <button type="button" class="secondary small list-toggle" aria-expanded={listOpen} aria-controls="sidebar" onClick={() => setListOpen(!listOpen)}>
          ☰<span class="visually-hidden"> Conversations</span>
        </button>
        <h1>
          <a href="#/">OpenVaala</a>
        </h1>
        <span class={`connection ${app.status}`} role="status" aria-live="polite" data-status={app.status}>
          <span class="connection-text">{STATUS_TEXT[app.status]}</span>
        </span>
        {app.configError ? (
          <span class="error-text config-error" title={app.configError}>
            Configuration problem
          </span>
        ) : null}
        <span class="spacer" />
        <ProjectSwitcher />
        <button type="button" onClick={() => navigate({ view: 'new' })}>
          New
        </button>
        <button type="button" class="secondary" onClick={() => navigate({ view: 'projects' })}>
          Projects
        </button>
        <button type="button" class="secondary" onClick={() => navigate({ view: 'settings' })}>
          Settings
        </button>
        <button type="button" class="secondary small" aria-label="Switch between dark and light theme" onClick={() => setTheme(document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark')}>
          ◐
        </button>
      </header>
      {app.status === 'unauthorized' ? (
        <p role="alert" class="error-box signed-out">
          This page is not signed in (a restarted server forgets its sign-ins). Open a new sign-in link: run <code>openvaala open</code>; on a shared server, <a href={`${import.meta.env.BASE_URL}sign-in`}>sign in</a>. This page reconnects by itself once any tab has signed in.
        </p>
      ) : null}
      <div class="app-body">
        <aside id="sidebar" class="sidebar">
          <ConversationList current={current} />
        </aside>
        {route.view === 'conversation' ? (
          <ConversationView key={route.conversationId} conversationId={route.conversationId} />
        ) : route.view === 'new' ? (
          <NewConversation />
        ) : route.view === 'settings' || route.view === 'me' ? (
          <Settings />
        ) : route.view === 'projects' ? (
          <ProjectsPage />
        ) : route.view === 'project-members' ? (
          <ProjectMembers key={route.projectId} projectId={route.projectId} />
        ) : route.view === 'project-costs' ? (
          <ProjectCosts key={route.projectId} projectId={route.projectId} />
        ) : route.view === 'project-secrets' ? (
          <ProjectSecrets key={route.projectId} projectId={route.projectId} />
        ) : (
          <main class="home" id="main" aria-label="Start">
            <h2>Conversations</h2>
            <p class="muted">Pick a conversation from the list, or start a new one.</p>
            <button type="button" onClick={() => navigate({ view: 'new' })}>
              New conversation
            </button>
          </main>
        )}
      </div>
    </div>
  );
}
