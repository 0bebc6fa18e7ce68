/**
 * `agents.yaml`: agent definitions — model, instructions, step limit, approval policy and
 * subagent limits. One definition is the default (the one named `default`, or the one marked
 * `default: true`). A missing file means one built-in default agent.
 *
 * ```yaml
 * agents:
 *   default:
 *     default: true
 *     maxSteps: 200
 *     approvals:
 *       default: allow
 *       rules:
 *         - { tool: exec_command, match: { command: ["git push*"] }, decision: ask }
 *         - { tool: exec_command, match: { command: ["rm -rf*"] }, decision: deny }
 * ```
 */
import path from 'node:path';
import { z } from 'zod';
import { EVEN_WITH_OTHER_PROBLEMS, isRecord, loadYamlFile } from './yaml-file.js';

/** A decision of the approval policy (SPEC §6). */
export const PolicyDecisionSchema = z.enum(['allow', 'ask', 'deny']);
/** A decision of the approval policy. */
export type PolicyDecision = z.infer<typeof PolicyDecisionSchema>;

/** One approval rule: a tool name (glob) and optional argument patterns (globs on string arguments). */
export const ApprovalRuleSchema = z.strictObject({
  /** Tool name, or a glob such as `mcp__*`. */
  tool: z.string().min(1),
  /** Argument name → glob pattern(s); the rule matches when every named argument matches one of its patterns. */
  match: z.record(z.string(), z.union([z.string(), z.array(z.string()).min(1)])).optional(),
  decision: PolicyDecisionSchema,
});
/** One approval rule. */
export type ApprovalRule = z.infer<typeof ApprovalRuleSchema>;

/** An agent's approval policy: rules in order (first match wins), then the default. */
export const ApprovalPolicySchema = z.strictObject({
  default: PolicyDecisionSchema.default('allow'),
  rules: z.array(ApprovalRuleSchema).default([]),
});
/** An agent's approval policy. */
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;

/** One agent definition. */
export const AgentDefinitionSchema = z.strictObject({
  default: z.boolean().optional(),
  /** What the agent is for, shown to people choosing one (`agents/list`). */
  description: z.string().optional(),
  /** `<provider>/<model-id>`; default: `defaultModel` of providers.yaml. */
  model: z.string().regex(/^[^/]+\/.+$/, 'expected "<provider>/<model-id>"').optional(),
  /** Extra system instructions for this agent. */
  instructions: z.string().optional(),
  /** Model calls allowed in one turn. */
  maxSteps: z.number().int().min(1).max(10_000).optional(),
  approvals: ApprovalPolicySchema.optional(),
  subagents: z.strictObject({ maxDepth: z.number().int().min(0).max(5), maxOpenPerSession: z.number().int().min(1).max(64) }).partial().optional(),
});
/** One agent definition. */
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;

/** The whole `agents.yaml`. */
export const AgentsFileSchema = z
  .strictObject({ agents: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'agent names use letters, digits, ".", "_" and "-"'), AgentDefinitionSchema) })
  .superRefine((file: unknown, context) => {
    if (!isRecord(file) || !isRecord(file.agents)) return;
    const marked = Object.entries(file.agents).filter(([, agent]) => isRecord(agent) && agent.default === true).map(([name]) => name);
    if (marked.length > 1) context.addIssue({ code: 'custom', path: ['agents', marked[1] ?? ''], message: `only one agent may be the default (also marked: ${marked[0]})` });
  }, EVEN_WITH_OTHER_PROBLEMS);
/** The whole `agents.yaml`. */
export type AgentsFile = z.infer<typeof AgentsFileSchema>;

/** File name of the agents configuration inside the config directory. */
export const AGENTS_FILE = 'agents.yaml';

/**
 * Loads `agents.yaml`; a missing file means one built-in `default` agent with no rules.
 * @throws ConfigError naming the file, line and key path of each problem
 */
export async function loadAgentsFile(configDir: string): Promise<AgentsFile> {
  return loadYamlFile(path.join(configDir, AGENTS_FILE), AgentsFileSchema, () => ({ agents: { default: { default: true } } }));
}

/** The name of the default agent: the one marked `default: true`, else `default`, else the first. */
export function defaultAgentName(file: AgentsFile): string {
  const names = Object.keys(file.agents);
  return names.find((name) => file.agents[name]?.default) ?? (names.includes('default') ? 'default' : (names[0] ?? 'default'));
}
