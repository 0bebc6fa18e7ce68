/**
 * The server's scheduled tasks (docs/platform.md, "Scheduled tasks"): tasks and runs in
 * `<data dir>/schedules.db` (RecordStorage on SQLite), prompts delivered into conversations as
 * user messages of their root session, and the tasks of a deleted conversation deleted with it.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Logger } from '../logger.js';
import type { ScheduleDispatcher, TurnOutcome } from '../platform/schedules/dispatcher.js';
import { systemClock, type SchedulerClock } from '../platform/schedules/clock.js';
import { Scheduler, type SchedulerOptions } from '../platform/schedules/scheduler.js';
import { ScheduleService } from '../platform/schedules/schedule-service.js';
import { ScheduleStore } from '../platform/schedules/schedule-store.js';
import type { Runtime } from '../runtime/runtime.js';
import { openStoredDatabase } from '../storage/sqlite/damaged-database.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';

/** File of the scheduled tasks and their runs, in the data directory. */
export const SCHEDULES_DATABASE_FILE = 'schedules.db';

/**
 * Environment variable for the restart tests only: when `1`, every claimed run is held forever
 * between its claim and the delivery of its prompt (a deterministic window to kill the process in).
 */
export const HOLD_AFTER_CLAIM_VARIABLE = 'OPENVAALA_TEST_SCHEDULER_HOLD_AFTER_CLAIM';

/** Longest wait at shutdown for runs to record their outcome, ms. */
const CLOSE_WAIT_MS = 2000;

/** `clientName` of the user messages scheduled tasks send. */
export const SCHEDULER_CLIENT_NAME = 'scheduler';

/**
 * The task id in the input key of a scheduled delivery (`schedule:<run id>#<attempt>`, where a
 * run id starts with `<task id>/`: `inputKeyOf` in run-attempts.ts), or undefined for another key.
 */
export function taskIdOfInputKey(inputKey: string): string | undefined {
  return /^schedule:([^/#]+)\//.exec(inputKey)?.[1];
}

/**
 * Delivers prompts through the runtime: a queued user message on the conversation's root session.
 * @param delivered told of each delivered prompt's turn and input key (e.g. to count the turn's cost for the task's user)
 */
export function runtimeDispatcher(runtime: Runtime, delivered?: (turnId: string, inputKey: string) => void): ScheduleDispatcher {
  return {
    async deliver(conversationId, prompt, inputKey) {
      const conversation = await runtime.getConversation(conversationId);
      const outcome = await conversation.rootSession.input([{ type: 'text', text: prompt }], 'queue', { clientMessageId: inputKey, author: { clientName: SCHEDULER_CLIENT_NAME } });
      if (!outcome.turnId) throw new Error(`the conversation ${conversationId} gave no turn for the input`);
      delivered?.(outcome.turnId, inputKey);
      return { turnId: outcome.turnId };
    },
    async waitForTurn(conversationId, turnId): Promise<TurnOutcome> {
      // Twice at most: the session's queue may hold the input behind a running turn.
      for (let round = 0; round < 2; round += 1) {
        let conversation;
        try {
          conversation = await runtime.getConversation(conversationId);
        } catch (error) {
          return { status: 'failed', error: (error as Error).message };
        }
        const turn = conversation.snapshot().turns.find((candidate) => candidate.id === turnId);
        if (turn && turn.status !== 'running') return { status: turn.status, ...(turn.error ? { error: turn.error } : {}) };
        await conversation.sessions.get(turn?.sessionId ?? conversation.state.rootSessionId)?.idle();
      }
      return { status: 'interrupted', error: `turn ${turnId} did not run (its input was withdrawn)` };
    },
  };
}

/** How the server's scheduled tasks are started. */
export interface ScheduleStartOptions {
  /** Default: the system clock. */
  clock?: SchedulerClock;
  /** Told of the turn each delivered prompt started, with the user its task acts for (if any). */
  taskTurnStarted?: (turnId: string, userId: string | undefined) => void;
  /** Why a task may not run now as its user (the scheduler's `runRefusal`); without it every task runs. */
  runRefusal?: SchedulerOptions['runRefusal'];
}

/** The running scheduled tasks of a server. */
export interface ServerSchedules {
  service: ScheduleService;
  scheduler: Scheduler;
  /** Stops the timer and closes the database (runs in progress are reconciled at the next start). */
  close(): Promise<void>;
}

/**
 * Opens `<dataDir>/schedules.db`, reconciles what a previous process left, starts the timer,
 * and connects the service to the runtime (`runtime.schedules`, deletion of a conversation's tasks).
 *
 * A damaged file stops the start rather than the server running without its tasks: they run
 * unattended, so a server that went on without them would miss their runs where nobody looks,
 * and the conversations deleted meanwhile would keep tasks that fire into nothing once the file
 * is restored. The one who starts the server sees the refusal at once, with the command that
 * moves the file aside if they choose to go on without the tasks.
 * @param options the clock, who is told of delivered turns, and the check of a task's user before each run
 * @throws DamagedDatabaseError when the file is not a database SQLite can read (or a directory is
 *   in its place): names it and says to restore it from a backup or move it aside; it is neither moved nor replaced
 * @throws Error naming the file when the database cannot be opened otherwise
 */
export async function startSchedules(dataDir: string, runtime: Runtime, logger: Logger, options: ScheduleStartOptions = {}): Promise<ServerSchedules> {
  const { clock = systemClock, taskTurnStarted } = options;
  const database = openStoredDatabase(
    { file: path.join(dataDir, SCHEDULES_DATABASE_FILE), holds: 'the scheduled tasks and the record of their runs', withoutIt: 'the scheduled tasks (the conversations are not in it)' },
    'FULL',
  );
  const records = new SqliteRecordStorage(database);
  const hold = process.env[HOLD_AFTER_CLAIM_VARIABLE] === '1';
  const delivered = (turnId: string, inputKey: string) => {
    const taskId = taskIdOfInputKey(inputKey);
    let userId: string | undefined;
    try {
      // The service below, set on the runtime before the scheduler starts delivering.
      userId = taskId !== undefined ? runtime.schedules?.get(taskId).userId : undefined;
    } catch {
      // The task was deleted meanwhile: the turn is nobody's.
    }
    taskTurnStarted?.(turnId, userId);
  };
  const scheduler = new Scheduler({
    store: new ScheduleStore(records),
    dispatcher: runtimeDispatcher(runtime, delivered),
    clock,
    instanceId: `${process.pid}-${randomUUID()}`,
    logger,
    ...(options.runRefusal ? { runRefusal: options.runRefusal } : {}),
    ...(hold
      ? {
          afterClaim: (run) => {
            logger.warn({ runId: run.id }, 'scheduled run held after its claim (test setting)');
            return new Promise<void>(() => undefined);
          },
        }
      : {}),
  });
  const service = new ScheduleService(scheduler, clock);
  runtime.schedules = service;
  runtime.extensions.conversationDeletionHooks.push(async (conversationId) => {
    const deleted = await service.deleteConversationTasks(conversationId);
    if (deleted > 0) logger.info({ conversationId, tasks: deleted }, 'scheduled tasks of the deleted conversation deleted');
  });
  await scheduler.start();
  return {
    service,
    scheduler,
    async close() {
      scheduler.stop();
      // Runs whose turns the shutdown just ended record their outcome first (bounded: a held run never settles).
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([scheduler.settled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
      await records.close();
      database.close();
    },
  };
}
