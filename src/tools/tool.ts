import { z } from 'zod';
import { truncateMiddle } from '../executors/output-truncation.js';
import type { CommandResult } from '../executors/executor.js';
import type { Workspace } from '../executors/workspace.js';
import type { ToolDetails } from '../protocol/tool-details.js';
import type { BackgroundCommandRegistry } from '../runtime/background-commands.js';
import { internalFailureNote, isInternalError, reportInternalError } from './internal-errors.js';
import { formatKeyPath } from '../key-path.js';
import { jsonSyntaxProblem, printableText } from '../printable-text.js';
import { unknownNameHint } from '../similar-names.js';
import { explainIssue, knownKeysAt, unknownKeyIssues, type ParsedInput } from '../validation-issues.js';

/**
 * What typed details a tool's results carry: the `kind` of its `details`, or why it has none
 * (its result is the whole story, or the call is shown by other means). Every built-in tool
 * declares one, so a tool without details is a decision rather than an oversight.
 */
export type ToolDetailsDeclaration = { kind: ToolDetails['kind'] } | { none: string };

/** What a tool call produced. */
export interface ToolResult {
  /**
   * The output as the tool produced it (terminal control kept), at most the wrapper's bound
   * (`TOOL_OUTPUT_RETAINED_BYTES`); the model reads it cleaned and cut by `toolOutputForModel`.
   */
  output: string;
  /** True when the call failed (bad arguments, missing file, rejected patch…). */
  isError: boolean;
  /** Exit code, for commands. */
  exitCode?: number | null;
  /** Machine-readable details for clients (e.g. files changed by a patch). */
  structured?: Record<string, unknown>;
  /**
   * Typed details for clients (`tool_call` item `details`): the command and how it ended, the
   * file changes as unified diffs, the MCP server and tool… Replaces what `describe` gave at start.
   */
  details?: ToolDetails;
}

/** A question for the user (`request_user_input`). */
export interface UserQuestion {
  question: string;
  /** Answers to offer; absent: free text only. */
  choices?: string[];
  /** Whether an answer outside `choices` is accepted. */
  allowFreeText: boolean;
}

/** How a question ended: the user's answer, or why nobody answered. */
export type UserAnswer = { answered: true; answer: string } | { answered: false; reason: string };

/**
 * Text files served by the client that shows them (an editor, whose buffers may hold changes
 * not yet saved; protocol `conversation/serveFiles`). Given only for calls routed to the
 * executor on the client's machine. Tools read and write text through it first and use the
 * executor's file system when it says no client serves files now.
 */
export interface ClientFileAccess {
  /**
   * The file's text as the client has it, or undefined when no client serves reads now.
   * @param absolutePath absolute path on the executor (already confined to the workspace)
   * @throws Error with the client's message when the client fails to read it
   */
  readTextFile(absolutePath: string): Promise<string | undefined>;
  /**
   * Writes the file through the client; false when no client serves writes now.
   * @throws Error with the client's message when the client fails to write it
   */
  writeTextFile(absolutePath: string, content: string): Promise<boolean>;
}

/** A command for a client to run (see `ClientCommandAccess`). */
export interface ClientCommandRequest {
  /** Shell command line, run by `bash -c`. */
  command: string;
  /** Absolute working directory (already confined to the workspace). */
  cwd: string;
  /** Variables to set besides the client's own environment. */
  env: Record<string, string>;
  /** Kill the command after this many ms. */
  timeoutMs: number;
  /** Bound on the output kept, in bytes (UTF-8). */
  maxOutputBytes: number;
  /** Aborting kills the command. */
  signal: AbortSignal;
}

/**
 * Commands run by the client that shows them (an editor's terminal; protocol
 * `conversation/serveCommands`). Given only for calls routed to the unsandboxed executor on the
 * client's machine. `exec_command` runs through it first and uses the executor when it says no
 * client runs commands now.
 */
export interface ClientCommandAccess {
  /**
   * Runs the command in the client's terminal until it ends, times out or is aborted.
   * @returns how it ended (output cut to `maxOutputBytes`; `omitted` never set), or undefined
   *   when no client runs commands now
   * @throws Error with the client's message when the client fails to run it
   */
  run(request: ClientCommandRequest): Promise<CommandResult | undefined>;
}

/** What a tool receives besides its arguments. */
export interface ToolContext {
  /** Workspace of the executor the call is routed to. */
  workspace: Workspace;
  /** Aborted when the turn is interrupted; tools stop their work (kill processes) on it. */
  signal: AbortSignal;
  /** Streams partial output (e.g. command output) to clients while the tool runs. */
  onOutput?: (chunk: string) => void;
  /**
   * The session's background commands (`exec_command` with `yield_after_ms`/`tty`,
   * `write_stdin`, `list_commands`, `kill_command`); absent outside a session.
   */
  commands?: BackgroundCommandRegistry;
  /**
   * Asks the user a question through the attached clients and waits for the answer; absent
   * outside a session. Rejects with the abort reason when the turn is interrupted.
   */
  askUser?: (question: UserQuestion) => Promise<UserAnswer>;
  /** Text files served by a client (see `ClientFileAccess`); absent when the call's executor is not the client's machine. */
  clientFiles?: ClientFileAccess;
  /** Commands run by a client (see `ClientCommandAccess`); absent when the call's executor is not the client's machine or is sandboxed. */
  clientCommands?: ClientCommandAccess;
}

/**
 * One tool as the agent loop sees it. Every tool is defined with `defineTool`, which
 * validates arguments against the schema and caps the output, so tools never repeat that.
 */
export interface Tool<Args = unknown> {
  /** Name the model calls (`read_file`). */
  readonly name: string;
  /** Description sent to the model. */
  readonly description: string;
  /** Zod schema of the arguments; also exported as the JSON Schema the model sees. */
  readonly parameters: z.ZodType<Args>;
  /** Validates raw arguments, runs the tool, caps its output. Never throws. */
  invoke(rawArguments: unknown, context: ToolContext): Promise<ToolResult>;
  /**
   * What a call will do, known before it runs (the command and its absolute cwd, the diffs a
   * patch will apply), for `item/started` and approval requests. Undefined when the tool has no
   * details or the arguments are invalid. Never throws, never changes anything.
   */
  describe?(rawArguments: unknown, context: Pick<ToolContext, 'workspace' | 'clientFiles'>): Promise<ToolDetails | undefined>;
  /**
   * False for a tool that only talks to the user and changes nothing (`request_user_input`):
   * an approval policy's `default` and its wildcard rules do not gate it, only a rule naming
   * the tool exactly does (see `evaluatePolicy`). Absent means the tool may have side effects.
   */
  readonly sideEffects?: boolean;
  /** The details its results carry, or why none (see `ToolDetailsDeclaration`). */
  readonly declaredDetails?: ToolDetailsDeclaration;
}

/**
 * Default cap on a tool result's text as the model reads it, in bytes (UTF-8); the runtime
 * setting `toolOutputLimitBytes`. Applied once, when the model request is built
 * (`toolOutputForModel`), never to what is stored.
 */
export const DEFAULT_TOOL_OUTPUT_LIMIT_BYTES = 64 * 1024;

/**
 * Bound on a tool result's text as stored in its `tool_call` item, in bytes (UTF-8): longer
 * output keeps its head and tail around a marker. Clients read the stored output (up to this
 * much of it) from the item; the model reads it cut further to `DEFAULT_TOOL_OUTPUT_LIMIT_BYTES`.
 */
export const TOOL_OUTPUT_RETAINED_BYTES = 256 * 1024;

/**
 * Cuts text to at most `limitBytes` UTF-8 bytes, keeping the head and the tail around a marker
 * that names the omitted bytes and lines (see `truncateMiddle`; the end of command output is
 * usually where the error is).
 */
export function truncateOutput(text: string, limitBytes: number): { text: string; truncated: boolean } {
  const cut = truncateMiddle(text, limitBytes);
  return { text: cut.text, truncated: cut.text !== text };
}

/**
 * Says what is wrong with a tool call's arguments, one line per problem, each starting with the
 * tool's name and naming the argument by its key path (see `formatKeyPath`): an argument the
 * tool does not take with the one it most likely meant, or else the ones it takes
 * (`read_file: argument "strat_line": unknown argument (did you mean "start_line"?)`); a missing
 * one with its type; a value that is not one of the allowed ones with those values and the
 * nearest (`update_plan: argument "plan[1].status": "in_progres" is not one of "pending",
 * "in_progress", "completed" (did you mean "in_progress"?)`); and the schema's other issues.
 * @param toolName the tool's name, which starts each line
 * @param issues the issues of the failed parse and those of `unknownKeyIssues`
 * @param parsed the arguments as received and the tool's schema
 */
export function describeArgumentErrors(toolName: string, issues: readonly z.core.$ZodIssue[], parsed: ParsedInput & { schema: z.ZodType }): string {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(parsed.schema, issue.path, parsed.root).filter((name) => !issue.keys.includes(name));
      for (const key of issue.keys) {
        const hint = known.length === 0 && issue.path.length === 0 ? ' (it takes no arguments)' : unknownNameHint(key, known, true);
        lines.push(`${toolName}: argument "${formatKeyPath([...issue.path, key])}": unknown argument${hint}`);
      }
      continue;
    }
    for (const { keyPath, message } of explainIssue(issue, parsed)) {
      lines.push(`${toolName}: ${keyPath.length > 0 ? `argument "${formatKeyPath(keyPath)}"` : 'arguments'}: ${message}`);
    }
  }
  return [...new Set(lines)].join('\n');
}

/**
 * Checks a call's arguments against a tool's schema, refusing as well the keys the schema does
 * not take (a plain zod object would drop them without a word, and the JSON Schema the model
 * is given says `additionalProperties: false`).
 * @returns the parsed arguments, or the issues (those of `unknownKeyIssues` after zod's own)
 */
function checkArguments<Args>(schema: z.ZodType<Args>, input: unknown): { success: true; data: Args } | { success: false; issues: z.core.$ZodIssue[] } {
  const parsed = schema.safeParse(input);
  const unknown = unknownKeyIssues(schema, input);
  if (parsed.success && unknown.length === 0) return { success: true, data: parsed.data };
  return { success: false, issues: [...(parsed.success ? [] : parsed.error.issues), ...unknown] };
}

/** The parts of a tool definition that `defineTool` wraps. */
export interface ToolSpec<Args> {
  name: string;
  description: string;
  parameters: z.ZodType<Args>;
  /**
   * What the tool does, as the end of "could not …" in a failure message (`read the file`,
   * `apply the patch`); default `complete the call`.
   */
  action?: string;
  /** Bound on the stored output in bytes; default `TOOL_OUTPUT_RETAINED_BYTES`. */
  outputLimitBytes?: number;
  /**
   * The tool's work. May throw: an `Error`'s message becomes the error result; an internal
   * failure (see `isInternalError`) is logged and the result only says what could not be done.
   */
  execute(args: Args, context: ToolContext): Promise<ToolResult>;
  /** Details known before the call runs (see `Tool.describe`); may throw: a failure means no details. */
  describe?(args: Args, context: Pick<ToolContext, 'workspace' | 'clientFiles'>): Promise<ToolDetails | undefined>;
  /** False for a tool without side effects that only talks to the user (see `Tool.sideEffects`). */
  sideEffects?: boolean;
  /** The details its results carry, or why none (see `ToolDetailsDeclaration`). */
  declaredDetails?: ToolDetailsDeclaration;
}

/**
 * Turns what a tool threw into an error result. A tool's own errors are messages written
 * for the model and are passed on; internal failures (JavaScript's `RangeError`,
 * `TypeError`…, or a thrown non-error) are logged with their stack and replaced by a
 * sentence saying what the tool could not do, so that no "Maximum call stack size exceeded"
 * ever reaches the model as a reason.
 * @param toolName the tool's name, which starts the message
 * @param action what the tool does (`apply the patch`)
 * @param error the thrown value
 */
export function thrownErrorResult(toolName: string, action: string, error: unknown): ToolResult {
  if (isInternalError(error)) {
    const reference = reportInternalError(toolName, error);
    return { output: `${toolName}: could not ${action}: ${internalFailureNote(reference)}`, isError: true };
  }
  return { output: `${toolName}: ${(error as Error).message}`, isError: true };
}

/**
 * Wraps a tool's work with argument validation and output truncation, the two things every
 * tool needs, and turns thrown errors into error results the model can read (see
 * `thrownErrorResult`). Arguments the schema does not take are refused with the rest, not
 * dropped (see `describeArgumentErrors`). Arguments that arrive as text a tool does not take
 * are read as JSON once more (a model that encoded them twice), or refused as "not valid JSON"
 * with the text.
 */
export function defineTool<Args>(spec: ToolSpec<Args>): Tool<Args> {
  const limit = spec.outputLimitBytes ?? TOOL_OUTPUT_RETAINED_BYTES;
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    async invoke(rawArguments, context) {
      let input = rawArguments;
      let parsed = checkArguments(spec.parameters, input);
      if (!parsed.success && typeof rawArguments === 'string') {
        // Arguments that reached us as text: either JSON encoded twice (read once more), or not JSON at all (said so).
        let decoded: unknown;
        try {
          decoded = JSON.parse(rawArguments);
        } catch (error) {
          const excerpt = rawArguments.length > 200 ? `${rawArguments.slice(0, 200)}…` : rawArguments;
          return { output: `${spec.name}: arguments: not valid JSON (${jsonSyntaxProblem(error)}); they were: ${printableText(excerpt)}`, isError: true };
        }
        if (typeof decoded === 'object' && decoded !== null) {
          input = decoded;
          parsed = checkArguments(spec.parameters, input);
        }
      }
      if (!parsed.success) {
        return { output: describeArgumentErrors(spec.name, parsed.issues, { root: input, schema: spec.parameters }), isError: true };
      }
      let result: ToolResult;
      try {
        result = await spec.execute(parsed.data, context);
      } catch (error) {
        result = thrownErrorResult(spec.name, spec.action ?? 'complete the call', error);
      }
      const capped = truncateOutput(result.output, limit);
      return capped.truncated ? { ...result, output: capped.text } : result;
    },
    ...(spec.describe ? { describe: describeWith(spec.parameters, spec.describe) } : {}),
    ...(spec.sideEffects !== undefined ? { sideEffects: spec.sideEffects } : {}),
    ...(spec.declaredDetails ? { declaredDetails: spec.declaredDetails } : {}),
  };
}

/** Wraps a spec's `describe` so it takes raw arguments and never throws (no details then). */
function describeWith<Args>(parameters: z.ZodType<Args>, describe: NonNullable<ToolSpec<Args>['describe']>): NonNullable<Tool['describe']> {
  return async (rawArguments, context) => {
    const parsed = checkArguments(parameters, rawArguments);
    if (!parsed.success) return undefined;
    try {
      return await describe(parsed.data, context);
    } catch {
      return undefined;
    }
  };
}
