// Sign-in page of the web UI (docs/web.md): takes the one-time code from the address's
// fragment, removes it from the address bar and the session history at once, exchanges it for
// a session cookie and goes to the app. The fragment never reaches the server or a Referer.
'use strict';

(function signIn() {
  const status = document.getElementById('status');
  const show = (text) => {
    if (status) status.textContent = text;
  };
  const code = new URLSearchParams(location.hash.slice(1)).get('token');
  // The entry holding the code is overwritten before anything else happens.
  history.replaceState(null, '', location.pathname);
  if (!code) {
    show('This sign-in link has no code. Run `openvaala open` for a new link.');
    return;
  }
  fetch('/web/v1/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
    credentials: 'same-origin',
    cache: 'no-store',
  })
    .then(async (response) => {
      if (response.ok) {
        // replace, not assign: the sign-in page does not stay in the history either.
        location.replace('/web/v1/');
        return;
      }
      let reason = `the server answered ${response.status}`;
      try {
        const body = await response.json();
        if (body && typeof body.error === 'string') reason = body.error;
      } catch {
        // Not JSON: the status says enough.
      }
      show(`Sign-in failed: ${reason}.`);
    })
    .catch((error) => show(`Sign-in failed: the server could not be reached (${error.message}).`));
})();
