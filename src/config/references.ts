/**
 * References from one configuration file to another, checked when the whole directory is
 * loaded (SPEC §8: the directory is validated as a whole):
 *
 * - an agent's `model` (`agents.yaml`) names a provider of `providers.yaml`;
 * - an MCP server's `executor` (`mcp.yaml`) and each key of `platform.memberWorkspaces`
 *   (`server.yaml`) name an executor of `executors.yaml` (or `local`);
 * - an approval rule's `tool` (`agents.yaml`) or a hook's `matcher` (`hooks.yaml`) of the
 *   form `mcp__<server>__…` names a server of `mcp.yaml` (a rule for a server that does not
 *   exist never applies, which is how a typo in a deny rule goes unnoticed).
 *
 * A file that failed validation is still checked with what it holds, so one run reports its
 * own problems and its broken references together. Each broken reference says what is defined
 * and, when a defined name is near, which one was likely meant (`similar-names.ts`).
 */
import { DEFAULT_EXECUTOR_NAME } from './executors.js';
import { ConfigError, isRecord } from './yaml-file.js';
import { formatKeyPath } from '../key-path.js';
import { unknownNameHint } from '../similar-names.js';

/**
 * A file as loaded: its path, value, and where its keys are (no `lineOf` for a missing file).
 * For a file that failed validation, `value` is what the YAML held (unchecked), so its
 * references are still checked in the same run.
 */
export interface LoadedFile<T> {
  file: string;
  value: T;
  lineOf?: (keyPath: PropertyKey[]) => number | undefined;
}

/** The loaded files, by configuration file key (values unchecked: see `LoadedFile`). */
export type LoadedFiles = Record<'providers' | 'agents' | 'mcp' | 'hooks' | 'executors' | 'plugins' | 'server' | 'storage', LoadedFile<unknown>>;

/** A server part made only of name characters: no glob wildcard or regular expression syntax. */
const PLAIN_SERVER_NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;

/** The server named by a tool-name pattern `mcp__<server>__…`, when it names exactly one. */
function mcpServerOf(pattern: string): string | undefined {
  const server = /^mcp__(.+?)__/.exec(pattern)?.[1];
  return server !== undefined && PLAIN_SERVER_NAME.test(server) ? server : undefined;
}

function listed(names: string[]): string {
  return names.length > 0 ? names.join(', ') : 'none';
}

/** The entries of a mapping found at `key` of a file's value ([] when it is not a mapping). */
function entriesAt(file: LoadedFile<unknown> | undefined, key: string): [string, Record<string, unknown>][] {
  const value = isRecord(file?.value) ? file.value[key] : undefined;
  return isRecord(value) ? Object.entries(value).map(([name, entry]) => [name, isRecord(entry) ? entry : {}]) : [];
}

/**
 * Every broken reference between the files.
 * @param files the files that were read (a missing key = that file could not be read or parsed)
 * @returns one ConfigError per referring file with broken references, naming line and key path
 */
export function referenceProblems(files: Partial<LoadedFiles>): ConfigError[] {
  const problems = new Map<LoadedFile<unknown>, { line?: number; keyPath: string; message: string }[]>();
  const report = (from: LoadedFile<unknown>, keyPath: (string | number)[], message: string): void => {
    const line = from.lineOf?.(keyPath);
    problems.set(from, [...(problems.get(from) ?? []), { ...(line !== undefined ? { line } : {}), keyPath: formatKeyPath(keyPath), message }]);
  };
  const { providers, agents, mcp, hooks, executors, plugins, server } = files;
  const executorNames = executors ? [DEFAULT_EXECUTOR_NAME, ...entriesAt(executors, 'executors').map(([name]) => name).filter((name) => name !== DEFAULT_EXECUTOR_NAME)] : undefined;
  const unknownExecutor = (name: string): string | undefined =>
    executorNames === undefined || executorNames.includes(name) ? undefined : `names executor "${name}", which is not defined in executors.yaml (defined: ${listed(executorNames)})${unknownNameHint(name, executorNames)}`;
  const servers = mcp ? entriesAt(mcp, 'servers').map(([name]) => name) : undefined;
  // An installed plugin's servers are named `<plugin>_<server>`; what they are is only known once the plugin is read.
  const pluginNames = plugins ? entriesAt(plugins, 'plugins').map(([name]) => name) : [];
  const fromPlugin = (server: string): boolean => pluginNames.some((name) => server.startsWith(`${name}_`));
  const checkMcpPattern = (from: LoadedFile<unknown>, keyPath: (string | number)[], pattern: unknown, what: string): void => {
    const server = typeof pattern === 'string' ? mcpServerOf(pattern) : undefined;
    if (servers === undefined || server === undefined || servers.includes(server) || fromPlugin(server)) return;
    report(from, keyPath, `${what} "${String(pattern)}" names MCP server "${server}", which is not defined in mcp.yaml (defined: ${listed(servers)}), so it never applies${unknownNameHint(server, servers)}`);
  };

  if (agents) {
    const providerNames = providers ? entriesAt(providers, 'providers').map(([name]) => name) : undefined;
    for (const [name, agent] of entriesAt(agents, 'agents')) {
      const provider = typeof agent.model === 'string' && agent.model.includes('/') ? agent.model.split('/')[0] : undefined;
      if (providerNames && provider !== undefined && !providerNames.includes(provider)) {
        report(agents, ['agents', name, 'model'], `names provider "${provider}", which is not defined in providers.yaml (defined: ${listed(providerNames)})${unknownNameHint(provider, providerNames)}`);
      }
      const rules = isRecord(agent.approvals) && Array.isArray(agent.approvals.rules) ? (agent.approvals.rules as unknown[]) : [];
      rules.forEach((rule, index) => checkMcpPattern(agents, ['agents', name, 'approvals', 'rules', index, 'tool'], isRecord(rule) ? rule.tool : undefined, 'the rule for'));
    }
  }
  if (mcp) {
    for (const [name, entry] of entriesAt(mcp, 'servers')) {
      const problem = entry.transport === 'stdio' && typeof entry.executor === 'string' ? unknownExecutor(entry.executor) : undefined;
      if (problem !== undefined) report(mcp, ['servers', name, 'executor'], problem);
    }
  }
  if (server) {
    const platform = isRecord(server.value) ? server.value.platform : undefined;
    const workspaces = isRecord(platform) ? platform.memberWorkspaces : undefined;
    for (const name of isRecord(workspaces) ? Object.keys(workspaces) : []) {
      const problem = unknownExecutor(name);
      if (problem !== undefined) report(server, ['platform', 'memberWorkspaces', name], problem);
    }
  }
  if (hooks) {
    for (const [event, list] of entriesAtList(hooks)) {
      list.forEach((hook, index) => checkMcpPattern(hooks, ['hooks', event, index, 'matcher'], isRecord(hook) ? hook.matcher : undefined, 'the matcher'));
    }
  }
  return [...problems].map(([from, list]) => new ConfigError(from.file, list.sort((a, b) => (a.line ?? 0) - (b.line ?? 0))));
}

/** The hook lists of `hooks.yaml` by event. */
function entriesAtList(hooks: LoadedFile<unknown>): [string, unknown[]][] {
  const value = isRecord(hooks.value) ? hooks.value.hooks : undefined;
  return isRecord(value) ? Object.entries(value).flatMap(([event, list]) => (Array.isArray(list) ? [[event, list as unknown[]] as [string, unknown[]]] : [])) : [];
}
