/**
 * How `openvaala exec` tells of hook runs (`hook_run` items): one line for a run that failed or
 * timed out (hooks fail open, so the turn goes on as if they had not run — the user must hear
 * of it), or that blocked, decided on or rewrote something. A run that went on without changing
 * anything, as most runs do, prints nothing; `openvaala conversations show` lists every run.
 */
import type { ItemOf } from '../protocol/index.js';

/** Events whose hooks run around one tool call: their lines sit indented under the call. */
const TOOL_EVENTS: ReadonlySet<string> = new Set(['pre_tool_use', 'post_tool_use']);

/** What a block means for each event that can block. */
const BLOCKED: Readonly<Record<string, string>> = {
  user_prompt_submit: 'refused the prompt',
  pre_tool_use: 'blocked the call',
  post_tool_use: "blocked the call's result",
  stop: 'made the turn go on',
};

/** Longest hook command named in a line; longer ones keep their start and their end (the script's name). */
const COMMAND_CHARS = 80;

/** What exec prints of one hook run. */
export interface HookRunNotice {
  /** `warning`: the hook failed or timed out (stderr); `decision`: it changed what happens (stdout). */
  kind: 'warning' | 'decision';
  /** The line, without its newline. */
  text: string;
}

/** A hook's command (or a call's summary) in one line of bounded length. */
export function shortCommand(command: string): string {
  const line = command.trim().split('\n').join(' ');
  if (line.length <= COMMAND_CHARS) return line;
  const head = Math.floor((COMMAND_CHARS - 1) / 2);
  return `${line.slice(0, head)}…${line.slice(line.length - (COMMAND_CHARS - 1 - head))}`;
}

/**
 * A recorded hook output in its parts: the hook's stdout, its stderr (after a `[stderr]`
 * line) and the runtime's notes (the `[…]` lines that end it), as the hook runner writes them.
 * @param noted whether the run has notes: only failed runs do, and a hook's own last line may look like one
 */
function outputParts(output: string, noted: boolean): { stdout: string; stderr: string; notes: string[] } {
  const lines = output.split('\n');
  const notes: string[] = [];
  while (noted && lines.length > 0 && /^\[.+\]$/.test(lines.at(-1) ?? '') && lines.at(-1) !== '[stderr]') notes.unshift((lines.pop() ?? '').slice(1, -1));
  const marker = lines.indexOf('[stderr]');
  return {
    stdout: (marker === -1 ? lines : lines.slice(0, marker)).join('\n'),
    stderr: marker === -1 ? '' : lines.slice(marker + 1).join('\n'),
    notes,
  };
}

/**
 * The arguments a `pre_tool_use` hook replaced a call's with (its `updatedArguments`), read
 * back from the run's recorded stdout, which is all the item keeps of the answer.
 * @returns undefined when the hook rewrote nothing, or its answer cannot be read back (cut short)
 */
export function hookUpdatedArguments(item: ItemOf<'hook_run'>): Record<string, unknown> | undefined {
  if (item.event !== 'pre_tool_use' || !['continue', 'allow', 'ask'].includes(item.decision ?? '')) return undefined;
  const stdout = outputParts(item.output, false).stdout.trim();
  if (!stdout.startsWith('{')) return undefined;
  try {
    const answer = JSON.parse(stdout) as { updatedArguments?: unknown };
    const updated = answer.updatedArguments;
    return updated !== null && typeof updated === 'object' && !Array.isArray(updated) ? (updated as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The call a tool event's hook ran for, as exec showed it. */
export interface HookedCall {
  /** What the call's header showed after the tool's name (the command, the files, the path). */
  label?: string;
  /** What the call a `pre_tool_use` hook rewrote runs now (its header's summary). */
  rewritten?: string;
}

/**
 * How a hook run is named in a line: `hook <event> "<command>"`, and for a run that names its
 * call (`toolName`), ` on <tool> <what the call's header showed>`, so a reader can tell which of
 * several calls running at once a hook blocked or rewrote.
 */
export function hookRunName(item: ItemOf<'hook_run'>, label?: string): string {
  const on = item.toolName ? ` on ${item.toolName}${label ? ` ${shortCommand(label)}` : ''}` : '';
  return `hook ${item.event} "${shortCommand(item.command)}"${on}`;
}

/**
 * What exec prints of one hook run, or undefined for a run that changed nothing.
 * @param item the run
 * @param call the call it ran for, when exec can tell which one that is
 */
export function describeHookRun(item: ItemOf<'hook_run'>, call: HookedCall = {}): HookRunNotice | undefined {
  const name = hookRunName(item, call.label);
  const rewrittenCall = call.rewritten;
  if (item.decision === 'timeout' || item.decision === 'error') {
    const { stderr, notes } = outputParts(item.output, true);
    const why = notes.length > 0 ? notes.join('; ') : item.decision === 'timeout' ? 'timed out; not blocking' : 'failed; not blocking';
    const said = stderr.trim().split('\n')[0]?.trim() ?? '';
    return { kind: 'warning', text: `warning: ${name}: ${why}${said ? ` (stderr: ${said.length > 120 ? `${said.slice(0, 119)}…` : said})` : ''}` };
  }
  const what: string[] = [];
  if (item.decision === 'block') what.push(BLOCKED[item.event] ?? 'blocked');
  else if (item.decision === 'deny') what.push('denied the call');
  else if (item.decision === 'allow') what.push('allowed the call without asking');
  else if (item.decision === 'ask') what.push('asked for approval');
  if (hookUpdatedArguments(item)) what.push(rewrittenCall !== undefined ? `rewrote the call: ${rewrittenCall}` : "rewrote a call's arguments");
  if (what.length === 0) return undefined;
  return { kind: 'decision', text: `${TOOL_EVENTS.has(item.event) ? '  ' : ''}${name}: ${what.join(', ')}` };
}
