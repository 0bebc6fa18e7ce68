import type { CommandRequest, CommandResult, Executor } from '../executor.js';
import { LocalFileSystem } from './local-file-system.js';
import { startCommand, type RunningCommand } from './run-command.js';

/**
 * The executor of the machine the server runs on (SPEC §7): the local file system and
 * `bash`, with each command in its own process group.
 */
export class LocalExecutor implements Executor {
  readonly kind = 'local' as const;
  readonly name: string;
  readonly fs = new LocalFileSystem();
  private readonly running = new Set<RunningCommand>();
  private closed = false;

  /** @param options.name the executor's name from configuration (`local`). */
  constructor({ name }: { name: string }) {
    this.name = name;
  }

  /**
   * Runs a command to completion, timeout or abort (see `startCommand` for the output and
   * kill rules). The result also carries `omittedBytes`, the bytes dropped after the cap.
   * @throws Error when the executor is closed or the process cannot be started (e.g. the
   *   working directory does not exist).
   */
  async run(request: CommandRequest): Promise<CommandResult> {
    if (this.closed) throw new Error(`executor "${this.name}" is closed`);
    const command = startCommand(request);
    this.running.add(command);
    try {
      return await command.result;
    } finally {
      this.running.delete(command);
    }
  }

  /**
   * Kills every command still running (their whole process groups) and waits for them to
   * end. Later `run` calls are refused.
   */
  async close(): Promise<void> {
    this.closed = true;
    const pending = [...this.running];
    for (const command of pending) command.kill();
    await Promise.allSettled(pending.map((command) => command.result));
  }
}
