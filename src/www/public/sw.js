// Service worker of the OpenVaala web UI: caches the app shell only (the page, its hashed
// scripts and styles, icons) so the app opens offline. Conversation data travels over the
// WebSocket and the /api/ endpoints, which are never cached; the sign-in page is never cached.
// It also shows the server's Web Push messages (docs/notifications.md) and opens the
// conversation when one is clicked.
const CACHE = 'openvaala-shell-v1';
const SCOPE = new URL(self.registration.scope).pathname; // "/web/v1/"

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll([SCOPE, `${SCOPE}manifest.webmanifest`, `${SCOPE}icons/icon.svg`])).catch(() => undefined));
  self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys().then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name)))).then(() => self.clients.claim()));
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== location.origin || !url.pathname.startsWith(SCOPE) || url.pathname.includes('sign-in')) return;
  if (url.pathname.startsWith(`${SCOPE}assets/`)) {
    // Hashed names never change content: cache first.
    event.respondWith(
      caches.match(request).then(
        (cached) =>
          cached ||
          fetch(request).then((response) => {
            if (response.ok) void caches.open(CACHE).then((cache) => cache.put(request, response.clone()));
            return response;
          }),
      ),
    );
    return;
  }
  // The page and the rest: network first, the cached copy when offline.
  event.respondWith(
    fetch(request)
      .then((response) => {
        if (response.ok) void caches.open(CACHE).then((cache) => cache.put(request.mode === 'navigate' ? SCOPE : request, response.clone()));
        return response;
      })
      .catch(() => caches.match(request.mode === 'navigate' ? SCOPE : request).then((cached) => cached || Response.error())),
  );
});

// A push is JSON: { kind, conversationId, title, text, url, at } (docs/notifications.md, "Payload").
self.addEventListener('push', (event) => {
  let payload;
  try {
    payload = event.data ? event.data.json() : {};
  } catch {
    payload = { text: event.data ? event.data.text() : '' };
  }
  const title = typeof payload.title === 'string' && payload.title ? payload.title : 'OpenVaala';
  const conversationId = typeof payload.conversationId === 'string' ? payload.conversationId : '';
  event.waitUntil(
    self.registration.showNotification(title, {
      body: typeof payload.text === 'string' ? payload.text : '',
      // One notification per conversation and kind: a newer one replaces the older.
      tag: `${conversationId}:${payload.kind ?? ''}`,
      icon: `${SCOPE}icons/icon-192.png`,
      data: { url: typeof payload.url === 'string' && payload.url.startsWith('#/') ? payload.url : '#/' },
    }),
  );
});

// Focuses a tab of the UI (moving it to the conversation), or opens one.
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const target = `${self.registration.scope}${event.notification.data?.url ?? '#/'}`;
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      const open = windows.find((client) => new URL(client.url).pathname.startsWith(SCOPE));
      if (open) return open.navigate(target).then((client) => (client ?? open).focus());
      return self.clients.openWindow(target);
    }),
  );
});
