/**
 * Tools for commands that keep running after the call that started them (SPEC §6–§7):
 * `exec_command` with `yield_after_ms` or `tty` starts one, `write_stdin` talks to it,
 * `list_commands` lists them and `kill_command` ends one. The commands live in the session's
 * `BackgroundCommandRegistry` (`ToolContext.commands`).
 */
import { z } from 'zod';
import type { BackgroundCommand, BackgroundCommandRegistry } from '../runtime/background-commands.js';
import { loadToolDescription } from './descriptions.js';
import { defineTool, TOOL_OUTPUT_RETAINED_BYTES, type Tool, type ToolContext, type ToolResult } from './tool.js';

/** Longest wait for output the model may ask for, in ms (10 minutes). */
export const MAX_YIELD_MS = 600_000;
/** How long `write_stdin` waits for output by default, in ms. */
export const WRITE_STDIN_DEFAULT_YIELD_MS = 1000;
/** How long a `tty` command given without `yield_after_ms` runs before the call returns, in ms. */
export const TTY_DEFAULT_YIELD_MS = 10_000;
/** How long `kill_command` waits for the process to end, in ms (covers the SIGTERM→SIGKILL grace). */
const KILL_WAIT_MS = 5000;

/** Zod schema of a `yield_after_ms` argument. */
export const yieldAfterMsSchema = z.number().int().min(1).max(MAX_YIELD_MS);

/** The session's registry, or an error naming why there is none. */
function registryOf(context: ToolContext, toolName: string): BackgroundCommandRegistry {
  if (!context.commands) throw new Error(`${toolName} needs a session: background commands are not available here`);
  return context.commands;
}

function findCommand(context: ToolContext, toolName: string, id: string): BackgroundCommand {
  const registry = registryOf(context, toolName);
  const command = registry.get(id);
  if (!command) {
    const known = registry.list().map((info) => info.id);
    throw new Error(`no command "${id}" in this session${known.length > 0 ? `; known: ${known.join(', ')}` : ' (none started)'}`);
  }
  return command;
}

/**
 * Reads a command's new output and describes its state: the output (head and tail around a
 * marker when more was written than the registry keeps), then `[exit code N]` / `[killed by SIGNAL]` /
 * `[exit status unknown: REASON]` once it ended, or a line saying it
 * still runs under its `command_id`.
 * @param call the `exec_command` call that started it: when given, the result also has
 *   `command` details (output without the status line, exit code null while it runs)
 */
export function describeCommandProgress(command: BackgroundCommand, call?: CommandCall): ToolResult {
  const { text, omitted } = command.read();
  const lines: string[] = [];
  const ended = command.ended;
  if (!ended) {
    lines.push(`[still running as command_id ${command.id}; use write_stdin to send input or read new output, kill_command to stop it]`);
  } else if (command.timedOut) {
    lines.push('[timed out; killed]');
  } else if (ended.signal !== null) {
    lines.push(`[killed by ${ended.signal}]`);
  } else if (ended.exitCode === null && ended.unknownExitReason !== undefined) {
    lines.push(`[exit status unknown: ${ended.unknownExitReason}]`);
  } else {
    lines.push(`[exit code ${ended.exitCode}]`);
  }
  const separator = text === '' || text.endsWith('\n') ? '' : '\n';
  return {
    output: `${text}${separator}${lines.join('\n')}`,
    isError: command.timedOut,
    ...(ended ? { exitCode: ended.exitCode } : {}),
    structured: { commandId: command.id, running: !ended, exitCode: ended?.exitCode ?? null, signal: ended?.signal ?? null, pid: command.process.pid ?? null, ...(omitted ? { omitted } : {}) },
    // The details hold the output without the status line, which is written for the model.
    ...(call ? { details: { kind: 'command' as const, command: call.command, cwd: call.cwd, exitCode: ended?.exitCode ?? null, signal: ended?.signal ?? null, durationMs: Math.round(performance.now() - call.startedAt), output: text } } : {}),
  };
}

/**
 * A command as the `command` details of `write_stdin` and `kill_command` show it: its command
 * line and cwd, with the duration counted from its start (to its end once it ended).
 */
function callOf(command: BackgroundCommand): CommandCall {
  const { startedAt, endedAt } = command.info();
  return { command: command.command, cwd: command.cwd, startedAt: performance.now() - ((endedAt ?? Date.now()) - startedAt) };
}

/** The call that started a command, for the `command` details of its result. */
export interface CommandCall {
  command: string;
  /** Absolute working directory. */
  cwd: string;
  /** `performance.now()` when the call started, ms. */
  startedAt: number;
}

/**
 * Passes chunks on until `maxBytes` have been passed, then drops the rest: clients keep live
 * output in memory until the item completes, so a command that writes without end while the
 * call waits must not grow it without bound.
 */
function boundedStream(listener: (chunk: string) => void, maxBytes: number): (chunk: string) => void {
  let streamed = 0;
  return (chunk) => {
    if (streamed >= maxBytes) return;
    streamed += Buffer.byteLength(chunk, 'utf8');
    listener(chunk);
  };
}

/** What `exec_command` passes to start a command that may outlive the call. */
export interface BackgroundStart {
  command: string;
  /** Absolute working directory. */
  cwd: string;
  tty: boolean;
  /** Wait at most this many ms before returning. */
  yieldAfterMs: number;
  /** Kill after this many ms; undefined = no limit. */
  timeoutMs?: number;
}

/**
 * Starts a command in the session's registry on the context's executor, waits until it ends or
 * `yieldAfterMs` passes (or the turn is interrupted, which leaves it running), and reports the
 * output so far.
 * @throws Error when there is no session registry, the executor cannot spawn processes, or the
 *   process cannot be started
 */
export async function startBackgroundCommand(start: BackgroundStart, context: ToolContext): Promise<ToolResult> {
  const registry = registryOf(context, 'exec_command');
  const startedAt = performance.now();
  const { workspace } = context;
  const command = registry.start(workspace.executor, { command: start.command, cwd: start.cwd, workspaceRoot: workspace.root, tty: start.tty }, start.timeoutMs);
  const stopStreaming = context.onOutput ? command.process.onOutput(boundedStream(context.onOutput, TOOL_OUTPUT_RETAINED_BYTES)) : undefined;
  try {
    await command.waitForExit(start.yieldAfterMs, context.signal);
  } finally {
    stopStreaming?.();
  }
  return describeCommandProgress(command, { command: start.command, cwd: start.cwd, startedAt });
}

const writeStdinParameters = z.object({
  command_id: z.string().min(1).describe('Id of a running command, from exec_command or list_commands.'),
  input: z.string().describe('Text to send; include "\\n" to press Enter. May be empty to only read new output.'),
  yield_after_ms: yieldAfterMsSchema.optional().describe('Wait this many milliseconds for output before returning, 1 to 600000. Default 1000.'),
});

/**
 * `write_stdin`: sends input to a running command and returns the output since the last read.
 * Its `command` details name the command (command line, cwd), its exit code once it ended
 * (null while it runs) and the output of this call.
 */
export const writeStdinTool: Tool<z.infer<typeof writeStdinParameters>> = defineTool({
  name: 'write_stdin',
  action: 'write to the command',
  description: loadToolDescription('write_stdin'),
  parameters: writeStdinParameters,
  declaredDetails: { kind: 'command' },
  async execute(args, context) {
    const command = findCommand(context, 'write_stdin', args.command_id);
    // What the command writes while the call waits streams to clients as it comes, as for exec_command.
    const stopStreaming = context.onOutput ? command.process.onOutput(boundedStream(context.onOutput, TOOL_OUTPUT_RETAINED_BYTES)) : undefined;
    try {
      if (args.input !== '') command.write(args.input);
      await command.waitForExit(args.yield_after_ms ?? WRITE_STDIN_DEFAULT_YIELD_MS, context.signal);
    } finally {
      stopStreaming?.();
    }
    return describeCommandProgress(command, callOf(command));
  },
});

const listCommandsParameters = z.object({});

/** `list_commands`: the session's commands with their state. */
export const listCommandsTool: Tool<z.infer<typeof listCommandsParameters>> = defineTool({
  name: 'list_commands',
  action: 'list the background commands',
  description: loadToolDescription('list_commands'),
  parameters: listCommandsParameters,
  declaredDetails: { none: 'it reports no one command: its result lists every command of the session (structured.commands)' },
  async execute(_args, context) {
    const commands = registryOf(context, 'list_commands').list();
    if (commands.length === 0) return { output: 'no background commands in this session', isError: false, structured: { commands } };
    const now = Date.now();
    const lines = commands.map((info) => {
      const state = info.status === 'running' ? 'running' : info.signal !== null ? `exited (killed by ${info.signal})` : `exited (exit code ${info.exitCode})`;
      const age = Math.round((now - info.startedAt) / 1000);
      return `${info.id}  ${state}  pid ${info.pid ?? '?'}  started ${new Date(info.startedAt).toISOString()} (${age} s ago)${info.tty ? '  tty' : ''}  on ${info.executor}: ${info.command}`;
    });
    return { output: lines.join('\n'), isError: false, structured: { commands } };
  },
});

const killCommandParameters = z.object({
  command_id: z.string().min(1).describe('Id of the command to stop, from exec_command or list_commands.'),
});

/**
 * `kill_command`: kills a command's whole process group and returns its last output, with the
 * same `command` details as `write_stdin`.
 */
export const killCommandTool: Tool<z.infer<typeof killCommandParameters>> = defineTool({
  name: 'kill_command',
  action: 'stop the command',
  description: loadToolDescription('kill_command'),
  parameters: killCommandParameters,
  declaredDetails: { kind: 'command' },
  async execute(args, context) {
    const command = findCommand(context, 'kill_command', args.command_id);
    if (!command.ended) {
      command.process.kill();
      await command.waitForExit(KILL_WAIT_MS);
    }
    return { ...describeCommandProgress(command, callOf(command)), isError: !command.ended };
  },
});

/** The tools that drive background commands, in the order they are offered. */
export function backgroundCommandTools(): Tool[] {
  return [writeStdinTool as Tool, listCommandsTool as Tool, killCommandTool as Tool];
}
