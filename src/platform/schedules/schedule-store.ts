/**
 * Tasks and runs on RecordStorage (SPEC §4): namespace `schedule_tasks` (key: task id,
 * filterable by `conversationId`) and `schedule_runs` (key: `<task id>/<occurrence, 15-digit
 * ms>/<trigger>`, filterable by `taskId` and `conversationId`). One key per occurrence is
 * what makes a claim unique: an occurrence whose run record exists is never claimed again.
 */
import type { RecordStorage } from '../../storage/record-storage.js';
import { isFinalRunStatus, type StoredRun, type StoredTask } from './task-types.js';

const TASKS = 'schedule_tasks';
const RUNS = 'schedule_runs';

/** The key of an occurrence's run; sorts by task, then occurrence time. */
export function runKey(taskId: string, occurrenceAt: number, trigger: StoredRun['trigger']): string {
  return `${taskId}/${String(occurrenceAt).padStart(15, '0')}/${trigger}`;
}

/** Reads and writes tasks and runs. */
export class ScheduleStore {
  /** @param records storage holding the two namespaces (declared here) */
  constructor(private readonly records: RecordStorage) {
    records.defineNamespace({ name: TASKS, filterFields: ['conversationId'] });
    records.defineNamespace({ name: RUNS, filterFields: ['taskId', 'conversationId'] });
  }

  /** Stores a task (replacing the previous version). */
  async saveTask(task: StoredTask): Promise<void> {
    await this.records.set(TASKS, task.id, task);
  }

  /** A task by id, or undefined. */
  async getTask(taskId: string): Promise<StoredTask | undefined> {
    return (await this.records.get<StoredTask>(TASKS, taskId))?.value;
  }

  /** Every task, or those of one conversation. */
  async listTasks(conversationId?: string): Promise<StoredTask[]> {
    const tasks: StoredTask[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.records.list<StoredTask>(TASKS, { ...(conversationId ? { where: { conversationId } } : {}), limit: 500, ...(cursor ? { cursor } : {}) });
      tasks.push(...page.records.map((record) => record.value));
      cursor = page.nextCursor;
    } while (cursor);
    return tasks.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  /** Deletes a task and its runs; returns whether the task existed. */
  async deleteTask(taskId: string): Promise<boolean> {
    await this.records.deleteRange(RUNS, `${taskId}/`, `${taskId}0`);
    return this.records.delete(TASKS, taskId);
  }

  /** The run of an occurrence, or undefined. */
  async getRun(key: string): Promise<StoredRun | undefined> {
    return (await this.records.get<StoredRun>(RUNS, key))?.value;
  }

  /** Stores a run (replacing the previous version). */
  async saveRun(run: StoredRun): Promise<void> {
    await this.records.set(RUNS, run.id, run);
  }

  /** Runs of a task, newest occurrence first, at most `limit`. */
  async listRuns(taskId: string, limit: number): Promise<StoredRun[]> {
    const page = await this.records.list<StoredRun>(RUNS, { keyPrefix: `${taskId}/`, order: 'desc', limit });
    return page.records.map((record) => record.value);
  }

  /** Every run not finished (claimed, dispatched or retrying), of any task. */
  async listUnfinishedRuns(): Promise<StoredRun[]> {
    const runs: StoredRun[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.records.list<StoredRun>(RUNS, { limit: 500, ...(cursor ? { cursor } : {}) });
      runs.push(...page.records.map((record) => record.value).filter((run) => !isFinalRunStatus(run.status)));
      cursor = page.nextCursor;
    } while (cursor);
    return runs;
  }
}
