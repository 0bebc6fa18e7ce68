/**
 * Settings through `config/get` and `config/update` (docs/protocol.md, "Configuration and
 * server"): providers and their keys, the default model, each agent's approval policy default,
 * MCP servers, and any other value by file and key path. The server edits the YAML files
 * keeping comments and restores them when the result does not load; its error (with file,
 * line and key) is shown as given. Also the signed-in account (sessions, API tokens), the
 * user's own settings kept by the server, the theme of this browser and browser notifications.
 */
import { useEffect, useState } from 'preact/hooks';
import { askNotificationPermission } from '../client/browser-notifications.js';
import { ModelOptions } from '../components/catalog-options.js';
import { failureMessage } from '../components/feedback.js';
import { useApp } from '../state/app-state.js';
import { AccountSettings } from './account-settings.js';
import { UserSettings } from './user-settings.js';
import { PushNotificationsToggle } from './push-notifications.js';
import { setTheme, storedTheme, type Theme } from './theme.js';

type ConfigFile = 'providers' | 'agents' | 'mcp' | 'hooks' | 'executors' | 'server';
type Change = { file: ConfigFile; path: Array<string | number>; value?: unknown; remove?: boolean };
type Loose = Record<string, unknown>;

function record(value: unknown): Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Loose) : {};
}

/** The settings page. */
export function Settings() {
  const app = useApp();
  const [configuration, setConfiguration] = useState<Loose | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [theme, setThemeState] = useState<Theme>(storedTheme());
  const [raw, setRaw] = useState({ file: 'server' as ConfigFile, path: '', value: '' });

  const load = () =>
    app.client.request('config/get', {}).then(
      (result) => {
        setConfiguration(result.configuration);
        if (result.error) setError(result.error);
      },
      (failure: unknown) => setError(failureMessage(failure)),
    );
  useEffect(() => void load(), []);

  const update = async (changes: Change[], what: string) => {
    setError(undefined);
    setSaved(undefined);
    try {
      const result = await app.client.request('config/update', { changes });
      setConfiguration(result.configuration);
      setSaved(`Saved: ${what}`);
      void app.loadCatalog();
    } catch (failure) {
      setError(failureMessage(failure));
    }
  };

  // One theme control: the pick applies to this browser at once and is kept as the user's own
  // setting on the server (docs/platform.md, "Settings and the model catalog").
  const pickTheme = (picked: Theme) => {
    setTheme(picked);
    setThemeState(picked);
    app.client.request('settings/update', { changes: { theme: picked } }).catch((failure: unknown) => setError(`The theme applies to this browser only: ${failureMessage(failure)}`));
  };

  const providersFile = record(configuration?.providers);
  const providers = record(providersFile.providers);
  const agents = record(record(configuration?.agents).agents);
  const mcpServers = record(record(configuration?.mcp).servers);

  return (
    <main class="settings" id="main" aria-label="Settings">
      <h2>Settings</h2>
      <AccountSettings />
      <UserSettings />
      {error ? (
        <pre role="alert" class="error-box">
          {error}
        </pre>
      ) : null}
      {saved ? (
        <p role="status" class="note">
          {saved}
        </p>
      ) : null}
      <section aria-labelledby="appearance">
        <h3 id="appearance">Appearance and notifications</h3>
        <label>
          Theme
          <select value={theme} onChange={(event) => pickTheme(event.currentTarget.value as Theme)}>
            <option value="system">System</option>
            <option value="dark">Dark</option>
            <option value="light">Light</option>
          </select>
        </label>
        <button type="button" class="secondary" onClick={askNotificationPermission}>
          Allow notifications when a turn ends or needs approval
        </button>
        <PushNotificationsToggle />
      </section>
      {!configuration ? (
        <p class="muted">Loading configuration…</p>
      ) : (
        <>
          <section aria-labelledby="providers">
            <h3 id="providers">Providers and keys</h3>
            <label>
              Default model
              <select value={String(providersFile.defaultModel ?? '')} onChange={(event) => void update([{ file: 'providers', path: ['defaultModel'], value: event.currentTarget.value }], 'default model')}>
                <option value="">(none)</option>
                <ModelOptions models={app.catalog.models} />
              </select>
            </label>
            <table class="settings-table">
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Base URL</th>
                  <th scope="col">API key</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(providers).map(([name, value]) => (
                  <ProviderRow key={name} name={name} provider={record(value)} onKey={(key) => void update([{ file: 'providers', path: ['providers', name, 'apiKey'], value: key }], `key of ${name}`)} />
                ))}
              </tbody>
            </table>
          </section>
          <section aria-labelledby="agents">
            <h3 id="agents">Agents' approval policy</h3>
            <table class="settings-table">
              <tbody>
                {Object.entries(agents).map(([name, value]) => {
                  const approvals = record(record(value).approvals);
                  return (
                    <tr key={name}>
                      <th scope="row">{name}</th>
                      <td>
                        <select aria-label={`Approval default of ${name}`} value={String(approvals.default ?? 'allow')} onChange={(event) => void update([{ file: 'agents', path: ['agents', name, 'approvals', 'default'], value: event.currentTarget.value }], `approval default of ${name}`)}>
                          <option value="allow">allow</option>
                          <option value="ask">ask</option>
                          <option value="deny">deny</option>
                        </select>
                      </td>
                      <td class="muted">{Array.isArray(approvals.rules) ? `${approvals.rules.length} rules` : 'no rules'}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </section>
          <section aria-labelledby="mcp">
            <h3 id="mcp">MCP servers</h3>
            <ul>
              {Object.entries(mcpServers).map(([name, value]) => (
                <li key={name}>
                  <strong>{name}</strong> <code class="muted">{JSON.stringify(value)}</code>{' '}
                  <button type="button" class="secondary small" onClick={() => void update([{ file: 'mcp', path: ['servers', name], remove: true }], `removed MCP server ${name}`)}>
                    Remove
                  </button>
                </li>
              ))}
            </ul>
            <AddMcpServer onAdd={(name, entry) => void update([{ file: 'mcp', path: ['servers', name], value: entry }], `MCP server ${name}`)} />
          </section>
          <section aria-labelledby="raw">
            <h3 id="raw">Any value</h3>
            <form
              class="form inline-form"
              onSubmit={(event) => {
                event.preventDefault();
                let value: unknown = raw.value;
                try {
                  value = JSON.parse(raw.value);
                } catch {
                  // Not JSON: the text itself is the value.
                }
                void update([{ file: raw.file, path: raw.path.split('.').filter(Boolean).map((part) => (/^\d+$/.test(part) ? Number(part) : part)), value }], `${raw.file} ${raw.path}`);
              }}
            >
              <label>
                File
                <select value={raw.file} onChange={(event) => setRaw({ ...raw, file: event.currentTarget.value as ConfigFile })}>
                  {(['providers', 'agents', 'mcp', 'hooks', 'executors', 'server'] as const).map((file) => (
                    <option key={file} value={file}>
                      {file}.yaml
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Key path (dots)
                <input type="text" required placeholder="limits.maxUploadBytes" value={raw.path} onInput={(event) => setRaw({ ...raw, path: event.currentTarget.value })} />
              </label>
              <label>
                Value (JSON or text)
                <input type="text" value={raw.value} onInput={(event) => setRaw({ ...raw, value: event.currentTarget.value })} />
              </label>
              <button type="submit">Save value</button>
            </form>
          </section>
        </>
      )}
    </main>
  );
}

function ProviderRow({ name, provider, onKey }: { name: string; provider: Loose; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  return (
    <tr>
      <th scope="row">{name}</th>
      <td>{String(provider.kind ?? '')}</td>
      <td>
        <code>{String(provider.baseURL ?? '')}</code>
      </td>
      <td>
        <form onSubmit={(event) => (event.preventDefault(), onKey(key), setKey(''))} class="inline-form">
          <input type="password" aria-label={`API key of ${name}`} placeholder={provider.apiKey ? String(provider.apiKey) : 'not set'} value={key} onInput={(event) => setKey(event.currentTarget.value)} autoComplete="off" />
          <button type="submit" class="small" disabled={!key}>
            Set
          </button>
        </form>
      </td>
    </tr>
  );
}

function AddMcpServer({ onAdd }: { onAdd: (name: string, entry: unknown) => void }) {
  const [name, setName] = useState('');
  const [entry, setEntry] = useState('{"transport": "stdio", "command": "npx", "args": []}');
  const [problem, setProblem] = useState<string | undefined>();
  return (
    <form
      class="form inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        try {
          onAdd(name, JSON.parse(entry));
          setProblem(undefined);
        } catch (error) {
          setProblem(`the entry is not JSON: ${error instanceof Error ? error.message : String(error)}`);
        }
      }}
    >
      <label>
        Name
        <input type="text" required value={name} onInput={(event) => setName(event.currentTarget.value)} />
      </label>
      <label>
        Entry (JSON, as in mcp.yaml)
        <input type="text" value={entry} onInput={(event) => setEntry(event.currentTarget.value)} />
      </label>
      <button type="submit">Add server</button>
      {problem ? <p class="error-text">{problem}</p> : null}
    </form>
  );
}
