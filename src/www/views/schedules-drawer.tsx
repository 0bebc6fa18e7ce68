/**
 * The scheduled tasks of a conversation (docs/protocol.md, "Scheduled tasks"): each task with
 * its kind, schedule, next run and whether it is enabled (a task the agent created waits,
 * disabled, for a person to enable it); creating one (once, cron in a time zone, or every
 * interval); pause, resume, run now, delete; and the run history of a task with each outcome.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ScheduledTask, ScheduleRun, TaskSchedule } from '../../protocol/schedules.js';
import { confirmAction } from '../components/confirm-dialog.js';
import { failureMessage } from '../components/feedback.js';
import { formatDuration } from '../components/format.js';
import { useApp } from '../state/app-state.js';

type Kind = TaskSchedule['kind'];

/** How a schedule reads to a person, after its kind. */
function describeSchedule(schedule: TaskSchedule): string {
  if (schedule.kind === 'once') return `at ${new Date(schedule.at).toLocaleString()}`;
  if (schedule.kind === 'cron') return `${schedule.expression} (${schedule.timeZone})`;
  return `every ${formatInterval(schedule.everyMs)}`;
}

/** An interval in ms as whole days, hours or minutes when it is one, else as a duration. */
function formatInterval(ms: number): string {
  for (const [unit, size] of [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000]] as const) {
    if (ms % size === 0) return `${ms / size} ${unit}${ms === size ? '' : 's'}`;
  }
  return formatDuration(ms);
}

/** What a run's status means to a person. */
const RUN_STATUS_TEXT: Record<ScheduleRun['status'], string> = {
  queued: 'queued (runs after the current run)',
  claimed: 'starting',
  dispatched: 'running',
  retrying: 'waiting to retry',
  completed: 'completed',
  failed: 'failed',
  skipped: 'skipped (the previous run was still going)',
  missed: 'missed (the server was down)',
  abandoned: 'abandoned',
  interrupted: 'interrupted',
};

/**
 * The schedule the creation form describes.
 * @throws Error naming the field when a value is missing or out of range
 */
function scheduleOf(kind: Kind, fields: { at: string; expression: string; timeZone: string; everyMinutes: string }): TaskSchedule {
  if (kind === 'once') {
    const at = new Date(fields.at).getTime();
    if (!fields.at || Number.isNaN(at)) throw new Error('Run at: give a date and time');
    return { kind, at };
  }
  if (kind === 'cron') {
    if (!fields.expression.trim()) throw new Error('Cron expression: give five fields (minute hour day month weekday)');
    return { kind, expression: fields.expression.trim(), timeZone: fields.timeZone.trim() || 'UTC' };
  }
  const minutes = Number(fields.everyMinutes);
  if (!Number.isFinite(minutes) || minutes < 1) throw new Error('Every (minutes): give at least 1');
  return { kind, everyMs: Math.round(minutes * 60_000) };
}

function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** The form creating a task. */
function NewTaskForm({ create }: { create: (name: string, prompt: string, schedule: TaskSchedule) => Promise<void> }) {
  const [name, setName] = useState('');
  const [prompt, setPrompt] = useState('');
  const [kind, setKind] = useState<Kind>('once');
  const [fields, setFields] = useState({ at: '', expression: '0 9 * * 1-5', timeZone: localTimeZone(), everyMinutes: '60' });
  const [error, setError] = useState<string | undefined>();
  const field = (key: keyof typeof fields) => (event: { currentTarget: HTMLInputElement }) => setFields({ ...fields, [key]: event.currentTarget.value });
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await create(name.trim(), prompt, scheduleOf(kind, fields));
      setName('');
      setPrompt('');
      setError(undefined);
    } catch (failure) {
      setError(failureMessage(failure));
    }
  };
  return (
    <form class="schedule-form" aria-label="New scheduled task" onSubmit={(event) => void submit(event)}>
      <label>
        Name
        <input required maxLength={200} value={name} onInput={(event) => setName(event.currentTarget.value)} />
      </label>
      <label>
        Prompt
        <textarea required rows={2} value={prompt} onInput={(event) => setPrompt(event.currentTarget.value)} />
      </label>
      <label>
        Kind
        <select value={kind} onChange={(event) => setKind(event.currentTarget.value as Kind)}>
          <option value="once">Once</option>
          <option value="cron">Cron</option>
          <option value="interval">Interval</option>
        </select>
      </label>
      {kind === 'once' ? (
        <label>
          Run at
          <input type="datetime-local" value={fields.at} onInput={field('at')} />
        </label>
      ) : kind === 'cron' ? (
        <>
          <label>
            Cron expression
            <input value={fields.expression} onInput={field('expression')} />
          </label>
          <label>
            Time zone
            <input value={fields.timeZone} onInput={field('timeZone')} />
          </label>
        </>
      ) : (
        <label>
          Every (minutes)
          <input type="number" min={1} value={fields.everyMinutes} onInput={field('everyMinutes')} />
        </label>
      )}
      <button type="submit">Create task</button>
      {error ? (
        <p class="error-text" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}

/** The run history of one task, newest first. */
function RunHistory({ runs }: { runs: ScheduleRun[] }) {
  if (runs.length === 0) return <p class="muted">No runs yet.</p>;
  return (
    <ol class="schedule-runs" aria-label="Run history">
      {runs.map((run) => (
        <li key={run.id}>
          <span class={`run-status run-${run.status}`}>{RUN_STATUS_TEXT[run.status]}</span> · {run.trigger === 'manual' ? 'run now' : run.trigger === 'catchUp' ? 'catch-up' : 'scheduled'} · {new Date(run.occurrenceAt).toLocaleString()}
          {run.attempts > 1 ? ` · ${run.attempts} attempts` : ''}
          {run.error ? <div class="error-text">{run.error}</div> : null}
        </li>
      ))}
    </ol>
  );
}

/** Statuses of a run that will still change (ScheduleRunStatusSchema). */
const UNFINISHED_RUN_STATUSES: ReadonlySet<ScheduleRun['status']> = new Set(['queued', 'claimed', 'dispatched', 'retrying']);
/** How soon a history showing an unfinished run is read again, ms. */
const HISTORY_RECHECK_MS = 1_000;

/** The scheduled-tasks drawer of a conversation. */
export function SchedulesDrawer({ conversationId }: { conversationId: string }) {
  const app = useApp();
  const [tasks, setTasks] = useState<ScheduledTask[] | undefined>();
  const [history, setHistory] = useState<{ taskId: string; runs: ScheduleRun[] } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [creating, setCreating] = useState(false);
  const load = () =>
    app.client.request('schedules/list', { conversationId }).then(
      (result) => setTasks(result.tasks),
      (failure: unknown) => setError(failureMessage(failure)),
    );
  // The task whose history is shown or asked for. Read by the notification listener at the
  // moment a turn ends: a run started with "Run now" can end before its history's answer is
  // drawn, and a value captured at the last render would miss that end.
  const historyTask = useRef<string | undefined>();
  const showHistory = (taskId: string) => {
    historyTask.current = taskId;
    return app.client.request('schedules/history', { taskId }).then(
      (result) => {
        if (historyTask.current === taskId) setHistory({ taskId, runs: result.runs });
      },
      (failure: unknown) => setError(failureMessage(failure)),
    );
  };
  const hideHistory = () => {
    historyTask.current = undefined;
    setHistory(undefined);
  };
  useEffect(() => void load(), [conversationId]);
  // A run's status is saved after its turn ends (the scheduler waits for the turn, then records
  // the outcome), so the history read when `turn/completed` arrives can still show it running:
  // while a shown run is unfinished, the history is read again.
  useEffect(() => {
    if (!history?.runs.some((run) => UNFINISHED_RUN_STATUSES.has(run.status))) return;
    const timer = setTimeout(() => void showHistory(history.taskId), HISTORY_RECHECK_MS);
    return () => clearTimeout(timer);
  }, [history]);
  // A run started here changes status as its turn goes: the shown history follows each turn's end.
  useEffect(
    () =>
      app.client.onNotification((event) => {
        if (event.method !== 'turn/completed' || event.params.conversationId !== conversationId) return;
        void load();
        if (historyTask.current !== undefined) void showHistory(historyTask.current);
      }),
    [conversationId],
  );
  const act = async (work: () => Promise<unknown>, then?: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
      await load();
      await then?.();
    } catch (failure) {
      setError(failureMessage(failure));
    }
  };
  const create = async (name: string, prompt: string, schedule: TaskSchedule) => {
    await app.client.request('schedules/create', { conversationId, name, prompt, schedule });
    setCreating(false);
    await load();
  };
  const remove = async (task: ScheduledTask) => {
    if (!(await confirmAction(`Delete the scheduled task “${task.name}” and its run history?`, 'Delete'))) return;
    await act(() => app.client.request('schedules/delete', { taskId: task.id }));
    if (history?.taskId === task.id) hideHistory();
  };
  if (!tasks) return error ? <p class="error-text" role="alert">{error}</p> : <p class="muted">Loading…</p>;
  return (
    <div class="schedules-drawer">
      {error ? (
        <p class="error-text" role="alert">
          {error}
        </p>
      ) : null}
      {tasks.length === 0 ? <p class="muted">No scheduled tasks.</p> : null}
      <ul class="schedule-tasks" aria-label="Scheduled tasks">
        {tasks.map((task) => (
          <li key={task.id} class="schedule-task">
            <div>
              <strong>{task.name}</strong> <span class={`badge ${task.enabled ? '' : 'paused'}`}>{task.enabled ? 'enabled' : task.createdByAgent ? 'awaiting enabling' : 'paused'}</span>
            </div>
            <div class="muted">
              {task.schedule.kind} · {describeSchedule(task.schedule)}
              {task.enabled && task.nextRunAt !== undefined ? ` · next run ${new Date(task.nextRunAt).toLocaleString()}` : ''}
            </div>
            {task.createdByAgent && !task.enabled ? <p class="note">The agent created this task: it runs only once a person enables it.</p> : null}
            <div class="schedule-actions">
              {task.enabled ? (
                <button type="button" class="secondary small" onClick={() => void act(() => app.client.request('schedules/pause', { taskId: task.id }))}>
                  Pause
                </button>
              ) : (
                <button type="button" class="secondary small" onClick={() => void act(() => app.client.request('schedules/resume', { taskId: task.id }))}>
                  {task.createdByAgent ? 'Enable' : 'Resume'}
                </button>
              )}
              <button type="button" class="secondary small" onClick={() => void act(() => app.client.request('schedules/runNow', { taskId: task.id }), () => showHistory(task.id))}>
                Run now
              </button>
              <button type="button" class="secondary small" aria-pressed={history?.taskId === task.id} onClick={() => (history?.taskId === task.id ? hideHistory() : void showHistory(task.id))}>
                History
              </button>
              <button type="button" class="secondary small danger-text" onClick={() => void remove(task)}>
                Delete
              </button>
            </div>
            {history?.taskId === task.id ? <RunHistory runs={history.runs} /> : null}
          </li>
        ))}
      </ul>
      {creating ? (
        <NewTaskForm create={create} />
      ) : (
        <button type="button" class="secondary small" onClick={() => setCreating(true)}>
          New task
        </button>
      )}
    </div>
  );
}
