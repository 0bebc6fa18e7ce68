/**
 * Plans in the runtime protocol (SPEC §5 `plan/updated`): the steps an agent says it will take,
 * set as a whole by its `update_plan` tool.
 */
import { z } from 'zod';

/** Where a step of a plan stands. */
export const PlanStepStatusSchema = z.enum(['pending', 'in_progress', 'completed']);

/** One step of a plan. */
export const PlanStepSchema = z.object({
  /** What the step does, one short sentence. */
  step: z.string().min(1),
  status: PlanStepStatusSchema,
});
/** One step of a plan. */
export type PlanStep = z.infer<typeof PlanStepSchema>;

/** A session's current plan, as its last `plan` item set it (kept in the session state for late subscribers). */
export const SessionPlanSchema = z.object({
  /** The `plan` item that set it. */
  itemId: z.string(),
  turnId: z.string(),
  explanation: z.string().optional(),
  steps: z.array(PlanStepSchema),
  /** ms since the epoch. */
  updatedAt: z.number(),
});
/** A session's current plan. */
export type SessionPlan = z.infer<typeof SessionPlanSchema>;

/** The plan notifications, spread into `notifications`. */
export const planNotifications = {
  /** The agent replaced its plan (`update_plan`); the same steps are stored as a `plan` item `itemId`. */
  'plan/updated': z.object({
    conversationId: z.string(),
    sessionId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    explanation: z.string().optional(),
    steps: z.array(PlanStepSchema),
  }),
} as const;
