/**
 * Runs the hooks of one event (SPEC §6 "Hooks run around tool calls on the executor where the
 * call happens (JSON on stdin; non-zero exit blocks with the hook's message)"), in the style
 * of Claude Code hooks, and records every run as a `hook_run` item.
 *
 * A hook gets one line of JSON on stdin: `{ event, conversationId, sessionId, turnId, cwd,
 * executor, toolName?, callId?, arguments?, result?, prompt?, stopHookActive?, trigger? }`. Then:
 * - exit 0: go on. Stdout that is a JSON object may carry `additionalContext` (text for the
 *   model), `decision` (`pre_tool_use`: `allow` | `ask` | `deny`; `block` on the events that
 *   can block), `reason` and, for `pre_tool_use`, `updatedArguments` (an object replacing the
 *   call's arguments). Plain-text stdout of `session_start` and `user_prompt_submit` is
 *   context for the model; of other events it is only recorded.
 * - exit 2: block, on `user_prompt_submit`, `pre_tool_use`, `post_tool_use` and `stop`; stderr
 *   is the reason the model (or, for a refused prompt, the user) sees.
 * - any other exit, a timeout, an answer that does not validate: recorded as an error
 *   (`decision: error` / `timeout`, item status `failed`); nothing is blocked.
 * Hooks of one event run one after the other in the order configured; the first block stops
 * the rest, and `updatedArguments` of one hook is what the next one sees.
 */
import { z } from 'zod';
import { hookMatchesTool, type HookDefinition, type HookEvent, type HooksFile } from '../../config/hooks.js';
import type { Workspace } from '../../executors/workspace.js';
import { newId } from '../../ids.js';
import type { Item } from '../../protocol/index.js';
import { truncateOutput } from '../../tools/tool.js';
import { capHookInput, runHookProcess, type HookProcessResult } from './hook-process.js';
import { formatKeyPath } from '../../key-path.js';
import { explainIssue } from '../../validation-issues.js';

/** Events where exit 2 (or `decision: block`) stops something. */
const BLOCKING_EVENTS: ReadonlySet<HookEvent> = new Set<HookEvent>(['user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop']);
/** Events whose plain-text stdout is context for the model (as in Claude Code). */
const PLAIN_CONTEXT_EVENTS: ReadonlySet<HookEvent> = new Set<HookEvent>(['session_start', 'user_prompt_submit']);
/** Most of a hook's output kept in its `hook_run` item, in bytes. */
const RECORDED_OUTPUT_LIMIT_BYTES = 16 * 1024;
/** Most of a hook's reason or context passed on to the model, in bytes. */
const MODEL_TEXT_LIMIT_BYTES = 16 * 1024;

/** What a hook may answer on stdout (other fields are ignored). */
const HookAnswerSchema = z.looseObject({
  additionalContext: z.string().optional(),
  decision: z.enum(['allow', 'ask', 'deny', 'block']).optional(),
  reason: z.string().optional(),
  updatedArguments: z.record(z.string(), z.unknown()).optional(),
});

/** Where hooks run and how their runs are recorded. */
export interface HookRunContext {
  conversationId: string;
  sessionId: string;
  turnId: string;
  /** Hooks run on this workspace's executor, in its root. */
  workspace: Workspace;
  /** Aborted when the turn is interrupted: the running hook is killed, the rest skipped. */
  signal: AbortSignal;
  /** Persists an item of the session (the `hook_run` items). */
  record(item: Item): Promise<void>;
}

/** Event-specific fields of a hook's input. */
export interface HookEventDetails {
  toolName?: string;
  /** Tool events: the model's id of the call (its `tool_call` item's `callId`), recorded in the `hook_run` item too. */
  callId?: string;
  arguments?: unknown;
  /** `post_tool_use`: what the tool returned. */
  result?: { output: string; isError: boolean; exitCode?: number | null };
  /** `user_prompt_submit`: the prompt's text. */
  prompt?: string;
  /** `stop`: true when a stop hook already made this turn go on. */
  stopHookActive?: boolean;
  /** `pre_compact`: `auto` (context nearly full) or `manual` (asked for). */
  trigger?: 'auto' | 'manual';
}

/** What the hooks of one event decided together. */
export interface HookOutcome {
  /** Set when a hook blocked: the reason (a hook's stderr, or its `reason`). */
  block?: string;
  /** Set with `block`: the command of the hook that blocked. */
  blockedBy?: string;
  /** `pre_tool_use`: `allow` skips asking; `ask` asks a person even where the policy allows (`ask` wins). */
  permission?: 'allow' | 'ask';
  /** `pre_tool_use`: the arguments to run with instead of the model's. */
  updatedArguments?: Record<string, unknown>;
  /** Texts for the model, in hook order. */
  additionalContext: string[];
}

/** How one run is read. */
export interface HookVerdict {
  /** Recorded in the `hook_run` item: continue | allow | ask | deny | block | error | timeout | interrupted. */
  decision: string;
  status: 'completed' | 'failed' | 'interrupted';
  /** Lines added to the recorded output (why it is an error, what was ignored). */
  notes: string[];
  block?: string;
  permission?: 'allow' | 'ask';
  updatedArguments?: Record<string, unknown>;
  additionalContext?: string;
}

function modelText(text: string): string {
  return truncateOutput(text.trim(), MODEL_TEXT_LIMIT_BYTES).text;
}

function parseAnswer(stdout: string): { answer?: z.infer<typeof HookAnswerSchema>; error?: string } {
  const trimmed = stdout.trim();
  if (!trimmed.startsWith('{')) return {};
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    // Text that merely starts with a brace is plain output, as in Claude Code.
    return {};
  }
  const parsed = HookAnswerSchema.safeParse(json);
  if (parsed.success) return { answer: parsed.data };
  const issues = parsed.error.issues.flatMap((issue) => explainIssue(issue, { root: json, schema: HookAnswerSchema }));
  return { error: issues.map((issue) => `stdout JSON: ${formatKeyPath(issue.keyPath) || '(root)'}: ${issue.message}`).join('; ') };
}

/**
 * Reads one hook run (see the module comment for the rules).
 * @param event the event the hook ran for
 * @param command the hook's command, named in default reasons
 * @param timeoutMs the hook's timeout, named in the timeout note
 */
export function interpretHookResult(event: HookEvent, command: string, timeoutMs: number, result: HookProcessResult): HookVerdict {
  if (result.aborted) return { decision: 'interrupted', status: 'interrupted', notes: ['[killed: the turn was interrupted]'] };
  if (result.timedOut) return { decision: 'timeout', status: 'failed', notes: [`[timed out after ${timeoutMs} ms; not blocking]`] };
  if (result.exitCode === null) return { decision: 'error', status: 'failed', notes: [`[hook failed: ${result.failure ?? 'it did not finish'}; not blocking]`] };
  if (result.exitCode === 2) {
    if (!BLOCKING_EVENTS.has(event)) return { decision: 'error', status: 'failed', notes: [`[exit code 2 cannot block ${event}; recorded as an error]`] };
    return { decision: 'block', status: 'completed', notes: [], block: modelText(result.stderr) || `the hook "${command}" exited with code 2 without a message on stderr` };
  }
  if (result.exitCode !== 0) return { decision: 'error', status: 'failed', notes: [`[exit code ${result.exitCode}; not blocking]`] };

  const { answer, error } = parseAnswer(result.stdout);
  if (error) return { decision: 'error', status: 'failed', notes: [`[${error}; ignored]`] };
  if (!answer) {
    const text = modelText(result.stdout);
    return { decision: 'continue', status: 'completed', notes: [], ...(PLAIN_CONTEXT_EVENTS.has(event) && text ? { additionalContext: text } : {}) };
  }
  const problems: string[] = [];
  const verdict: HookVerdict = { decision: 'continue', status: 'completed', notes: [] };
  if (answer.additionalContext?.trim()) verdict.additionalContext = modelText(answer.additionalContext);
  if (answer.updatedArguments !== undefined) {
    if (event === 'pre_tool_use') verdict.updatedArguments = answer.updatedArguments;
    else problems.push(`updatedArguments only applies to pre_tool_use`);
  }
  const decision = answer.decision;
  if (decision === 'allow' || decision === 'ask') {
    if (event === 'pre_tool_use') {
      verdict.decision = decision;
      verdict.permission = decision;
    } else problems.push(`decision "${decision}" only applies to pre_tool_use`);
  } else if (decision === 'deny' || decision === 'block') {
    if (decision === 'deny' && event !== 'pre_tool_use') problems.push(`decision "deny" only applies to pre_tool_use (use "block")`);
    else if (!BLOCKING_EVENTS.has(event)) problems.push(`decision "${decision}" cannot block ${event}`);
    else {
      verdict.decision = decision;
      verdict.block = modelText(answer.reason ?? '') || `${decision === 'deny' ? 'denied' : 'blocked'} by the hook "${command}"`;
    }
  }
  if (problems.length > 0) {
    // A hook that answers wrongly must not half-apply: nothing of its answer takes effect.
    return { decision: 'error', status: 'failed', notes: problems.map((problem) => `[${problem}; answer ignored]`) };
  }
  return verdict;
}

function recordedOutput(result: HookProcessResult, notes: string[]): string {
  const parts = [result.stdout.trimEnd()];
  if (result.stderr.trim()) parts.push(`[stderr]\n${result.stderr.trimEnd()}`);
  parts.push(...notes);
  return truncateOutput(parts.filter((part) => part !== '').join('\n'), RECORDED_OUTPUT_LIMIT_BYTES).text;
}

/** Longest hook command named in a message; longer ones keep their start and their end (the script's name). */
const NAMED_COMMAND_CHARS = 80;

/** A hook's command as named in a message: on one line, at most {@link NAMED_COMMAND_CHARS} characters. */
export function hookCommandName(command: string): string {
  const line = command.trim().split(/\s*\n\s*/).join(' ');
  if (line.length <= NAMED_COMMAND_CHARS) return line;
  const head = Math.floor((NAMED_COMMAND_CHARS - 1) / 2);
  return `${line.slice(0, head)}…${line.slice(line.length - (NAMED_COMMAND_CHARS - 1 - head))}`;
}

/** The configured hooks, run for events of the agent loop. */
export class HookRunner {
  /** @param hooks the loaded `hooks.yaml` */
  constructor(private readonly hooks: HooksFile) {}

  /** The hooks that run for `event` (for tool events, those whose matcher takes `toolName`). */
  hooksFor(event: HookEvent, toolName?: string): HookDefinition[] {
    const hooks = this.hooks.hooks[event];
    return toolName === undefined ? hooks : hooks.filter((hook) => hookMatchesTool(hook, toolName));
  }

  /**
   * Runs the hooks of `event` one after the other, recording a `hook_run` item for each.
   * Never rejects for a failing hook; rejects only when recording fails.
   */
  async run(event: HookEvent, context: HookRunContext, details: HookEventDetails = {}): Promise<HookOutcome> {
    const outcome: HookOutcome = { additionalContext: [] };
    for (const hook of this.hooksFor(event, details.toolName)) {
      if (context.signal.aborted) break;
      const input = capHookInput({
        event,
        conversationId: context.conversationId,
        sessionId: context.sessionId,
        turnId: context.turnId,
        cwd: context.workspace.root,
        executor: context.workspace.executor.name,
        ...details,
        ...(outcome.updatedArguments !== undefined ? { arguments: outcome.updatedArguments } : {}),
      });
      const createdAt = Date.now();
      const result = await runHookProcess({ executor: context.workspace.executor, command: hook.command, cwd: context.workspace.root, event, input, timeoutMs: hook.timeoutMs, signal: context.signal });
      const verdict = interpretHookResult(event, hook.command, hook.timeoutMs, result);
      await context.record({
        id: newId('item'),
        sessionId: context.sessionId,
        turnId: context.turnId,
        createdAt,
        completedAt: Date.now(),
        status: verdict.status,
        kind: 'hook_run',
        event,
        command: hook.command,
        exitCode: result.exitCode,
        output: recordedOutput(result, verdict.notes),
        decision: verdict.decision,
        // Several calls of a step run their hooks at once: the run names its call.
        ...(details.callId !== undefined ? { callId: details.callId, toolName: details.toolName ?? '' } : {}),
      });
      if (verdict.additionalContext) outcome.additionalContext.push(verdict.additionalContext);
      if (verdict.updatedArguments) outcome.updatedArguments = verdict.updatedArguments;
      if (verdict.permission && outcome.permission !== 'ask') outcome.permission = verdict.permission;
      if (verdict.block !== undefined) {
        outcome.block = verdict.block;
        outcome.blockedBy = hook.command;
        break;
      }
    }
    return outcome;
  }
}
