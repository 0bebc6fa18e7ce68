/**
 * The files, directories and programs the configuration names, checked against the machine
 * `config check` runs on: an SSH key, a known_hosts file, a sandbox's writable and readable
 * paths, bubblewrap for a sandboxed executor, an MCP server's program and working directory,
 * an external agent's program, a hook's script and the agent's browser. The server uses each
 * only when a command runs, a connection opens or a turn starts, so none stops it from
 * starting: each is a warning (the seed directory of a virtual executor, which building the
 * executor needs, is an error of the load: see `executor-environment.ts`).
 */
import { accessSync, constants, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findBubblewrap } from '../executors/local/bubblewrap.js';
import { DEFAULT_EXECUTOR_NAME, resolveConfigPath } from './executors.js';
import { DEFAULT_BROWSER_EXECUTABLE } from './server-settings.js';
import { isRecord } from './yaml-file.js';

/** One configured path the machine lacks, or cannot use as the entry needs. */
export interface PathWarning {
  /** The configuration file's name (`executors.yaml`). */
  file: string;
  /** Where the path is given (`['executors', 'build', 'identityFile']`). */
  keyPath: (string | number)[];
  /** What is wrong, then what fails because of it. */
  message: string;
}

/** Where the paths are resolved and programs looked up. */
export interface PathCheckPlace {
  /** The configuration directory: relative paths of `executors.yaml` are taken from it. */
  configDir: string;
  /** Home directory for `~/…` paths (default `os.homedir()`). */
  homeDirectory?: string;
  /** Environment whose `PATH` programs are looked up on (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
}

/** What an entry does with a path: read a file, run a program, use a directory, write in one. */
type Use = 'read file' | 'run' | 'read' | 'directory' | 'write directory';

/**
 * What is wrong with `file` for the use an entry makes of it, or undefined when nothing is.
 * Read, write and run rights are those of the user running the check (the server's, when
 * run as that user).
 */
function pathProblem(file: string, use: Use): string | undefined {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return `${file} does not exist`;
    return `${file} cannot be looked at: ${(error as Error).message}`;
  }
  const wantsDirectory = use === 'directory' || use === 'write directory';
  if (wantsDirectory && !stats.isDirectory()) return `${file} is not a directory`;
  if ((use === 'read file' || use === 'run') && stats.isDirectory()) return `${file} is a directory, not a file`;
  const [mode, words] = use === 'run' ? [constants.X_OK, 'executable'] : use === 'write directory' ? [constants.W_OK, 'writable'] : [constants.R_OK, 'readable'];
  try {
    accessSync(file, mode);
  } catch {
    return `${file} is not ${words} by this user`;
  }
  return undefined;
}

/**
 * What is wrong with a program as a process start finds it: a name without `/` is looked up
 * on `searchPath`; an absolute or `~/` path must be an executable file. A relative path with a
 * `/` is taken from a working directory known only when it runs: not checked.
 */
function programProblem(program: string, searchPath: string, homeDirectory: string): string | undefined {
  if (program.includes('/')) {
    if (program.startsWith('~/')) return pathProblem(path.join(homeDirectory, program.slice(2)), 'run');
    return path.isAbsolute(program) ? pathProblem(program, 'run') : undefined;
  }
  const found = searchPath
    .split(path.delimiter)
    .filter((directory) => directory !== '')
    .some((directory) => {
      const candidate = path.join(directory, program);
      return statSync(candidate, { throwIfNoEntry: false })?.isFile() === true && pathProblem(candidate, 'run') === undefined;
    });
  return found ? undefined : `"${program}" is not found in any directory of PATH`;
}

/** Programs that run the script named after their options (`bash ./check.sh`, `node /opt/hook.js`). */
const INTERPRETERS = new Set(['sh', 'bash', 'zsh', 'dash', 'node', 'python', 'python3', 'perl', 'ruby']);

/**
 * The script or program a hook's command line starts, when it is given as an absolute or
 * `~/` path in plain words: the first word after variable assignments, or the script an
 * interpreter is given. Anything shell syntax could change (quotes, `$`, backquotes) is left.
 */
function hookTarget(command: string): { file: string; use: Use } | undefined {
  const words = command.trim().split(/\s+/);
  let index = 0;
  while (index < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[index] as string)) index++;
  let word = words[index];
  let use: Use = 'run';
  if (word !== undefined && INTERPRETERS.has(path.basename(word))) {
    index++;
    while (index < words.length && (words[index] as string).startsWith('-')) index++;
    word = words[index];
    use = 'read file';
  }
  if (word === undefined || /["'`$\\;|&<>(){}*?]/.test(word)) return undefined;
  return word.startsWith('/') || word.startsWith('~/') ? { file: word, use } : undefined;
}

/** The entries of the mapping at `key` of a file's value (unchecked), records only. */
function entries(value: unknown, key: string): [string, Record<string, unknown>][] {
  const map = isRecord(value) ? value[key] : undefined;
  return isRecord(map) ? Object.entries(map).flatMap(([name, entry]) => (isRecord(entry) ? [[name, entry] as [string, Record<string, unknown>]] : [])) : [];
}

/** A PATH an entry sets for its own process (`env: { PATH: … }`), else the environment's. */
function searchPathOf(env: unknown, environment: NodeJS.ProcessEnv): string {
  const own = isRecord(env) ? env.PATH : undefined;
  return typeof own === 'string' && !own.startsWith('env:') ? own : (environment.PATH ?? '');
}

/**
 * Every configured path of the files' values (checked or not: a file with other problems is
 * still checked) that the machine lacks or that cannot be used as its entry needs.
 * @param values what each configuration file holds, by key (`executors`, `mcp`, `agents`, `hooks`, `server`)
 * @returns the warnings, file by file in the order of their entries
 */
export function configuredPathWarnings(values: Partial<Record<'executors' | 'mcp' | 'agents' | 'hooks' | 'server', unknown>>, where: PathCheckPlace): PathWarning[] {
  const environment = where.environment ?? process.env;
  const homeDirectory = where.homeDirectory ?? os.homedir();
  const resolve = (value: string): string => resolveConfigPath(value, { baseDirectory: where.configDir, homeDirectory });
  const warnings: PathWarning[] = [];
  const warn = (file: string, keyPath: (string | number)[], problem: string | undefined, consequence: string): void => {
    if (problem !== undefined) warnings.push({ file, keyPath, message: `${problem}; ${consequence}` });
  };
  const executors = entries(values.executors, 'executors');
  for (const [name, entry] of executors) {
    const at = (...keys: (string | number)[]) => ['executors', name, ...keys];
    if (entry.kind === 'local' && entry.sandbox === 'bwrap') {
      if (findBubblewrap(undefined, environment.PATH ?? '') === undefined) {
        warn('executors.yaml', at('sandbox'), 'bubblewrap (the bwrap command) is not found in any directory of PATH', 'every command of this executor fails until it is installed (Debian/Ubuntu: apt-get install bubblewrap)');
      }
      const list = (key: string): [number, string][] => (Array.isArray(entry[key]) ? (entry[key] as unknown[]).flatMap((item, index) => (typeof item === 'string' && item !== '' ? [[index, item] as [number, string]] : [])) : []);
      for (const [index, item] of list('writablePaths')) warn('executors.yaml', at('writablePaths', index), pathProblem(resolve(item), 'write directory'), 'every command of this executor fails (the sandbox makes each writable path writable)');
      for (const [index, item] of list('readablePaths')) warn('executors.yaml', at('readablePaths', index), pathProblem(resolve(item), 'read'), 'every command of this executor fails (the sandbox shows each readable path)');
    }
    if (entry.kind === 'ssh') {
      if (typeof entry.identityFile === 'string' && entry.identityFile !== '') warn('executors.yaml', at('identityFile'), pathProblem(resolve(entry.identityFile), 'read file'), 'the executor cannot connect (the key is read at each connection)');
      if (typeof entry.knownHostsFile === 'string' && entry.knownHostsFile !== '') warn('executors.yaml', at('knownHostsFile'), pathProblem(resolve(entry.knownHostsFile), 'read file'), "the executor cannot connect (the host's key must be listed in it)");
    }
  }
  const localExecutors = new Set([DEFAULT_EXECUTOR_NAME, ...executors.filter(([, entry]) => entry.kind === 'local').map(([name]) => name)]);
  for (const [name, server] of entries(values.mcp, 'servers')) {
    // A server run by an ssh executor starts on the remote host, whose files are not these.
    if (server.transport !== 'stdio' || server.enabled === false || !localExecutors.has(typeof server.executor === 'string' ? server.executor : DEFAULT_EXECUTOR_NAME)) continue;
    const cwd = typeof server.cwd === 'string' && path.isAbsolute(server.cwd) ? server.cwd : undefined;
    if (cwd !== undefined) warn('mcp.yaml', ['servers', name, 'cwd'], pathProblem(cwd, 'directory'), 'the server cannot be started (its tools are missing from every conversation)');
    if (typeof server.command === 'string' && server.command !== '') {
      const command = cwd !== undefined && server.command.includes('/') && !path.isAbsolute(server.command) && !server.command.startsWith('~/') ? path.resolve(cwd, server.command) : server.command;
      warn('mcp.yaml', ['servers', name, 'command'], programProblem(command, searchPathOf(server.env, environment), homeDirectory), 'the server cannot be started (its tools are missing from every conversation)');
    }
  }
  for (const [name, agent] of entries(values.agents, 'agents')) {
    const program = Array.isArray(agent.command) ? agent.command[0] : undefined;
    if ((agent.kind === 'acp' || agent.kind === 'codex-app-server') && typeof program === 'string' && program !== '') {
      warn('agents.yaml', ['agents', name, 'command', 0], programProblem(program, searchPathOf(agent.env, environment), homeDirectory), "the agent's turns cannot start");
    }
  }
  const hooks = isRecord(values.hooks) && isRecord(values.hooks.hooks) ? values.hooks.hooks : {};
  for (const [event, list] of Object.entries(hooks)) {
    if (!Array.isArray(list)) continue;
    list.forEach((hook: unknown, index) => {
      const target = isRecord(hook) && typeof hook.command === 'string' ? hookTarget(hook.command) : undefined;
      if (target === undefined) return;
      const file = target.file.startsWith('~/') ? path.join(homeDirectory, target.file.slice(2)) : target.file;
      warn('hooks.yaml', ['hooks', event, index, 'command'], pathProblem(file, target.use), 'the hook fails when it runs on this machine (a conversation on a local executor)');
    });
  }
  const browser = isRecord(values.server) && isRecord(values.server.browser) ? values.server.browser : undefined;
  if (browser?.enabled === true) {
    // Without executablePath the schema's default applies (the unchecked value of a file with problems lacks it).
    const program = typeof browser.executablePath === 'string' && browser.executablePath !== '' ? browser.executablePath : DEFAULT_BROWSER_EXECUTABLE;
    warn('server.yaml', ['browser', 'executablePath'], programProblem(program, environment.PATH ?? '', homeDirectory), "the agent's browser cannot start");
  }
  return warnings;
}
