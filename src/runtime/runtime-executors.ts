/**
 * The executors a runtime has in force (SPEC §7), by name, and what is done with them: checking
 * a work location, making a conversation's workspaces, retiring executors a reload removed and
 * closing them once no open conversation uses them.
 */
import path from 'node:path';
import { underlyingExecutor, UNDERLYING_EXECUTOR, type Executor } from '../executors/executor.js';
import { Workspace } from '../executors/workspace.js';
import type { Logger } from '../logger.js';
import type { Conversation, WorkLocationEntry } from '../protocol/index.js';
import { InvalidWorkLocationError, NotFoundError } from './runtime-errors.js';

/** What a conversation's commands get besides the executor's own (a platform project's). */
export interface CommandAdjustments {
  /** Extra environment variables, read at each command's start. */
  environment?: (conversation: Conversation) => Record<string, string> | undefined;
  /** Shell text run before each command on `executor`, read at each command's start. */
  prefix?: (conversation: Conversation, executor: Executor) => string | undefined;
}

/**
 * `executor` whose commands (`run`, `spawn`) also get the variables `extra` returns at their
 * start (the request's own `env` wins over them) and start with the shell text `prefix`
 * returns. Everything else is the executor's own.
 */
function withCommandEnvironment(executor: Executor, extra: () => Record<string, string> | undefined, prefix: (executor: Executor) => string | undefined = () => undefined): Executor {
  const adjusted = <R extends { command: string; env?: Record<string, string> }>(request: R): R => ({ ...request, command: `${prefix(executor) ?? ''}${request.command}`, env: { ...extra(), ...request.env } });
  return new Proxy(executor, {
    get(target, property) {
      if (property === UNDERLYING_EXECUTOR) return target;
      if (property === 'run') return (request: Parameters<Executor['run']>[0]) => target.run(adjusted(request));
      if (property === 'spawn' && target.spawn) {
        const spawn = target.spawn.bind(target);
        return (request: Parameters<NonNullable<Executor['spawn']>>[0]) => spawn(adjusted(request));
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The executors in force and those retired by a reload but maybe still in use. */
export class RuntimeExecutors {
  /** Replaced as a whole by `replace`; open conversations keep the instances they hold. */
  private executors: Map<string, Executor>;
  /** Executors replaced or removed by a reload, closed once no open conversation uses them. */
  private readonly retired = new Set<Executor>();

  /**
   * @param executors executors by name, `local` first
   * @param inUse the executors the open conversations' workspaces hold (views included)
   * @param logger where failures to close are reported
   */
  constructor(
    executors: Map<string, Executor>,
    private readonly inUse: () => Iterable<Executor>,
    private readonly logger: Logger | undefined,
  ) {
    this.executors = executors;
  }

  /**
   * Puts a new set in force. An executor left out of `next` is closed once no open
   * conversation uses it (at the latest by `closeAll`).
   * @param next executors by name, `local` first; may reuse instances of the current set
   */
  replace(next: Map<string, Executor>): void {
    const kept = new Set(next.values());
    for (const executor of this.executors.values()) if (!kept.has(executor)) this.retired.add(executor);
    this.executors = next;
    this.closeRetired(false).catch((error: unknown) => this.logger?.error({ error: (error as Error).message }, 'closing retired executors failed'));
  }

  /** The configured executor of that name, or undefined. */
  find(name: string): Executor | undefined {
    return this.executors.get(name);
  }

  /** The configured executor of that name. @throws NotFoundError naming the configured ones */
  get(name: string): Executor {
    const executor = this.executors.get(name);
    if (!executor) throw new NotFoundError(`executor "${name}" is not configured (configured: ${[...this.executors.keys()].join(', ')})`);
    return executor;
  }

  /** The configured executors, `local` first (`executors/list`). */
  list(): { name: string; kind: Executor['kind'] }[] {
    return [...this.executors.values()].map((executor) => ({ name: executor.name, kind: executor.kind }));
  }

  /**
   * Refuses a work location before anything is recorded: each executor must be configured,
   * each cwd absolute and an existing directory on its executor (asked of that executor).
   * @throws NotFoundError for an unknown executor; InvalidWorkLocationError otherwise
   */
  async checkWorkLocation(workLocation: WorkLocationEntry[]): Promise<void> {
    const names = new Set<string>();
    for (const entry of workLocation) {
      const executor = this.get(entry.executor);
      if (!path.posix.isAbsolute(entry.cwd)) throw new InvalidWorkLocationError(`cwd must be an absolute path, got "${entry.cwd}" for executor "${entry.executor}"`);
      if (names.has(entry.executor)) throw new InvalidWorkLocationError(`executor "${entry.executor}" appears twice in the work location`);
      names.add(entry.executor);
      // Only a missing path is "does not exist": any other failure (an SSH host that cannot be
      // reached, a changed host key, a sandbox that cannot start) is told as it is.
      const cannotCheck = (error: unknown) => new InvalidWorkLocationError(`cwd ${entry.cwd} cannot be checked on executor "${entry.executor}": ${(error as Error).message}`);
      const missing = (error: unknown) => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');
      const fileSystem = executor.workLocationFileSystem ?? executor.fs;
      let stat;
      try {
        // A symlink to a directory is a fine working directory: look at what it points to.
        stat = await fileSystem.stat(await fileSystem.realPath(entry.cwd));
      } catch (error) {
        if (!missing(error)) throw cannotCheck(error);
        stat = await fileSystem.stat(entry.cwd).catch((statError: unknown) => {
          if (missing(statError)) return undefined;
          throw cannotCheck(statError);
        });
      }
      if (!stat) throw new InvalidWorkLocationError(`cwd ${entry.cwd} does not exist on executor "${entry.executor}"`);
      if (stat.kind !== 'directory') throw new InvalidWorkLocationError(`cwd ${entry.cwd} is not a directory on executor "${entry.executor}" (it is a ${stat.kind})`);
    }
  }

  /**
   * One workspace per work location entry, each over a view of its executor that applies
   * `adjustments` to the conversation's commands.
   * @throws NotFoundError for an executor not configured (any more)
   */
  workspacesOf(conversation: Conversation, adjustments: CommandAdjustments): [Workspace, ...Workspace[]] {
    const [first, ...rest] = conversation.workLocation.map(
      (entry) => new Workspace(withCommandEnvironment(this.get(entry.executor), () => adjustments.environment?.(conversation), (executor) => adjustments.prefix?.(conversation, executor)), entry.cwd),
    );
    if (!first) throw new Error(`conversation "${conversation.id}" has no work location`);
    return [first, ...rest];
  }

  /** Closes every executor, those in force and the retired ones (shutdown). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.executors.values()].map((executor) => executor.close()));
    await this.closeRetired(true);
  }

  /** Closes retired executors no open conversation uses (all of them with `all`). */
  private async closeRetired(all: boolean): Promise<void> {
    const inUse = new Set<Executor>();
    if (!all) for (const executor of this.inUse()) inUse.add(underlyingExecutor(executor));
    const closing: Promise<void>[] = [];
    for (const executor of this.retired) {
      if (inUse.has(executor)) continue;
      this.retired.delete(executor);
      closing.push(executor.close().catch((error: unknown) => this.logger?.warn({ executor: executor.name, error: (error as Error).message }, 'closing a retired executor failed')));
    }
    await Promise.all(closing);
  }
}
