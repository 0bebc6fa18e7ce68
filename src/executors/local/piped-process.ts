/**
 * Local programs with separate byte pipes (`Executor.spawnPiped`): the program leads its own
 * process group (a new session, `launchProcess`), so killing it ends everything it started; in a sandboxed
 * executor the program given is bubblewrap wrapping the real one.
 */
import type { PipedProcess, ProcessExit } from '../executor.js';
import { launchProcess } from './launch-process.js';
import type { CommandProgram } from './run-command.js';
import { killTree } from './spawn-process.js';

/** Exit code reported when the program could not be started (ENOENT and the like), as a shell does. */
const START_FAILURE_EXIT_CODE = 127;

/**
 * Starts `program` with pipes for stdin, stdout and stderr and returns at once. A program that
 * cannot be started ends with exit code 127 and the reason on stderr.
 * @param cwd absolute working directory
 */
export function startLocalPipedProcess(program: Required<CommandProgram>, cwd: string): PipedProcess {
  const child = launchProcess(program.file, program.args, { cwd, env: program.env, stdin: 'pipe' });
  const stdoutListeners = new Set<(chunk: Buffer) => void>();
  const stderrListeners = new Set<(chunk: Buffer) => void>();
  child.stdout?.on('data', (data: Buffer) => stdoutListeners.forEach((listener) => listener(data)));
  child.stderr?.on('data', (data: Buffer) => stderrListeners.forEach((listener) => listener(data)));
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.on('error', () => undefined);
  let ended = false;
  const exited = new Promise<ProcessExit>((resolve) => {
    const finish = (exit: ProcessExit): void => {
      if (ended) return;
      ended = true;
      resolve(exit);
    };
    child.once('error', (error) => {
      const message = Buffer.from(`cannot start ${program.file} in "${cwd}": ${error.message}\n`);
      stderrListeners.forEach((listener) => listener(message));
      finish({ exitCode: START_FAILURE_EXIT_CODE, signal: null });
    });
    child.once('close', (code, signal) => finish({ exitCode: code, signal }));
  });
  return {
    pid: child.pid,
    write(data) {
      if (ended || !child.stdin || child.stdin.writableEnded) throw new Error('the process has ended or its input is closed');
      child.stdin.write(data);
    },
    endInput() {
      child.stdin?.end();
    },
    onStdout(listener) {
      stdoutListeners.add(listener);
      return () => stdoutListeners.delete(listener);
    },
    onStderr(listener) {
      stderrListeners.add(listener);
      return () => stderrListeners.delete(listener);
    },
    exited,
    kill() {
      if (!ended && child.pid !== undefined) killTree(child.pid);
    },
  };
}
