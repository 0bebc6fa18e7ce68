/**
 * The account part of settings in platform mode (docs/platform.md, "Sessions and tokens"):
 * who is signed in, their web sessions (revocable), their API tokens (created with a scope and
 * shown once, revocable), a pairing link for a phone, and signing out. Talks only the runtime
 * protocol (`account/*`), except signing out, which is the sign-in routes' POST with the CSRF
 * token. Shows nothing for the local owner or on a single-user server.
 */
import { useEffect, useState } from 'preact/hooks';
import type { MethodResult } from '../../protocol/methods.js';
import { ErrorText, failureMessage } from '../components/feedback.js';
import { useApp } from '../state/app-state.js';

type Account = MethodResult<'account/get'>;
type Session = MethodResult<'account/sessions/list'>['sessions'][number];
type Token = MethodResult<'account/tokens/list'>['tokens'][number];

function when(ms: number | undefined): string {
  return ms === undefined ? 'never' : new Date(ms).toLocaleString();
}

/** Ends this browser's platform session and goes to the sign-in page. */
async function signOut(): Promise<void> {
  const state = (await (await fetch('/web/v1/api/platform/state', { credentials: 'same-origin', cache: 'no-store' })).json()) as { csrfToken: string };
  await fetch('/web/v1/api/platform/sign-out', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': state.csrfToken }, body: '{}', credentials: 'same-origin' });
  location.assign('/web/v1/sign-in');
}

/** The account section of settings. */
export function AccountSettings() {
  const app = useApp();
  const [account, setAccount] = useState<Account | undefined>();
  const [sessions, setSessions] = useState<Session[]>([]);
  const [tokens, setTokens] = useState<Token[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [newToken, setNewToken] = useState<string | undefined>();
  const [pairing, setPairing] = useState<string | undefined>();
  const [tokenName, setTokenName] = useState('');
  const [tokenScope, setTokenScope] = useState<'read-only' | 'admin'>('read-only');

  const refresh = async () => {
    try {
      const found = await app.client.request('account/get', {});
      setAccount(found);
      if (found.caller !== 'user') return;
      setSessions((await app.client.request('account/sessions/list', {})).sessions);
      setTokens((await app.client.request('account/tokens/list', {})).tokens);
    } catch (failure) {
      setError(failureMessage(failure));
    }
  };
  useEffect(() => void refresh(), []);
  const act = (work: () => Promise<unknown>) => {
    setError(undefined);
    work().then(refresh, (failure: unknown) => setError(failureMessage(failure)));
  };

  if (!account?.platform || account.caller !== 'user' || !account.user) return null;
  return (
    <section aria-labelledby="account" class="account-settings">
      <h3 id="account">Account</h3>
      <p>
        Signed in as <strong>{account.user.displayName}</strong> ({account.user.email}), {account.user.role}.{' '}
        <button type="button" class="secondary small" onClick={() => void signOut()}>
          Sign out
        </button>
      </p>
      <ErrorText error={error} />
      <h4 id="sessions">Sessions</h4>
      <ul aria-labelledby="sessions" class="session-list">
        {sessions.map((session) => (
          <li key={session.id}>
            {session.current ? <strong>This browser</strong> : session.userAgent || 'unknown browser'} — signed in {when(session.createdAt)} ({session.method}) from {session.address}, last used {when(session.lastUsedAt)}
            {session.current ? null : (
              <button type="button" class="secondary small" aria-label={`Revoke session ${session.id}`} onClick={() => act(() => app.client.request('account/sessions/revoke', { sessionId: session.id }))}>
                Revoke
              </button>
            )}
          </li>
        ))}
      </ul>
      <button type="button" class="secondary" onClick={() => act(async () => setPairing((await app.client.request('account/pairing/create', {})).url))}>
        Pair a phone
      </button>
      {pairing ? (
        <p>
          Open this link on the phone within 5 minutes (it works once): <code class="pairing-link">{pairing}</code>
        </p>
      ) : null}
      <h4 id="tokens">API tokens</h4>
      <ul aria-labelledby="tokens" class="token-list">
        {tokens.map((token) => (
          <li key={token.id}>
            <strong>{token.name}</strong> ({token.scope.kind}) — created {when(token.createdAt)}, last used {when(token.lastUsedAt)}
            <button type="button" class="secondary small" aria-label={`Revoke token ${token.name}`} onClick={() => act(() => app.client.request('account/tokens/revoke', { tokenId: token.id }))}>
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <form
        aria-label="New API token"
        onSubmit={(event) => {
          event.preventDefault();
          act(async () => {
            const created = await app.client.request('account/tokens/create', { name: tokenName, scope: { kind: tokenScope } });
            setNewToken(created.token);
            setTokenName('');
          });
        }}
      >
        <label>
          Token name
          <input type="text" required maxLength={100} value={tokenName} onInput={(event) => setTokenName(event.currentTarget.value)} />
        </label>
        <label>
          Scope
          <select value={tokenScope} onChange={(event) => setTokenScope(event.currentTarget.value as 'read-only' | 'admin')}>
            <option value="read-only">read-only</option>
            {account.user.role === 'admin' ? <option value="admin">admin</option> : null}
          </select>
        </label>
        <button type="submit">Create token</button>
      </form>
      {newToken ? (
        <p role="status">
          Copy the token now, it is shown only once: <code class="new-token">{newToken}</code>
        </p>
      ) : null}
    </section>
  );
}
