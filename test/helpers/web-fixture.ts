/**
 * A stand-in for the built web UI (`dist/www`) in a temp folder, so the server's web routes
 * can be tested without building the app: an index page whose script opens the protocol
 * WebSocket and sends `initialize`, a hashed asset, a service worker, a manifest and an icon.
 * The index page also holds an inline script, which the Content Security Policy must block.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Name of the fixture's hashed script under `assets/`. */
export const FIXTURE_SCRIPT = 'index-Abc123.js';

/**
 * The fixture's page script: connects to the protocol WebSocket of the page's own host without
 * a token (the session cookie goes along by itself), sends `initialize` and writes what
 * happened to `window.__openvaala` (`open`, `initialized`, `closed` with code, `error`).
 */
const PAGE_SCRIPT = `
window.__openvaala = { state: 'connecting' };
const socket = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/api/v1/openvaala');
socket.onopen = () => {
  window.__openvaala.state = 'open';
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'web-fixture' }, protocolVersion: 2 } }));
};
socket.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.id === 1) window.__openvaala = message.result ? { state: 'initialized', result: message.result } : { state: 'refused', error: message.error };
};
socket.onclose = (event) => { if (window.__openvaala.state !== 'initialized') window.__openvaala = { ...window.__openvaala, state: window.__openvaala.state === 'refused' ? 'refused' : 'closed', code: event.code }; };
socket.onerror = () => { window.__openvaala.error = true; };
`;

/** Writes the fixture into `directory` (created) and returns it. */
export function writeWebFixture(directory: string): string {
  mkdirSync(path.join(directory, 'assets'), { recursive: true });
  writeFileSync(
    path.join(directory, 'index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>OpenVaala fixture</title><link rel="manifest" href="/web/v1/manifest.webmanifest"><script type="module" src="/web/v1/assets/${FIXTURE_SCRIPT}"></script></head><body><p id="app">fixture app</p><script>window.__inlineRan = true;</script></body></html>\n`,
  );
  writeFileSync(path.join(directory, 'assets', FIXTURE_SCRIPT), PAGE_SCRIPT);
  writeFileSync(path.join(directory, 'assets', 'index-Def456.css'), 'body { font-family: sans-serif; }\n');
  writeFileSync(path.join(directory, 'service-worker.js'), "self.addEventListener('fetch', () => undefined);\n");
  writeFileSync(path.join(directory, 'manifest.webmanifest'), JSON.stringify({ name: 'OpenVaala', start_url: '/web/v1/' }));
  writeFileSync(path.join(directory, 'icon.svg'), '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
  return directory;
}
