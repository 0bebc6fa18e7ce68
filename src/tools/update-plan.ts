/**
 * The `update_plan` tool: the agent states its plan as steps with a status each (SPEC §5
 * `plan/updated`). The tool only validates and hands the plan to the session through
 * `PlanHost`; recording the `plan` item and telling clients is the session's work.
 */
import { z } from 'zod';
import { PlanStepSchema, type PlanStep } from '../protocol/plans.js';
import { loadToolDescription } from './descriptions.js';
import { defineTool, type Tool } from './tool.js';

/** A plan as the agent set it. */
export interface PlanUpdate {
  explanation?: string;
  steps: PlanStep[];
}

/** What `update_plan` needs from the session that offers it. */
export interface PlanHost {
  /** Records the plan (a `plan` item), tells clients (`plan/updated`) and keeps it as the session's current plan. */
  setPlan(plan: PlanUpdate): Promise<void>;
}

/**
 * Arguments of `update_plan`: `{explanation?, plan: [{step, status}]}`, at least one step and
 * at most one `in_progress` (a plan says what is being done now; two at once would not).
 */
export const updatePlanParameters = z.object({
  explanation: z.string().optional(),
  plan: z
    .array(PlanStepSchema)
    .min(1, 'give at least one step')
    .superRefine((steps, context) => {
      const running = steps.flatMap((step, index) => (step.status === 'in_progress' ? [index] : []));
      if (running.length > 1) {
        context.addIssue({ code: 'custom', message: `at most one step may be in_progress; steps ${running.join(', ')} (counting from 0) are` });
      }
    }),
});

/**
 * Builds `update_plan` bound to one session.
 * @param host where the validated plan goes
 * @returns a tool whose invalid arguments come back to the model as an error result naming the argument
 */
export function updatePlanTool(host: PlanHost): Tool {
  return defineTool({
    name: 'update_plan',
    description: loadToolDescription('update_plan'),
    parameters: updatePlanParameters,
    action: 'record the plan',
    // It only records the agent's plan and shows it to the user: a policy gates it only by naming it.
    sideEffects: false,
    declaredDetails: { none: 'the plan goes out as plan/updated and is recorded as a plan item' },
    async execute(args) {
      const plan: PlanUpdate = { ...(args.explanation !== undefined ? { explanation: args.explanation } : {}), steps: args.plan };
      await host.setPlan(plan);
      const done = plan.steps.filter((step) => step.status === 'completed').length;
      return { output: `Plan updated: ${plan.steps.length} steps, ${done} completed.`, isError: false };
    },
  });
}
