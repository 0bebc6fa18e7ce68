/**
 * The `schedule_task` tool: the only way the agent creates a scheduled task (docs/platform.md,
 * "Scheduled tasks"). It has side effects, so approval policies gate it like any such tool;
 * the task it creates starts disabled until a person enables it (`schedules/resume`).
 */
import { z } from 'zod';
import { SCHEDULE_MAX_PROMPT_CHARS, TaskScheduleSchema, type TaskSchedule } from '../protocol/schedules.js';
import { loadToolDescription } from './descriptions.js';
import { defineTool, type Tool } from './tool.js';

/** What `schedule_task` needs: creating a disabled task in the conversation the tool serves. */
export interface ScheduleTaskHost {
  /**
   * Creates the task (disabled, marked as the agent's).
   * @returns its id and next occurrence (ms since the epoch), if any
   * @throws Error naming the field when the schedule is invalid
   */
  createTask(input: { name: string; prompt: string; schedule: TaskSchedule }): Promise<{ id: string; nextOccurrenceAt?: number }>;
}

/** Arguments of `schedule_task`. */
export const scheduleTaskParameters = z.object({
  name: z.string().min(1).max(200),
  prompt: z.string().min(1).max(SCHEDULE_MAX_PROMPT_CHARS),
  schedule: TaskScheduleSchema,
});

/**
 * Builds `schedule_task` bound to one conversation.
 * @returns a tool whose invalid arguments or schedule come back to the model as an error result
 */
export function scheduleTaskTool(host: ScheduleTaskHost): Tool {
  return defineTool({
    name: 'schedule_task',
    description: loadToolDescription('schedule_task'),
    parameters: scheduleTaskParameters,
    action: 'schedule a task',
    declaredDetails: { none: 'the task appears in schedules/list, disabled' },
    async execute(args) {
      try {
        const task = await host.createTask(args);
        const next = task.nextOccurrenceAt !== undefined ? ` Its first occurrence would be ${new Date(task.nextOccurrenceAt).toISOString()}.` : '';
        return { output: `Scheduled task ${task.id} created, disabled until a person enables it.${next}`, isError: false };
      } catch (error) {
        return { output: `schedule_task: ${(error as Error).message}`, isError: true };
      }
    },
  });
}
