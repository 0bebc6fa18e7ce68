/**
 * Param shapes shared by several method families: ids of things the runtime made, working
 * directories, work locations and reasoning effort. Kept apart from `methods.ts` so the family
 * modules that `methods.ts` spreads can use them without importing it back.
 */
import { z } from 'zod';
import { WorkLocationEntrySchema } from './entities.js';

/** How hard the model thinks before answering (`none`: no reasoning asked). */
export const ReasoningEffortSchema = z.enum(['none', 'minimal', 'low', 'medium', 'high']);
/** How hard the model thinks before answering. */
export type ReasoningEffort = z.infer<typeof ReasoningEffortSchema>;
/**
 * An id of something the runtime made, as a request param: `<prefix>_` then letters and digits
 * (SPEC §3). Checked here, at the protocol boundary, so no malformed id (a path, a NUL) reaches
 * storage and every method refuses one the same way.
 */
export function idParam(prefix: string, what: string) {
  return z.string().regex(new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`), { message: `not a ${what} id (expected ${prefix}_ followed by letters and digits)` });
}
/** A conversation id as a request param. */
export const conversationIdParam = idParam('conv', 'conversation');
/** A session id as a request param. */
export const sessionIdParam = idParam('sess', 'session');
/** An approval id as a request param. */
export const approvalIdParam = idParam('appr', 'approval');

/** A working directory on an executor: an absolute POSIX path (executors speak POSIX paths). */
export const cwdParam = z.string().min(1).refine((value) => value.startsWith('/') && !value.includes('\0'), { message: 'must be an absolute path (starting with /)' });

/** A work location as a request param: absolute directories, each executor at most once. */
export const workLocationParam = z
  .array(WorkLocationEntrySchema.extend({ cwd: cwdParam }))
  .min(1)
  .superRefine((entries, context) => {
    const seen = new Set<string>();
    entries.forEach((entry, index) => {
      if (seen.has(entry.executor)) context.addIssue({ code: 'custom', path: [index, 'executor'], message: `executor "${entry.executor}" appears twice in the work location` });
      seen.add(entry.executor);
    });
  });

