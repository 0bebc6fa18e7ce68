// Sign-in page of the web UI (docs/web.md, docs/platform.md).
//
// A single-user server: takes the one-time code from the address's fragment (`#token=`),
// removes it from the address bar and the session history at once, exchanges it for a session
// cookie and goes to the app. The fragment never reaches the server or a Referer.
//
// Platform mode: shows the claim form on a new platform, else email and password with a
// button per OpenID Connect issuer; `#invitation=<code>` accepts an invitation (choose a
// password), `#pairing=<code>` signs this browser in as the user who made the link,
// `#error=<message>` shows why an OpenID Connect sign-in failed. Every POST carries the CSRF
// token read from `GET /web/v1/api/platform/state`.
/* global FormData */
'use strict';

(function signIn() {
  const status = document.getElementById('status');
  const forms = document.getElementById('forms');
  const show = (text, alert) => {
    if (!status) return;
    status.textContent = text;
    status.setAttribute('role', alert ? 'alert' : 'status');
  };
  const fragment = new URLSearchParams(location.hash.slice(1));
  // The entry holding a code is overwritten before anything else happens.
  history.replaceState(null, '', location.pathname);
  const reasonOf = async (response) => {
    try {
      const body = await response.json();
      if (body && typeof body.error === 'string') return body.error;
    } catch {
      // Not JSON: the status says enough.
    }
    return `the server answered ${response.status}`;
  };
  const goToApp = () => location.replace('/web/v1/');

  const code = fragment.get('token');
  if (code) {
    fetch('/web/v1/api/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }), credentials: 'same-origin', cache: 'no-store' })
      .then(async (response) => (response.ok ? goToApp() : show(`Sign-in failed: ${await reasonOf(response)}.`, true)))
      .catch((error) => show(`Sign-in failed: the server could not be reached (${error.message}).`, true));
    return;
  }

  let csrfToken = '';
  const post = (route, body) =>
    fetch(`/web/v1/api/platform/${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken }, body: JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });

  /** A form with labelled inputs; `submit` gets the values by name and the submit button. */
  const form = (name, fields, buttonText, submit) => {
    const element = document.createElement('form');
    element.setAttribute('aria-label', name);
    for (const field of fields) {
      const label = document.createElement('label');
      label.textContent = field.label;
      const input = document.createElement('input');
      input.name = field.name;
      input.type = field.type;
      input.autocomplete = field.autocomplete;
      if (field.required !== false) input.required = true;
      if (field.minLength) input.minLength = field.minLength;
      label.append(input);
      element.append(label);
    }
    const button = document.createElement('button');
    button.type = 'submit';
    button.textContent = buttonText;
    element.append(button);
    element.addEventListener('submit', (event) => {
      event.preventDefault();
      const values = Object.fromEntries(new FormData(element).entries());
      button.disabled = true;
      submit(values)
        .then(async (response) => (response.ok ? goToApp() : show(await reasonOf(response), true)))
        .catch((error) => show(`The server could not be reached (${error.message}).`, true))
        .finally(() => (button.disabled = false));
    });
    forms?.append(element);
  };
  const email = { name: 'email', label: 'Email', type: 'email', autocomplete: 'username' };
  const displayName = { name: 'displayName', label: 'Your name', type: 'text', autocomplete: 'name', required: false };
  const newPassword = { name: 'password', label: 'Password (at least 8 characters)', type: 'password', autocomplete: 'new-password', minLength: 8 };

  fetch('/web/v1/api/platform/state', { credentials: 'same-origin', cache: 'no-store' })
    .then(async (response) => {
      if (!response.ok) return show(`The server answered ${response.status}.`, true);
      const state = await response.json();
      if (state.platform !== true) {
        show('This sign-in link has no code. Run `openvaala open` for a new link.', true);
        return;
      }
      csrfToken = state.csrfToken;
      const error = fragment.get('error');
      const invitation = fragment.get('invitation');
      const pairing = fragment.get('pairing');
      if (pairing) {
        show('Pairing this browser…');
        const answer = await post('pairing', { code: pairing });
        return answer.ok ? goToApp() : show(`Pairing failed: ${await reasonOf(answer)}.`, true);
      }
      if (invitation) {
        show('You were invited. Choose a password to create your account.');
        return form('Accept invitation', [displayName, newPassword], 'Create account', (values) => post('invitation', { code: invitation, ...values }));
      }
      if (state.user) return goToApp();
      if (!state.claimed) {
        show('This server has no administrator yet. Create the first one (or run `openvaala users claim`).');
        return form('Claim', [email, displayName, newPassword], 'Create administrator', (values) => post('claim', values));
      }
      show(error ?? 'Sign in.', error !== null);
      form('Sign in', [email, { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' }], 'Sign in', (values) => post('sign-in', values));
      for (const issuer of state.oidc) {
        const link = document.createElement('a');
        link.className = 'button';
        link.href = `/web/v1/api/platform/oidc/${encodeURIComponent(issuer.name)}/start`;
        link.textContent = `Sign in with ${issuer.label}`;
        forms?.append(link);
      }
    })
    .catch((error) => show(`The server could not be reached (${error.message}).`, true));
})();
