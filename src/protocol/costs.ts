/**
 * Token usage and cost (docs/protocol.md, "Costs"; docs/platform.md, "Costs and thresholds"):
 * totals per conversation, per project and per user for a calendar month (UTC), and the
 * per-project monthly thresholds that warn and may pause new turns. Spread into `methods` and
 * `notifications` of `methods.ts`.
 */
import { z } from 'zod';
import { TokenUsageSchema } from './items.js';
import { projectIdParam, userIdParam } from './projects.js';
import { conversationIdParam } from './request-params.js';

/** A calendar month in UTC, `YYYY-MM` (ISO 8601 calendar month). */
export const CostMonthSchema = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, { message: 'must be a calendar month written YYYY-MM (e.g. 2026-01)' });

/** What a set of finished turns used and cost. */
export const CostTotalsSchema = z.object({
  /** Finished turns counted. */
  turns: z.number().int().nonnegative(),
  /** Their token usage, added up. */
  usage: TokenUsageSchema,
  /** Their cost, USD, at the prices in force when each turn ended. */
  costUsd: z.number().nonnegative(),
  /** Turns whose model had no known prices: their tokens are counted, their cost is not. */
  unpricedTurns: z.number().int().nonnegative(),
});
/** What a set of finished turns used and cost. */
export type CostTotals = z.infer<typeof CostTotalsSchema>;

/** A project's monthly cost thresholds, USD. */
export const CostThresholdsSchema = z.object({
  /** At this month's total or above, clients are warned (`costs/thresholdReached` with `action: "warn"`). */
  warnUsd: z.number().positive().max(1e9).optional(),
  /** At this month's total or above, new turns of the project's conversations are refused until the month ends or the threshold is raised. */
  pauseUsd: z.number().positive().max(1e9).optional(),
});
/** A project's monthly cost thresholds. */
export type CostThresholds = z.infer<typeof CostThresholdsSchema>;

const monthParam = CostMonthSchema.optional();
const thresholdParam = z.number().positive({ message: 'must be a positive number of USD' }).max(1e9).nullable().optional();

/** Request methods of costs: name → params and result schemas. */
export const costMethods = {
  /** What a conversation's finished turns used and cost, all time. */
  'costs/conversation': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({ conversationId: z.string(), totals: CostTotalsSchema }),
  },
  /** A project's totals for a month (default: the current UTC month), per user too, with its thresholds and where it stands against them. */
  'costs/project': {
    params: z.object({ projectId: projectIdParam, month: monthParam }),
    result: z.object({
      projectId: z.string(),
      month: z.string(),
      totals: CostTotalsSchema,
      /** Per user who started turns (`local-owner` for the holder of the server token; `unattributed` for turns no user started, e.g. after a restart). */
      byUser: z.array(z.object({ userId: z.string(), totals: CostTotalsSchema })),
      thresholds: CostThresholdsSchema,
      /** Whether the month's total has reached `warnUsd`. */
      warning: z.boolean(),
      /** Whether the month's total has reached `pauseUsd` (new turns are refused). */
      paused: z.boolean(),
    }),
  },
  /** A user's totals for a month across every project (default: the caller; only administrators may name another user). */
  'costs/user': {
    params: z.object({ userId: userIdParam.optional(), month: monthParam }),
    result: z.object({ userId: z.string(), month: z.string(), totals: CostTotalsSchema }),
  },
  /** Sets or removes (`null`) a project's monthly thresholds (project managers); a field left out stays as it is. */
  'costs/setThresholds': {
    params: z.object({ projectId: projectIdParam, warnUsd: thresholdParam, pauseUsd: thresholdParam }),
    result: z.object({ projectId: z.string(), thresholds: CostThresholdsSchema }),
  },
} as const;

/** Notifications of costs: name → params schema. */
export const costNotifications = {
  /**
   * A finished turn of the conversation brought its project's month total to a threshold:
   * `warn` (a warning only) or `pause` (new turns of the project are refused this month).
   * Sent once per threshold crossing, to the conversation's subscribers.
   */
  'costs/thresholdReached': z.object({
    conversationId: z.string(),
    projectId: z.string(),
    month: z.string(),
    action: z.enum(['warn', 'pause']),
    /** The threshold reached, USD. */
    thresholdUsd: z.number(),
    /** The project's total for the month, USD, after the turn. */
    totalUsd: z.number(),
  }),
} as const;
