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

/**
 * Who runs the agent's turns: `openvaala` (the built-in agent loop, the default), `acp` (an
 * Agent Client Protocol agent started as a child process, driven over its stdio), or
 * `codex-app-server` (the Codex binary's `app-server` subcommand, driven over its stdio).
 */
export const AgentKindSchema = z.enum(['openvaala', 'acp', 'codex-app-server']);
/** Who runs the agent's turns. */
export type AgentKind = z.infer<typeof AgentKindSchema>;

/** Codex's own approval policy and sandbox for the threads it runs (`thread/start`), for `kind: codex-app-server`. */
export const CodexSettingsSchema = z.strictObject({
  /** When Codex asks before running a command or changing files; its asks are relayed to OpenVaala clients. */
  approvalPolicy: z.enum(['untrusted', 'on-failure', 'on-request', 'never']).optional(),
  /** Codex's sandbox for the commands it runs. */
  sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).optional(),
});
/** Codex's approval policy and sandbox. */
export type CodexSettings = z.infer<typeof CodexSettingsSchema>;

/** Keys that only an agent run by an external process has. */
const EXTERNAL_ONLY_KEYS = ['command', 'args', 'env', 'idleTimeoutMs'] as const;
/** Keys that only the built-in agent loop reads. */
const LOOP_ONLY_KEYS = ['instructions', 'maxSteps', 'approvals', 'subagents'] as const;

/** One agent definition. */
export const AgentDefinitionSchema = z.strictObject({
  default: z.boolean().optional(),
  /** Who runs the turns (default `openvaala`, the built-in loop). */
  kind: AgentKindSchema.optional(),
  /** With an external kind: the program and its first arguments (`["codex"]`, `["openvaala", "acp"]`); looked up on PATH. */
  command: z.array(z.string().min(1)).min(1).optional(),
  /** With an external kind: further arguments (for `codex-app-server`, given after `app-server`). */
  args: z.array(z.string()).optional(),
  /** With an external kind: environment variables added to the server's for the agent process. */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable names use letters, digits and "_"'), z.string()).optional(),
  /** With an external kind: the agent process is stopped after this long without a turn, ms (default 600000). */
  idleTimeoutMs: z.number().int().min(1).max(86_400_000).optional(),
  /** With `kind: codex-app-server`: Codex's approval policy and sandbox. */
  codex: CodexSettingsSchema.optional(),
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

/** Whether the definition's turns are run by an external agent process (`kind: acp` or `codex-app-server`). */
export function isExternalAgent(definition: AgentDefinition): definition is AgentDefinition & { kind: 'acp' | 'codex-app-server'; command: string[] } {
  return definition.kind === 'acp' || definition.kind === 'codex-app-server';
}

/**
 * The rules between `kind` and the other keys of one agent, as issues at their key paths:
 * an external kind needs `command` and takes none of the loop's keys; the loop takes none of
 * the process keys; `codex` belongs to `kind: codex-app-server`.
 */
function checkKindKeys(name: string, agent: Record<string, unknown>, context: z.RefinementCtx): void {
  const kind = typeof agent.kind === 'string' ? agent.kind : 'openvaala';
  const at = (key: string) => ['agents', name, key];
  if (kind === 'acp' || kind === 'codex-app-server') {
    if (agent.command === undefined) context.addIssue({ code: 'custom', path: at('command'), message: `kind ${kind} needs the command that starts the agent (e.g. ${kind === 'acp' ? '["openvaala", "acp"]' : '["codex"]'})` });
    for (const key of LOOP_ONLY_KEYS) {
      if (agent[key] !== undefined) context.addIssue({ code: 'custom', path: at(key), message: `not used with kind ${kind}: the external agent runs its own loop` });
    }
  } else {
    for (const key of EXTERNAL_ONLY_KEYS) {
      if (agent[key] !== undefined) context.addIssue({ code: 'custom', path: at(key), message: 'only for an agent run by an external process (kind: acp or codex-app-server)' });
    }
  }
  if (agent.codex !== undefined && kind !== 'codex-app-server') context.addIssue({ code: 'custom', path: at('codex'), message: 'only for kind: codex-app-server' });
}

/** The whole `agents.yaml`. */
export const AgentsFileSchema = z
  .strictObject({ agents: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'agent names use letters, digits, ".", "_" and "-"'), AgentDefinitionSchema) })
  .superRefine((file: unknown, context) => {
    if (!isRecord(file) || !isRecord(file.agents)) return;
    // Every new conversation needs an agent; an empty file has none (a missing one has the built-in default).
    if (Object.keys(file.agents).length === 0) context.addIssue({ code: 'custom', path: ['agents'], message: 'defines no agent: define at least one (without agents.yaml, one built-in agent named default applies)' });
    const marked = Object.entries(file.agents).filter(([, agent]) => isRecord(agent) && agent.default === true).map(([name]) => name);
    if (marked.length > 1) context.addIssue({ code: 'custom', path: ['agents', marked[1] ?? ''], message: `only one agent may be the default (also marked: ${marked[0]})` });
    for (const [name, agent] of Object.entries(file.agents)) if (isRecord(agent)) checkKindKeys(name, agent, context);
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
