/**
 * Entry of the web UI: applies the theme, connects to the runtime server this page came from
 * (the sign-in cookie authenticates the WebSocket), renders the app and registers the service
 * worker that caches the app shell.
 */
import { render } from 'preact';
import { ProtocolClient } from './client/protocol-client.js';
import { AppContext, AppState } from './state/app-state.js';
import './styles/app.css';
import { App } from './views/app.js';
import { applyTheme } from './views/theme.js';

applyTheme();
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', applyTheme);

const client = new ProtocolClient({
  clientName: 'openvaala-web',
  signedIn: async () => {
    const response = await fetch(`${import.meta.env.BASE_URL}api/session`, { credentials: 'same-origin', cache: 'no-store' });
    return response.ok && ((await response.json()) as { signedIn?: boolean }).signedIn === true;
  },
});
// A shared (platform-mode) server sends a browser that is not signed in to the sign-in page.
void fetch(`${import.meta.env.BASE_URL}api/session`, { credentials: 'same-origin', cache: 'no-store' })
  .then((response) => (response.ok ? (response.json() as Promise<{ signedIn?: boolean; platform?: boolean }>) : undefined))
  .then((session) => {
    if (session?.platform && !session.signedIn) location.replace(`${import.meta.env.BASE_URL}sign-in`);
  })
  .catch(() => undefined);
const app = new AppState(client);
// Tests and the console reach the state through this (read-only use).
(globalThis as { openvaala?: AppState }).openvaala = app;
app.start();

render(
  <AppContext.Provider value={app}>
    <App />
  </AppContext.Provider>,
  document.getElementById('app') as HTMLElement,
);

if ('serviceWorker' in navigator && location.protocol !== 'file:') {
  navigator.serviceWorker.register(`${import.meta.env.BASE_URL}sw.js`, { scope: import.meta.env.BASE_URL }).catch(() => undefined);
}
