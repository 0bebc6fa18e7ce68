/**
 * Running one hook command on an executor. The executor contract has no stdin and reports
 * stdout and stderr interleaved, while a hook reads its input as JSON on stdin and answers
 * on stdout (decisions, context) and stderr (the reason of a block). So the command is
 * wrapped in a small bash script that:
 *
 * - pipes the input from an environment variable into the command's stdin (`printf '%s\n'
 *   "$OPENVAALA_HOOK_INPUT" | (…)`), so no quoting of the JSON is ever needed and no file has
 *   to be shared between the server and the command (a bwrap sandbox has a private `/tmp`);
 * - sends the command's stdout straight through and captures its stderr in a variable;
 * - after the command, prints a line with a random separator, then the captured stderr, and
 *   exits with the command's status.
 *
 * The command runs in a subshell, so its `exit 2` ends only the subshell. When the separator
 * is missing the wrapper did not finish (the command line does not parse, the hook was killed
 * or timed out): the result says so and its exit code is not the hook's answer.
 */
import { randomBytes } from 'node:crypto';
import type { Executor } from '../../executors/executor.js';

/** Name of the environment variable holding the JSON input (also readable by the hook). */
export const HOOK_INPUT_VARIABLE = 'OPENVAALA_HOOK_INPUT';
/** Name of the environment variable holding the event name. */
export const HOOK_EVENT_VARIABLE = 'OPENVAALA_HOOK_EVENT';
/**
 * Largest JSON input sent to a hook, in bytes. The input travels in the environment (and,
 * over SSH, inside the command line), where Linux limits one string to 128 KiB.
 */
export const HOOK_INPUT_LIMIT_BYTES = 64 * 1024;
/** Most stdout+stderr kept from one hook run, in bytes. */
export const HOOK_OUTPUT_LIMIT_BYTES = 256 * 1024;

/** What to run. */
export interface HookProcessRequest {
  executor: Executor;
  /** The hook's command line as configured. */
  command: string;
  /** Absolute working directory (the workspace root). */
  cwd: string;
  /** The event name, exported as `OPENVAALA_HOOK_EVENT`. */
  event: string;
  /** The JSON input (at most `HOOK_INPUT_LIMIT_BYTES`; see `capHookInput`). */
  input: string;
  /** Kill the hook after this many ms. */
  timeoutMs: number;
  /** Aborting kills the hook (the turn was interrupted). */
  signal?: AbortSignal;
}

/** How one hook run ended. */
export interface HookProcessResult {
  /** The hook's exit code; null when it did not finish (killed, timed out, failed to start or to parse). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Killed for exceeding its timeout. */
  timedOut: boolean;
  /** Killed because the turn was interrupted. */
  aborted: boolean;
  /** Why the hook did not finish when that was not a timeout or an abort (executor failure, shell syntax error, signal). */
  failure?: string;
  /** Wall time in ms. */
  durationMs: number;
}

/**
 * The bash script that runs `command` with the input on stdin and reports stderr after
 * `separator`. `descriptors` (real bash: local and SSH executors) captures stderr through a
 * spare file descriptor and leaves nothing behind; `file` (the virtual executor's simulated
 * bash, which has no descriptor juggling) collects it in a file under `/tmp` of that
 * in-memory file system.
 */
export function hookShellScript(command: string, separator: string, style: 'descriptors' | 'file' = 'descriptors'): string {
  if (style === 'file') {
    const stderrFile = `/tmp/${separator}.stderr`;
    return [
      'mkdir -p /tmp',
      `printf '%s\\n' "$${HOOK_INPUT_VARIABLE}" | (`,
      command,
      `) 2> '${stderrFile}'; __openvaala_hook_status=$?`,
      `printf '\\n%s\\n' '${separator}'; cat '${stderrFile}'; rm -f '${stderrFile}'`,
      'exit "$__openvaala_hook_status"',
    ].join('\n');
  }
  return [
    `{ __openvaala_hook_stderr=$(printf '%s\\n' "$${HOOK_INPUT_VARIABLE}" | (`,
    command,
    `) 2>&1 1>&3 3>&-); __openvaala_hook_status=$?; } 3>&1`,
    `printf '\\n%s\\n%s' '${separator}' "$__openvaala_hook_stderr"`,
    `exit "$__openvaala_hook_status"`,
  ].join('\n');
}

/**
 * Runs a hook command to its end (or timeout/abort). Never rejects: an executor failure is
 * reported in `failure`.
 */
export async function runHookProcess(request: HookProcessRequest): Promise<HookProcessResult> {
  const separator = `--openvaala-hook-${randomBytes(12).toString('hex')}--`;
  const started = performance.now();
  let result;
  try {
    result = await request.executor.run({
      command: hookShellScript(request.command, separator, request.executor.kind === 'virtual' ? 'file' : 'descriptors'),
      cwd: request.cwd,
      workspaceRoot: request.cwd,
      env: { [HOOK_INPUT_VARIABLE]: request.input, [HOOK_EVENT_VARIABLE]: request.event },
      timeoutMs: request.timeoutMs,
      maxOutputBytes: HOOK_OUTPUT_LIMIT_BYTES,
      ...(request.signal ? { signal: request.signal } : {}),
    });
  } catch (error) {
    return { exitCode: null, stdout: '', stderr: '', timedOut: false, aborted: false, failure: `the executor could not run the hook: ${(error as Error).message}`, durationMs: Math.round(performance.now() - started) };
  }
  const marker = `\n${separator}\n`;
  const at = result.output.lastIndexOf(marker);
  const base = { timedOut: result.timedOut, aborted: result.aborted, durationMs: result.durationMs };
  if (at < 0) {
    // The wrapper did not get to print the separator: whatever ran wrote stdout and stderr mixed.
    const failure = result.timedOut || result.aborted
      ? undefined
      : result.signal !== null
        ? `killed by ${result.signal}`
        : result.truncated
          ? `its output exceeded ${HOOK_OUTPUT_LIMIT_BYTES} bytes`
          : `the command did not run to its end (exit code ${result.exitCode}; a shell syntax error?)`;
    return { ...base, exitCode: null, stdout: result.output, stderr: '', ...(failure ? { failure } : {}) };
  }
  return { ...base, exitCode: result.exitCode, stdout: result.output.slice(0, at), stderr: result.output.slice(at + marker.length) };
}

function capStrings(value: unknown, limitBytes: number): unknown {
  if (typeof value === 'string') {
    if (Buffer.byteLength(value, 'utf8') <= limitBytes) return value;
    const kept = Buffer.from(value, 'utf8').subarray(0, limitBytes).toString('utf8').replace(/\uFFFD+$/, '');
    return `${kept}[… ${Buffer.byteLength(value, 'utf8') - Buffer.byteLength(kept, 'utf8')} bytes left out of the hook input …]`;
  }
  if (Array.isArray(value)) return value.map((entry) => capStrings(entry, limitBytes));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, capStrings(entry, limitBytes)]));
  return value;
}

/**
 * Serialises a hook's input as one line of JSON of at most `limitBytes` bytes: when it is
 * larger, its long strings (a big tool result, a long patch) are cut, with a marker saying
 * how much was left out, halving the per-string allowance until it fits.
 */
export function capHookInput(input: Record<string, unknown>, limitBytes = HOOK_INPUT_LIMIT_BYTES): string {
  let text = JSON.stringify(input);
  for (let allowance = Math.floor(limitBytes / 2); Buffer.byteLength(text, 'utf8') > limitBytes && allowance >= 64; allowance = Math.floor(allowance / 2)) {
    text = JSON.stringify(capStrings(input, allowance));
  }
  return text;
}
