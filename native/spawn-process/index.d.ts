/**
 * Starts a program with posix_spawn(3): no copy of the parent's page tables, nothing of its
 * memory write-protected. The child leads a new session, has every signal at its default action
 * and an empty signal mask, reads stdin from a pipe (or /dev/null) and writes stdout and stderr
 * to pipes. Its exit is watched through a pidfd (pidfd_open(2)) on the Node.js event loop, which
 * the watch keeps alive until the child has been reaped.
 * @param file the program's path; it is not looked up on PATH (a relative path is taken from `cwd`)
 * @param argv the whole argument vector, `argv[0]` included
 * @param envp the whole environment, as `NAME=value` strings
 * @param cwd the child's working directory
 * @param pipeStdin a pipe for stdin when true, else /dev/null
 * @param onExit called once after the child was reaped: `exitCode` when it exited (else `null`),
 *   `signal` the number of the signal that ended it (else 0)
 * @returns `[pid, stdinFd, stdoutFd, stderrFd]`: the parent's ends of the pipes, non-blocking
 *   once wrapped in a `net.Socket`; `stdinFd` is -1 without a stdin pipe
 * @throws Error with `code` (`ENOENT`, `EACCES`...), negative `errno` and `syscall` when the
 *   program cannot be started (a missing program or working directory among them); TypeError
 *   for arguments of the wrong type or strings holding a NUL byte
 */
export function spawn(
  file: string,
  argv: string[],
  envp: string[],
  cwd: string,
  pipeStdin: boolean,
  onExit: (exitCode: number | null, signal: number) => void,
): [pid: number, stdinFd: number, stdoutFd: number, stderrFd: number];
/** Whether {@link spawn} works here: Linux 5.3 or later (pidfd_open) with glibc 2.29 or later. */
export function supported(): boolean;
