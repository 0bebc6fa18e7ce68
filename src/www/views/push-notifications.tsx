/**
 * The "Notifications on this device" toggle of the settings page (docs/notifications.md): Web
 * Push to this browser when a turn ends or waits for an approval or an answer and no tab shows
 * the conversation.
 */
import { useEffect, useState } from 'preact/hooks';
import { disablePush, enablePush, pushEnabled, pushSupported } from '../client/push-subscription.js';
import { ErrorText, failureMessage } from '../components/feedback.js';
import { useApp } from '../state/app-state.js';

/** The toggle, or a note saying why this browser cannot have it. */
export function PushNotificationsToggle() {
  const app = useApp();
  const [enabled, setEnabled] = useState<boolean | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const supported = pushSupported();
  useEffect(() => {
    if (!supported) return;
    pushEnabled(app.client).then(setEnabled, (failure: unknown) => setError(failureMessage(failure)));
  }, []);
  if (!supported) return <p class="muted">Notifications when no tab is open need a browser with the Push API and a secure address (https or localhost).</p>;

  const toggle = async (on: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      if (on) await enablePush(app.client);
      else await disablePush(app.client);
      setEnabled(on);
    } catch (failure) {
      setError(failureMessage(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="push-notifications">
      <label>
        <input type="checkbox" checked={enabled === true} disabled={busy || enabled === undefined} onChange={(event) => void toggle(event.currentTarget.checked)} />
        Notifications on this device when no tab is open (a turn ends, an approval or an answer is needed)
      </label>
      <ErrorText error={error} />
    </div>
  );
}
