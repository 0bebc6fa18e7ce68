/**
 * Collaboration tools (SPEC §6): `spawn_agent`, `send_input`, `wait_agent`, `close_agent`.
 * Unlike environment tools they act on sessions, not on an executor; each session gets its own
 * set, bound to it through the small `CollaborationHost` interface it implements.
 */
import { z } from 'zod';
import { loadToolDescription } from '../tools/descriptions.js';
import { defineTool, type Tool } from '../tools/tool.js';

/** What `wait_agent` reports of one subagent. */
export interface SubagentReport {
  id: string;
  /** `completed` / `failed` / `interrupted` (its last turn), `running` (still working at the timeout), `closed`. */
  status: 'completed' | 'failed' | 'interrupted' | 'running' | 'closed';
  /** The text of its last answer, if any. */
  answer: string;
}

/** What the collaboration tools need from the calling session. */
export interface CollaborationHost {
  /**
   * Starts a subagent session working on `task`.
   * @throws Error naming the limit when depth or count limits forbid it, or for an unknown model
   */
  spawnSubagent(task: string, options: { agent?: string; model?: string }): Promise<string>;
  /** Sends a message to a subagent (optionally interrupting it first). @throws Error for an unknown or closed id */
  sendToSubagent(id: string, message: string, interrupt: boolean): Promise<void>;
  /** Waits for subagents (default: all open ones) to become idle, at most `timeoutMs`. */
  waitForSubagents(ids: string[] | undefined, timeoutMs: number, signal: AbortSignal): Promise<SubagentReport[]>;
  /** Closes a subagent. @throws Error for an unknown id */
  closeSubagent(id: string): Promise<void>;
}

const spawnParameters = z.object({
  task: z.string().min(1),
  agent: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
});
const sendParameters = z.object({ id: z.string().min(1), message: z.string().min(1), interrupt: z.boolean().optional() });
const waitParameters = z.object({ ids: z.array(z.string().min(1)).optional(), timeout_ms: z.number().int().min(1).max(3_600_000).optional() });
const closeParameters = z.object({ id: z.string().min(1) });

/** Default wait of `wait_agent`, ms. */
export const DEFAULT_WAIT_MS = 600_000;

/** Builds the four collaboration tools bound to one session. */
export function collaborationTools(host: CollaborationHost): Tool[] {
  return [
    defineTool({
      name: 'spawn_agent',
      declaredDetails: { kind: 'subagent' },
      description: loadToolDescription('spawn_agent'),
      parameters: spawnParameters,
      async execute(args) {
        const id = await host.spawnSubagent(args.task, { ...(args.agent ? { agent: args.agent } : {}), ...(args.model ? { model: args.model } : {}) });
        return { output: JSON.stringify({ id, status: 'running' }), isError: false, structured: { id }, details: { kind: 'subagent', sessionIds: [id], states: [{ sessionId: id, status: 'running' }] } };
      },
    }),
    defineTool({
      name: 'send_input',
      declaredDetails: { kind: 'subagent' },
      description: loadToolDescription('send_input'),
      parameters: sendParameters,
      describe: async (args) => ({ kind: 'subagent', sessionIds: [args.id] }),
      async execute(args) {
        await host.sendToSubagent(args.id, args.message, args.interrupt ?? false);
        return { output: JSON.stringify({ id: args.id, delivered: true }), isError: false, details: { kind: 'subagent', sessionIds: [args.id], states: [{ sessionId: args.id, status: 'running' }] } };
      },
    }),
    defineTool({
      name: 'wait_agent',
      declaredDetails: { kind: 'subagent' },
      description: loadToolDescription('wait_agent'),
      parameters: waitParameters,
      describe: async (args) => (args.ids ? { kind: 'subagent', sessionIds: args.ids } : undefined),
      async execute(args, context) {
        const reports = await host.waitForSubagents(args.ids, args.timeout_ms ?? DEFAULT_WAIT_MS, context.signal);
        // A failed subagent is a normal result for the model (it reads the status and decides), a failed call for a reader: `states` carries it to `toolCallOutcome`.
        const states = reports.map((report) => ({ sessionId: report.id, status: report.status }));
        return { output: JSON.stringify({ agents: reports }, null, 2), isError: false, structured: { agents: reports }, details: { kind: 'subagent', sessionIds: reports.map((report) => report.id), states } };
      },
    }),
    defineTool({
      name: 'close_agent',
      declaredDetails: { kind: 'subagent' },
      description: loadToolDescription('close_agent'),
      parameters: closeParameters,
      describe: async (args) => ({ kind: 'subagent', sessionIds: [args.id] }),
      async execute(args) {
        await host.closeSubagent(args.id);
        return { output: JSON.stringify({ id: args.id, status: 'closed' }), isError: false, details: { kind: 'subagent', sessionIds: [args.id], states: [{ sessionId: args.id, status: 'closed' }] } };
      },
    }),
  ];
}
