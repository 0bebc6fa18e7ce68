/**
 * `hooks.yaml` (SPEC §6, §8): shell commands run at points of the agent loop, in the style of
 * Claude Code hooks. A missing file means no hooks.
 *
 * ```yaml
 * hooks:
 *   pre_tool_use:
 *     - matcher: exec_command            # tool name: a glob (`*`, `?`) or a regular expression
 *       command: ./scripts/check-command.sh
 *       timeoutMs: 5000                  # default 60000
 *   post_tool_use:
 *     - matcher: "apply_patch|exec_command"
 *       command: npm run --silent lint -- --format compact
 *   user_prompt_submit:
 *     - command: cat .openvaala/prompt-notes.md
 * ```
 *
 * What a hook receives and how its exit code and output are read is described in
 * `src/runtime/hooks/hook-runner.ts` and the hooks documentation.
 */
import path from 'node:path';
import { z } from 'zod';
import { EVEN_WITH_OTHER_PROBLEMS, isRecord, loadYamlFile } from './yaml-file.js';

/** File name of the hooks configuration inside the config directory. */
export const HOOKS_FILE = 'hooks.yaml';

/** The events a hook can be attached to. */
export const HOOK_EVENTS = ['session_start', 'user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop', 'pre_compact'] as const;
/** One of `HOOK_EVENTS`. */
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The events that concern one tool call, the only ones where `matcher` applies. */
export const TOOL_HOOK_EVENTS: ReadonlySet<HookEvent> = new Set<HookEvent>(['pre_tool_use', 'post_tool_use']);

/** Time a hook may run before it is killed when `timeoutMs` is not given, in ms. */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;
/** Longest `timeoutMs` accepted, in ms (10 minutes, like `exec_command`). */
export const MAX_HOOK_TIMEOUT_MS = 600_000;

/** Characters a glob matcher is made of: those of tool names plus the wildcards `*` and `?`. */
const GLOB_MATCHER = /^[A-Za-z0-9_*?-]+$/;

/**
 * Compiles a tool-name matcher into an anchored regular expression. A matcher made only of
 * letters, digits, `_`, `-` and the wildcards `*` (any run) and `?` (one character) is a glob
 * (`exec_command`, `mcp__*`); anything else is a regular expression that must match the whole
 * tool name (`apply_patch|exec_command`, `(read|list)_.*`).
 * @throws SyntaxError when the matcher is neither a glob nor a valid regular expression
 */
export function compileToolMatcher(matcher: string): RegExp {
  if (GLOB_MATCHER.test(matcher)) {
    return new RegExp(`^${matcher.replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 's');
  }
  return new RegExp(`^(?:${matcher})$`, 's');
}

/** One hook: a command, optionally limited to tools whose name matches `matcher`. */
export const HookDefinitionSchema = z.strictObject({
  /** Tool-name glob or regular expression (`pre_tool_use` and `post_tool_use` only); absent = every tool. */
  matcher: z
    .string()
    .min(1, 'must not be empty')
    .superRefine((matcher, context) => {
      try {
        compileToolMatcher(matcher);
      } catch (error) {
        context.addIssue({ code: 'custom', message: `not a valid glob or regular expression: ${(error as Error).message}` });
      }
    })
    .optional(),
  /** Shell command line, run by bash on the executor, in the workspace root. */
  command: z.string().trim().min(1, 'must not be empty'),
  /** Kill the hook after this many ms. */
  timeoutMs: z.number().int().min(1).max(MAX_HOOK_TIMEOUT_MS).default(DEFAULT_HOOK_TIMEOUT_MS),
});
/** One hook (after defaults: `timeoutMs` is always set). */
export type HookDefinition = z.infer<typeof HookDefinitionSchema>;

const hookList = z.array(HookDefinitionSchema).default([]);

/** The whole `hooks.yaml`: a list of hooks per event, run in the order written. */
export const HooksFileSchema = z
  .strictObject({
    hooks: z
      .strictObject({
        session_start: hookList,
        user_prompt_submit: hookList,
        pre_tool_use: hookList,
        post_tool_use: hookList,
        stop: hookList,
        pre_compact: hookList,
      })
      .default({ session_start: [], user_prompt_submit: [], pre_tool_use: [], post_tool_use: [], stop: [], pre_compact: [] }),
  })
  .superRefine((file: unknown, context) => {
    if (!isRecord(file) || !isRecord(file.hooks)) return;
    for (const event of HOOK_EVENTS) {
      const list = file.hooks[event];
      if (TOOL_HOOK_EVENTS.has(event) || !Array.isArray(list)) continue;
      list.forEach((hook: unknown, index) => {
        if (isRecord(hook) && hook.matcher !== undefined) {
          context.addIssue({ code: 'custom', path: ['hooks', event, index, 'matcher'], message: `only pre_tool_use and post_tool_use hooks take a matcher (${event} is not about one tool)` });
        }
      });
    }
  }, EVEN_WITH_OTHER_PROBLEMS);
/** The whole `hooks.yaml`. */
export type HooksFile = z.infer<typeof HooksFileSchema>;

/** A hooks configuration with no hooks (what a missing file means). */
export const NO_HOOKS: HooksFile = HooksFileSchema.parse({});

/**
 * Loads `hooks.yaml`; a missing file means no hooks.
 * @throws ConfigError naming the file, line and key path of each problem (unknown event,
 *   missing command, bad matcher, matcher on an event that is not about a tool, bad timeout)
 */
export async function loadHooksFile(configDir: string): Promise<HooksFile> {
  return loadYamlFile(path.join(configDir, HOOKS_FILE), HooksFileSchema, () => NO_HOOKS);
}

/** True when `hook` applies to a call of `toolName` (always true without a matcher). */
export function hookMatchesTool(hook: HookDefinition, toolName: string): boolean {
  return hook.matcher === undefined || compileToolMatcher(hook.matcher).test(toolName);
}
