/**
 * Told about every process group an executor starts on this machine and when its leader
 * ends, so that whoever owns the executor can find the groups again after a crash (the
 * server records them in its data directory and stops a dead predecessor's on start).
 */
export interface ProcessTracker {
  /** A process group was started; `pid` is its leader's pid and the group's id. Must not throw. */
  started(pid: number): void;
  /** The leader of that group has ended. Must not throw. */
  ended(pid: number): void;
  /**
   * Variables added to every command's environment, so that its processes, descendants that
   * left the group included, can be found again (inherited unless a process clears them).
   */
  readonly environment?: Record<string, string>;
}
