import { z } from 'zod';
import type { CommandResult } from '../executors/executor.js';
import { startBackgroundCommand, TTY_DEFAULT_YIELD_MS, yieldAfterMsSchema } from './background-commands.js';
import { loadToolDescription } from './descriptions.js';
import { defineTool, TOOL_OUTPUT_RETAINED_BYTES, type Tool } from './tool.js';

/**
 * Default bound on the command output kept (stdout+stderr, head and tail), in bytes: the
 * stored bound of every tool less room for the status lines. The model reads it cut further.
 */
export const EXEC_COMMAND_DEFAULT_MAX_OUTPUT_BYTES = TOOL_OUTPUT_RETAINED_BYTES - 1024;
/** Default time a command may run before it is killed, in ms. */
export const EXEC_COMMAND_DEFAULT_TIMEOUT_MS = 120_000;
/** Longest timeout the model may ask for, in ms (10 minutes). */
export const EXEC_COMMAND_MAX_TIMEOUT_MS = 600_000;

/**
 * Variables a command run in a client's terminal gets: an editor's terminal is a real terminal,
 * where a pager would wait for a key that never comes (the executor's pipes never page).
 */
export const CLIENT_TERMINAL_ENVIRONMENT: Readonly<Record<string, string>> = { PAGER: 'cat', GIT_PAGER: 'cat', GH_PAGER: 'cat' };

/** Arguments of `exec_command`. */
/**
 * The command line run so that its output and its errors reach the result in the order the
 * command wrote them: the executors read stdout and stderr from two pipes (two buffers, two SSH
 * streams), and a command alternating between them came back reordered. `exec 2>&1` first makes
 * them one stream at the source; on the same line, so the command's own lines keep their numbers
 * in the shell's messages, and valid for any command (one that is only a comment included).
 */
function inWriteOrder(command: string): string {
  return `exec 2>&1; ${command}`;
}

export const execCommandParameters = z.object({
  command: z.string().min(1).describe('Shell command line, run by bash.'),
  cwd: z.string().min(1).optional().describe('Working directory relative to the workspace root. Default: the root.'),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .max(EXEC_COMMAND_MAX_TIMEOUT_MS)
    .optional()
    .describe('Kill the command after this many milliseconds, 1 to 600000. Default 120000; no limit for a command left running with yield_after_ms or tty.'),
  yield_after_ms: yieldAfterMsSchema
    .optional()
    .describe('Return after this many milliseconds (1 to 600000) with the output so far; a command still running keeps running and the result gives its command_id for write_stdin, list_commands and kill_command.'),
  tty: z.boolean().optional().describe('Run the command in a pseudo-terminal, for interactive programs (shells, REPLs, prompts). Implies a background command; default yield 10000 ms.'),
});

/** Parsed arguments of `exec_command`. */
export type ExecCommandArguments = z.infer<typeof execCommandParameters>;

/** Options of `createExecCommandTool`. */
export interface ExecCommandToolOptions {
  /** Bound on the output kept (head and tail), in bytes; default `EXEC_COMMAND_DEFAULT_MAX_OUTPUT_BYTES`. */
  maxOutputBytes?: number;
}

/**
 * The status line appended to a command's output: `[exit code N]`, `[killed by SIGNAL]`,
 * `[exit status unknown: REASON]`, `[timed out after N ms]` or `[aborted…]`. Output that was too long already holds the
 * executor's marker naming the omitted bytes and lines, between its head and its tail.
 */
export function describeCommandEnd(result: CommandResult, timeoutMs: number): string[] {
  const lines: string[] = [];
  if (result.timedOut) lines.push(`[timed out after ${timeoutMs} ms]`);
  else if (result.aborted && result.exitCode === null && result.signal === null && result.unknownExitReason !== undefined) lines.push(`[aborted; exit status unknown: ${result.unknownExitReason}]`);
  else if (result.aborted && result.exitCode === null && result.signal === null) lines.push('[aborted before it started]');
  else if (result.aborted) lines.push(`[aborted; ${result.signal ? `killed by ${result.signal}` : `exit code ${result.exitCode}`}]`);
  else if (result.signal !== null) lines.push(`[killed by ${result.signal}]`);
  else if (result.exitCode === null && result.unknownExitReason !== undefined) lines.push(`[exit status unknown: ${result.unknownExitReason}]`);
  else lines.push(`[exit code ${result.exitCode}]`);
  return lines;
}

/**
 * Builds the `exec_command` tool: runs a shell command on the workspace's executor (or in the
 * terminal of a client serving commands, `context.clientCommands`) in `cwd`
 * (relative to the workspace root), killing it after `timeout_ms` ms or when the turn is
 * interrupted, and streaming its output through `context.onOutput`. The result text is the
 * interleaved output (all of it, or its head and tail within `maxOutputBytes` bytes around a
 * marker) followed by the line of `describeCommandEnd`. A non-zero exit is a normal result; `isError` is set only when the
 * command could not be started (bad `cwd`, executor failure) or timed out.
 */
export function createExecCommandTool(options: ExecCommandToolOptions = {}): Tool<ExecCommandArguments> {
  const maxOutputBytes = options.maxOutputBytes ?? EXEC_COMMAND_DEFAULT_MAX_OUTPUT_BYTES;
  return defineTool({
    name: 'exec_command',
    action: 'run the command',
    description: loadToolDescription('exec_command'),
    parameters: execCommandParameters,
    declaredDetails: { kind: 'command' },
    // Room for the status lines, so the shared cap never cuts output the executor already capped.
    outputLimitBytes: maxOutputBytes + 1024,
    async describe(args, { workspace }) {
      return { kind: 'command', command: args.command, cwd: await workspace.resolveSafe(args.cwd ?? '.') };
    },
    async execute(args, context) {
      const { workspace } = context;
      const cwdArgument = args.cwd ?? '.';
      const cwd = await workspace.resolveSafe(cwdArgument);
      const stat = await workspace.executor.fs.stat(cwd);
      if (stat === undefined) throw new Error(`cwd "${cwdArgument}" does not exist`);
      if (stat.kind !== 'directory' && stat.kind !== 'symlink') throw new Error(`cwd "${cwdArgument}" is not a directory`);
      if (args.yield_after_ms !== undefined || args.tty === true) {
        // The command may outlive the call: it joins the session's background commands.
        return startBackgroundCommand({ command: args.command, cwd, tty: args.tty ?? false, yieldAfterMs: args.yield_after_ms ?? TTY_DEFAULT_YIELD_MS, ...(args.timeout_ms !== undefined ? { timeoutMs: args.timeout_ms } : {}) }, context);
      }
      const timeoutMs = args.timeout_ms ?? EXEC_COMMAND_DEFAULT_TIMEOUT_MS;

      // A client serving commands (an editor) runs it in its terminal, where the person sees it;
      // without one, the executor runs it.
      const result =
        (await context.clientCommands?.run({ command: args.command, cwd, env: { ...CLIENT_TERMINAL_ENVIRONMENT }, timeoutMs, maxOutputBytes, signal: context.signal })) ??
        (await workspace.executor.run({
          command: inWriteOrder(args.command),
          cwd,
          workspaceRoot: workspace.root,
          timeoutMs,
          maxOutputBytes,
          signal: context.signal,
          onOutput: context.onOutput,
        }));
      const text = result.output;
      const separator = text === '' || text.endsWith('\n') ? '' : '\n';
      return {
        output: `${text}${separator}${describeCommandEnd(result, timeoutMs).join('\n')}`,
        isError: result.timedOut,
        exitCode: result.exitCode,
        structured: {
          exitCode: result.exitCode,
          signal: result.signal,
          timedOut: result.timedOut,
          aborted: result.aborted,
          truncated: result.truncated,
          ...(result.omitted ? { omitted: result.omitted } : {}),
          durationMs: result.durationMs,
        },
        details: { kind: 'command', command: args.command, cwd, exitCode: result.exitCode, signal: result.signal, durationMs: result.durationMs, output: text },
      };
    },
  });
}

/** The `exec_command` tool with default limits. */
export const execCommandTool: Tool<ExecCommandArguments> = createExecCommandTool();
