/**
 * A project's secrets (docs/platform.md, "Secrets"): names with their values for managers,
 * `***` for members; setting one (written to the workspace `.env` and given to commands) and
 * removing one. A value typed here is sent once and never shown back to members.
 */
import { useState } from 'preact/hooks';
import { ErrorText, SavedText } from '../components/feedback.js';
import { ItemTable, RemoveCell } from '../components/item-table.js';
import { useReloadingList } from '../components/use-reloading-list.js';
import { useApp } from '../state/app-state.js';

type Secret = { name: string; value: string; updatedAt: number };

/** The secrets page of one project. */
export function ProjectSecrets({ projectId }: { projectId: string }) {
  const app = useApp();
  const { entries: secrets, error, saved, change } = useReloadingList<Secret>(async () => (await app.client.request('projects/secrets/list', { projectId })).secrets, projectId);
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const project = app.projects.projects.find((entry) => entry.id === projectId);

  return (
    <main class="project-secrets" id="main" aria-label="Project secrets">
      <h2>Secrets of {project?.name ?? projectId}</h2>
      <p class="muted">Stored encrypted, written to the workspace .env, given to the project's commands, and shown as *** everywhere else.</p>
      <ErrorText error={error} />
      <SavedText message={saved} />
      <ItemTable headings={['Name', 'Value']}>
        {secrets.map((secret) => (
          <tr key={secret.name} data-secret={secret.name}>
            <td>
              <code>{secret.name}</code>
            </td>
            <td>
              <code class="secret-value">{secret.value}</code>
            </td>
            <RemoveCell what={secret.name} onRemove={() => void change(() => app.client.request('projects/secrets/remove', { projectId, name: secret.name }), `Removed ${secret.name}`)} />
          </tr>
        ))}
      </ItemTable>
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
