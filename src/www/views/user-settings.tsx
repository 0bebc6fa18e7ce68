/**
 * The signed-in user's own settings (`settings/get`, `settings/update`; docs/platform.md,
 * "Settings and the model catalog"): default agent, model and reasoning effort, kept by the
 * server for this user on every device. A section of the settings page; the theme setting is
 * written by the page's one theme control (settings.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import type { UserSettings } from '../../protocol/projects.js';
import { ModelOptions } from '../components/catalog-options.js';
import { ErrorText, failureMessage, SavedText } from '../components/feedback.js';
import { useApp } from '../state/app-state.js';
import { useStore } from '../state/use-store.js';

const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high'] as const;

/** The "My settings" section of the settings page. */
export function UserSettings() {
  const app = useApp();
  useStore(app);
  const [settings, setSettings] = useState<UserSettings>({});
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    app.client.request('settings/get', {}).then(
      (result) => setSettings(result.settings),
      (failure: unknown) => setError(failureMessage(failure)),
    );
  }, []);

  const save = async (changes: Record<string, string | null>) => {
    setError(undefined);
    setSaved(false);
    try {
      const result = await app.client.request('settings/update', { changes });
      setSettings(result.settings);
      setSaved(true);
    } catch (failure) {
      setError(failureMessage(failure));
    }
  };
  const pick = (field: keyof UserSettings) => (event: { currentTarget: HTMLSelectElement }) => void save({ [field]: event.currentTarget.value || null });

  return (
    <section class="user-settings" aria-labelledby="my-settings">
      <h3 id="my-settings">My settings (on every device)</h3>
      <ErrorText error={error} />
      <SavedText message={saved ? 'Saved' : undefined} />
      <label>
        Default agent
        <select value={settings.defaultAgent ?? ''} onChange={pick('defaultAgent')}>
          <option value="">(server default)</option>
          {app.catalog.agents.map((agent) => (
            <option key={agent.name} value={agent.name}>
              {agent.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Model
        <select value={settings.model ?? ''} onChange={pick('model')}>
          <option value="">(server default)</option>
          <ModelOptions models={app.catalog.models} />
        </select>
      </label>
      <label>
        Reasoning effort
        <select value={settings.reasoningEffort ?? ''} onChange={pick('reasoningEffort')}>
          <option value="">(model default)</option>
          {EFFORTS.map((effort) => (
            <option key={effort} value={effort}>
              {effort}
            </option>
          ))}
        </select>
      </label>
    </section>
  );
}
