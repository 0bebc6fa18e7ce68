/**
 * The project list (docs/platform.md, "Projects"): each project with its status, this month's
 * cost, start and stop, links to its members, secrets and costs, and a form that creates one on an executor's
 * directory. Server errors are shown as given (they name the field).
 */
import { useEffect, useState } from 'preact/hooks';
import type { MethodResult } from '../../protocol/methods.js';
import { ExecutorOptions } from '../components/catalog-options.js';
import { ErrorText, failureMessage } from '../components/feedback.js';
import { useApp } from '../state/app-state.js';
import { navigate } from '../state/route.js';
import { useStore } from '../state/use-store.js';
import { MonthTotal } from './project-costs.js';

/** The current month's total of each listed project (a project whose costs cannot be read shows none). */
function useMonthTotals(projectIds: string[]): Map<string, MethodResult<'costs/project'>> {
  const app = useApp();
  const [totals, setTotals] = useState(new Map<string, MethodResult<'costs/project'>>());
  useEffect(() => {
    let current = true;
    void Promise.all(projectIds.map((projectId) => app.client.request('costs/project', { projectId }).then((result) => [projectId, result] as const, () => undefined))).then((entries) => {
      if (current) setTotals(new Map(entries.filter((entry) => entry !== undefined)));
    });
    return () => {
      current = false;
    };
  }, [projectIds.join(' ')]);
  return totals;
}

/** The projects page. */
export function ProjectsPage() {
  const app = useApp();
  const projects = app.projects;
  useStore(projects);
  useStore(app);
  const [name, setName] = useState('');
  const [executor, setExecutor] = useState('local');
  const [directory, setDirectory] = useState('');
  const [error, setError] = useState<string | undefined>();
  const monthTotals = useMonthTotals(projects.projects.map((project) => project.id));

  const run = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
      await projects.load();
    } catch (failure) {
      setError(failureMessage(failure));
    }
  };

  return (
    <main class="projects-page" id="main" aria-label="Projects">
      <h2>Projects</h2>
      <ErrorText error={error} />
      <ul class="project-rows">
        {projects.projects.map((project) => (
          <li key={project.id} data-project-id={project.id}>
            <strong>{project.name}</strong> <span class="muted">{project.slug}</span>{' '}
            <span class={`project-status ${project.status}`} title={project.statusMessage}>
              {project.status}
            </span>
            <span class="muted"> · {project.workspace.executor}:{project.workspace.directory}</span>
            {monthTotals.get(project.id) ? (
              <span class="muted">
                {' · '}
                <MonthTotal costs={monthTotals.get(project.id)!} />
              </span>
            ) : null}
            <span class="spacer" />
            {project.status === 'running' ? (
              <button type="button" class="secondary small" onClick={() => void run(() => app.client.request('projects/stop', { projectId: project.id }))}>
                Stop
              </button>
            ) : (
              <button type="button" class="secondary small" onClick={() => void run(() => app.client.request('projects/start', { projectId: project.id }))}>
                Start
              </button>
            )}
            <button type="button" class="secondary small" onClick={() => navigate({ view: 'project-members', projectId: project.id })}>
              Members
            </button>
            <button type="button" class="secondary small" onClick={() => navigate({ view: 'project-secrets', projectId: project.id })}>
              Secrets
            </button>
            <button type="button" class="secondary small" onClick={() => navigate({ view: 'project-costs', projectId: project.id })}>
              Costs
            </button>
          </li>
        ))}
      </ul>
      {projects.projects.length === 0 ? <p class="muted">No projects yet.</p> : null}
      <form
        class="project-create"
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            const { project } = await app.client.request('projects/create', { name, workspace: { executor, directory } });
            setName('');
            setDirectory('');
            projects.select(project.id);
          });
        }}
      >
        <h3>New project</h3>
        <label>
          Name
          <input type="text" required value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <label>
          Executor
          <select value={executor} onChange={(event) => setExecutor(event.currentTarget.value)}>
            <ExecutorOptions executors={app.catalog.executors.length > 0 ? app.catalog.executors : [{ name: 'local', kind: 'local' }]} />
          </select>
        </label>
        <label>
          Workspace directory
          <input type="text" required placeholder="/absolute/path" value={directory} onInput={(event) => setDirectory(event.currentTarget.value)} />
        </label>
        <button type="submit">Create project</button>
      </form>
    </main>
  );
}
