/**
 * A project's secrets (docs/platform.md, "Secrets"): names with their values for managers,
 * `***` for members; setting one (written to the workspace `.env` and given to commands) and
 * removing one. A value typed here is sent once and never shown back to members.
 */
import { useEffect, useState } from 'preact/hooks';
import { useApp } from '../state/app-state.js';

type Secret = { name: string; value: string; updatedAt: number };

/** The secrets page of one project. */
export function ProjectSecrets({ projectId }: { projectId: string }) {
  const app = useApp();
  const [secrets, setSecrets] = useState<Secret[]>([]);
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const project = app.projects.projects.find((entry) => entry.id === projectId);

  const load = () =>
    app.client.request('projects/secrets/list', { projectId }).then(
      (result) => setSecrets(result.secrets),
      (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
    );
  useEffect(() => void load(), [projectId]);

  const change = async (work: () => Promise<unknown>, done: string) => {
    setError(undefined);
    setSaved(undefined);
    try {
      await work();
      setSaved(done);
      await load();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };

  return (
    <main class="project-secrets" id="main" aria-label="Project secrets">
      <h2>Secrets of {project?.name ?? projectId}</h2>
      <p class="muted">Stored encrypted, written to the workspace .env, given to the project's commands, and shown as *** everywhere else.</p>
      {error ? (
        <p role="alert" class="error-text">
          {error}
        </p>
      ) : null}
      {saved ? (
        <p role="status" class="saved">
          {saved}
        </p>
      ) : null}
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {secrets.map((secret) => (
            <tr key={secret.name} data-secret={secret.name}>
              <td>
                <code>{secret.name}</code>
              </td>
              <td>
                <code class="secret-value">{secret.value}</code>
              </td>
              <td>
                <button type="button" class="secondary small" aria-label={`Remove ${secret.name}`} onClick={() => void change(() => app.client.request('projects/secrets/remove', { projectId, name: secret.name }), `Removed ${secret.name}`)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {secrets.length === 0 ? <p class="muted">No secrets yet.</p> : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const secretName = name.trim();
          void change(async () => {
            await app.client.request('projects/secrets/set', { projectId, name: secretName, value });
            setName('');
            setValue('');
          }, `Saved ${secretName}`);
        }}
      >
        <label>
          Name
          <input type="text" required pattern="[A-Za-z_][A-Za-z0-9_]*" value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <label>
          Value
          <input type="password" required autocomplete="off" value={value} onInput={(event) => setValue(event.currentTarget.value)} />
        </label>
        <button type="submit">Set secret</button>
      </form>
    </main>
  );
}
