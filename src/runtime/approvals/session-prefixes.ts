/**
 * The command prefixes a person allowed for one session (`allow_prefix`). Later calls of the
 * same tool whose command is one simple command starting with those words run without asking.
 */
import { commandMatchesPrefix, proposeCommandPrefix, shellCommandOf } from './command-prefix.js';

/** Allowed prefixes of one session, by tool name. Kept in memory: they end with the live session. */
export class SessionPrefixApprovals {
  private readonly byTool = new Map<string, string[][]>();

  /** The prefix to offer for a call, or undefined when the call runs no single simple shell command. */
  static propose(toolName: string, args: unknown): string[] | undefined {
    const command = shellCommandOf(toolName, args);
    return command === undefined ? undefined : proposeCommandPrefix(command);
  }

  /** True when no prefix was allowed. */
  get isEmpty(): boolean {
    return this.byTool.size === 0;
  }

  /** Allows a prefix (parsed words) for later calls of `toolName`. */
  add(toolName: string, prefix: string[]): void {
    const prefixes = this.byTool.get(toolName) ?? [];
    prefixes.push([...prefix]);
    this.byTool.set(toolName, prefixes);
  }

  /** True when the call's command is one simple command starting with an allowed prefix. */
  allows(toolName: string, args: unknown): boolean {
    const prefixes = this.byTool.get(toolName);
    const command = shellCommandOf(toolName, args);
    if (!prefixes || command === undefined) return false;
    return prefixes.some((prefix) => commandMatchesPrefix(command, prefix));
  }
}
