/**
 * A project's costs (docs/platform.md, "Costs and thresholds"): the total of a calendar month
 * (UTC) with where it stands against the thresholds, the share of each user, and, for the
 * project's managers and administrators, the form that sets the warning and pausing thresholds.
 */
import { useEffect, useState } from 'preact/hooks';
import type { MethodResult } from '../../protocol/methods.js';
import { ErrorText, failureMessage, SavedText } from '../components/feedback.js';
import { formatTokens, formatUsd } from '../components/format.js';
import { useApp } from '../state/app-state.js';

type ProjectCostsResult = MethodResult<'costs/project'>;

/** The current calendar month in UTC, `YYYY-MM`. */
function currentMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

/** A threshold as typed: empty removes it, otherwise a positive number of USD. @throws Error naming the field */
function thresholdValue(label: string, text: string): number | null {
  if (text.trim() === '') return null;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${label}: give a positive amount in USD, or leave it empty for none`);
  return value;
}

/** The month total of a project, as one line (used on the project list too). */
export function MonthTotal({ costs }: { costs: ProjectCostsResult }) {
  const state = costs.paused ? ' · paused: pausing threshold reached' : costs.warning ? ' · warning threshold reached' : '';
  return (
    <span class={`project-month-cost ${costs.paused ? 'danger-text' : ''}`}>
      {formatUsd(costs.totals.costUsd)} in {costs.month}
      {state}
    </span>
  );
}

/** The costs page of one project. */
export function ProjectCosts({ projectId }: { projectId: string }) {
  const app = useApp();
  const project = app.projects.projects.find((entry) => entry.id === projectId);
  const [month, setMonth] = useState(currentMonth());
  const [costs, setCosts] = useState<ProjectCostsResult | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [warnUsd, setWarnUsd] = useState('');
  const [pauseUsd, setPauseUsd] = useState('');
  const load = () =>
    app.client.request('costs/project', { projectId, month }).then((result) => {
      setCosts(result);
      setWarnUsd(result.thresholds.warnUsd !== undefined ? String(result.thresholds.warnUsd) : '');
      setPauseUsd(result.thresholds.pauseUsd !== undefined ? String(result.thresholds.pauseUsd) : '');
    });
  useEffect(() => {
    load().catch((failure: unknown) => setError(failureMessage(failure)));
  }, [projectId, month]);
  // Administrators who are not members have no role; the server decides either way.
  const mayManage = project?.role !== 'member';
  const saveThresholds = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setSaved(undefined);
    try {
      await app.client.request('costs/setThresholds', { projectId, warnUsd: thresholdValue('Warn at', warnUsd), pauseUsd: thresholdValue('Pause new turns at', pauseUsd) });
      await load();
      setSaved('Thresholds saved');
    } catch (failure) {
      setError(failureMessage(failure));
    }
  };
  return (
    <main class="project-costs" id="main" aria-label="Project costs">
      <h2>Costs of {project?.name ?? projectId}</h2>
      <label>
        Month (UTC)
        <input type="month" value={month} onInput={(event) => event.currentTarget.value && setMonth(event.currentTarget.value)} />
      </label>
      <ErrorText error={error} />
      <SavedText message={saved} />
      {costs ? (
        <>
          <p aria-label="Month total">
            <strong>
              <MonthTotal costs={costs} />
            </strong>{' '}
            <span class="muted">
              · {formatTokens(costs.totals.usage.totalTokens)} tokens in {costs.totals.turns} turn{costs.totals.turns === 1 ? '' : 's'}
              {costs.totals.unpricedTurns > 0 ? ` (${costs.totals.unpricedTurns} without prices)` : ''}
            </span>
          </p>
          <table aria-label="Costs per user">
            <thead>
              <tr>
                {['User', 'Cost', 'Tokens', 'Turns'].map((heading) => (
                  <th key={heading} scope="col">
                    {heading}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {costs.byUser.map((entry) => (
                <tr key={entry.userId}>
                  <td>{entry.userId}</td>
                  <td>{formatUsd(entry.totals.costUsd)}</td>
                  <td>{formatTokens(entry.totals.usage.totalTokens)}</td>
                  <td>{entry.totals.turns}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {costs.byUser.length === 0 ? <p class="muted">No turns this month.</p> : null}
          <h3>Monthly thresholds</h3>
          {mayManage ? (
            <form class="cost-thresholds" onSubmit={(event) => void saveThresholds(event)}>
              <label>
                Warn at (USD)
                <input type="number" min="0" step="any" value={warnUsd} onInput={(event) => setWarnUsd(event.currentTarget.value)} />
              </label>
              <label>
                Pause new turns at (USD)
                <input type="number" min="0" step="any" value={pauseUsd} onInput={(event) => setPauseUsd(event.currentTarget.value)} />
              </label>
              <button type="submit">Save thresholds</button>
            </form>
          ) : (
            <p class="muted">
              Warn at {costs.thresholds.warnUsd !== undefined ? formatUsd(costs.thresholds.warnUsd) : 'no threshold'}; pause new turns at{' '}
              {costs.thresholds.pauseUsd !== undefined ? formatUsd(costs.thresholds.pauseUsd) : 'no threshold'}.
            </p>
          )}
        </>
      ) : null}
    </main>
  );
}
