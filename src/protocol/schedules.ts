/**
 * Scheduled tasks (SPEC §9; docs/protocol.md, "Scheduled tasks"): a prompt sent into a
 * conversation once, on a cron schedule (5 fields, IANA time zone) or every fixed interval.
 * Spread into `methods` of `methods.ts`.
 */
import { z } from 'zod';
import { conversationIdParam, idParam } from './request-params.js';

const taskIdParam = idParam('task', 'task');

/** Shortest interval of an `interval` task: one minute, ms. */
export const SCHEDULE_MIN_INTERVAL_MS = 60_000;
/** Longest prompt of a task, characters. */
export const SCHEDULE_MAX_PROMPT_CHARS = 100_000;

/** When a task runs: once at an instant, on a cron schedule in a time zone, or every `everyMs` from `startAt`. */
export const TaskScheduleSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('once'), /** ms since the epoch. */ at: z.number().int().nonnegative() }),
  z.object({
    kind: z.literal('cron'),
    /** Five fields: minute hour day-of-month month day-of-week (no seconds). */
    expression: z.string().min(1).max(200),
    /** IANA time zone name (`Europe/Helsinki`); the fields are read as wall-clock time there. */
    timeZone: z.string().min(1).max(100),
  }),
  z.object({
    kind: z.literal('interval'),
    /** ms between occurrences, at least `SCHEDULE_MIN_INTERVAL_MS`. */
    everyMs: z.number().int().min(SCHEDULE_MIN_INTERVAL_MS),
    /** First occurrence, ms since the epoch; default the creation time plus `everyMs`. */
    startAt: z.number().int().nonnegative().optional(),
  }),
]);
/** When a task runs. */
export type TaskSchedule = z.infer<typeof TaskScheduleSchema>;

/** What happens to an occurrence that comes while the previous run is still going: dropped (`skip`), or one kept to run after it (`queue`). */
export const OverlapPolicySchema = z.enum(['skip', 'queue']);
/** Overlap policy. */
export type OverlapPolicy = z.infer<typeof OverlapPolicySchema>;

/** What happens to occurrences missed while the server was down: one catch-up run (`runOnce`) or a `missed` record (`markMissed`). */
export const MissedPolicySchema = z.enum(['runOnce', 'markMissed']);
/** Missed-occurrence policy. */
export type MissedPolicy = z.infer<typeof MissedPolicySchema>;

/** Retries of a run whose prompt could not be delivered or whose turn failed. */
export const RetryPolicySchema = z.object({
  /** Delay before the first retry, ms; doubled for each further retry. */
  initialDelayMs: z.number().int().min(1).max(86_400_000),
  /** Longest delay between retries, ms. */
  maxDelayMs: z.number().int().min(1).max(86_400_000),
  /** No retry starts later than this many ms after the occurrence. */
  deadlineMs: z.number().int().min(0).max(7 * 86_400_000),
});
/** Retry policy. */
export type RetryPolicy = z.infer<typeof RetryPolicySchema>;

/** A scheduled task. */
export const ScheduledTaskSchema = z.object({
  id: z.string(),
  conversationId: z.string(),
  /** The user the task acts for, when known. */
  userId: z.string().optional(),
  name: z.string(),
  /** Sent into the conversation as a new user message at each run. */
  prompt: z.string(),
  schedule: TaskScheduleSchema,
  overlap: OverlapPolicySchema,
  missed: MissedPolicySchema,
  retry: RetryPolicySchema,
  /** A disabled task never runs on its schedule; `runNow` still runs it. */
  enabled: z.boolean(),
  /**
   * Why the server disabled the task, when it did: the user it acts for can no longer reach its
   * conversation (removed, out of the project, the project deleted, a role that lost access).
   * Cleared by `schedules/resume` and `schedules/pause`.
   */
  disabledReason: z.string().optional(),
  /** Created by the agent (`schedule_task`): disabled until a person enables it. */
  createdByAgent: z.boolean(),
  /** ms since the epoch. */
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  /** The next occurrence, ms since the epoch, when enabled and one is left. */
  nextRunAt: z.number().int().optional(),
});
/** A scheduled task. */
export type ScheduledTask = z.infer<typeof ScheduledTaskSchema>;

/**
 * Status of a run: `queued` (kept by the `queue` overlap policy until the run in progress ends),
 * `claimed` (recorded, not yet delivered), `dispatched` (prompt delivered, turn
 * running), `retrying` (waiting for a retry), `completed`, `failed` (retries exhausted),
 * `skipped` (overlap, or not run because the task's user can no longer reach its conversation:
 * the task is then disabled), `missed` (server down, `markMissed`), `abandoned` (claim of a process
 * that died before delivering), `interrupted` (the server stopped during its turn).
 */
export const ScheduleRunStatusSchema = z.enum(['queued', 'claimed', 'dispatched', 'retrying', 'completed', 'failed', 'skipped', 'missed', 'abandoned', 'interrupted']);
/** Status of a run. */
export type ScheduleRunStatus = z.infer<typeof ScheduleRunStatusSchema>;

/** One run of a task (its history). */
export const ScheduleRunSchema = z.object({
  id: z.string(),
  taskId: z.string(),
  conversationId: z.string(),
  /** The occurrence, ms since the epoch (for `runNow`, the time of the request). */
  occurrenceAt: z.number().int(),
  trigger: z.enum(['schedule', 'manual', 'catchUp']),
  status: ScheduleRunStatusSchema,
  /** Delivery attempts made. */
  attempts: z.number().int().nonnegative(),
  /** The turn the prompt started, once delivered. */
  turnId: z.string().optional(),
  /** Why the last attempt failed. */
  error: z.string().optional(),
  /** ms since the epoch. */
  claimedAt: z.number().int(),
  finishedAt: z.number().int().optional(),
  /** When `retrying`: the next attempt, ms since the epoch. */
  retryAt: z.number().int().optional(),
});
/** One run of a task. */
export type ScheduleRun = z.infer<typeof ScheduleRunSchema>;

const retryParam = RetryPolicySchema.refine((retry) => retry.maxDelayMs >= retry.initialDelayMs, { message: 'maxDelayMs must be at least initialDelayMs' });
const nameParam = z.string().min(1).max(200);
const promptParam = z.string().min(1).max(SCHEDULE_MAX_PROMPT_CHARS);

/** Request methods of scheduled tasks: name → params and result schemas. */
export const scheduleMethods = {
  /** The tasks of a conversation, oldest first. */
  'schedules/list': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({ tasks: z.array(ScheduledTaskSchema) }),
  },
  /** Creates a task (enabled unless `enabled: false`). Invalid cron expressions and time zones are refused. */
  'schedules/create': {
    params: z.object({
      conversationId: conversationIdParam,
      name: nameParam,
      prompt: promptParam,
      schedule: TaskScheduleSchema,
      overlap: OverlapPolicySchema.optional(),
      missed: MissedPolicySchema.optional(),
      retry: retryParam.optional(),
      enabled: z.boolean().optional(),
      /** The user the task acts for. Only administrators and the server token holder choose it; a signed-in member's tasks act for that member. */
      userId: z.string().min(1).max(200).optional(),
    }),
    result: z.object({ task: ScheduledTaskSchema }),
  },
  /** Changes a task; a changed schedule recomputes the next occurrence from now. */
  'schedules/update': {
    params: z.object({
      taskId: taskIdParam,
      name: nameParam.optional(),
      prompt: promptParam.optional(),
      schedule: TaskScheduleSchema.optional(),
      overlap: OverlapPolicySchema.optional(),
      missed: MissedPolicySchema.optional(),
      retry: retryParam.optional(),
    }),
    result: z.object({ task: ScheduledTaskSchema }),
  },
  /** Deletes a task and its history. */
  'schedules/delete': {
    params: z.object({ taskId: taskIdParam }),
    result: z.object({ taskId: z.string() }),
  },
  /** Runs a task now (also when disabled), subject to its overlap policy and to its user's access to the conversation. */
  'schedules/runNow': {
    params: z.object({ taskId: taskIdParam }),
    result: z.object({ run: ScheduleRunSchema }),
  },
  /** Disables a task: its occurrences stop until `schedules/resume`. */
  'schedules/pause': {
    params: z.object({ taskId: taskIdParam }),
    result: z.object({ task: ScheduledTaskSchema }),
  },
  /** Enables a task (also one the agent created); the next occurrence is computed from now. */
  'schedules/resume': {
    params: z.object({ taskId: taskIdParam }),
    result: z.object({ task: ScheduledTaskSchema }),
  },
  /** Runs of a task, newest first, at most `limit` (default 50). */
  'schedules/history': {
    params: z.object({ taskId: taskIdParam, limit: z.number().int().min(1).max(500).optional() }),
    result: z.object({ runs: z.array(ScheduleRunSchema) }),
  },
} as const;
