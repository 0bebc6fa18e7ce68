/**
 * What the entries of `executors.yaml` need from the machine the server runs on: a virtual
 * executor's seed directory must exist, and `agent: true` without an identity file needs the
 * ssh-agent socket (`SSH_AUTH_SOCK`) in the environment. Checked when the configuration
 * directory is loaded, so `config check`, a start and a reload all refuse the same entry and
 * name its file, line and key path (building the executor would only name the executor).
 */
import { statSync } from 'node:fs';
import os from 'node:os';
import { resolveConfigPath } from './executors.js';
import type { LoadedFile } from './references.js';
import { ConfigError, isRecord } from './yaml-file.js';
import { formatKeyPath } from '../key-path.js';

/** Where the paths of the entries are taken from, and the environment they are checked in. */
export interface ExecutorEnvironment {
  /** Directory relative paths are taken from (the configuration directory). */
  baseDirectory: string;
  /** Home directory for `~/…` paths (default `os.homedir()`). */
  homeDirectory?: string;
  /** Environment the server runs with (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
}

function isDirectory(directory: string): boolean {
  try {
    return statSync(directory).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Checks every entry of a loaded `executors.yaml` (its values unchecked: a file that failed
 * validation is still checked with what it holds) against the machine.
 * @returns one ConfigError naming line and key path of each problem, or undefined when there is none
 */
export function executorEnvironmentProblems(executors: LoadedFile<unknown>, where: ExecutorEnvironment): ConfigError | undefined {
  const entries = isRecord(executors.value) && isRecord(executors.value.executors) ? Object.entries(executors.value.executors) : [];
  const environment = where.environment ?? process.env;
  const paths = { baseDirectory: where.baseDirectory, homeDirectory: where.homeDirectory ?? os.homedir() };
  const problems: { line?: number; keyPath: string; message: string }[] = [];
  const report = (keyPath: string[], message: string): void => {
    const line = executors.lineOf?.(keyPath);
    problems.push({ ...(line !== undefined ? { line } : {}), keyPath: formatKeyPath(keyPath), message });
  };
  for (const [name, entry] of entries) {
    if (!isRecord(entry)) continue;
    if (entry.kind === 'virtual' && typeof entry.seedDirectory === 'string' && entry.seedDirectory !== '') {
      const seed = resolveConfigPath(entry.seedDirectory, paths);
      if (!isDirectory(seed)) report(['executors', name, 'seedDirectory'], `${seed} does not exist or is not a directory`);
    }
    if (entry.kind === 'ssh' && entry.agent === true && entry.identityFile === undefined && !environment.SSH_AUTH_SOCK) {
      report(['executors', name, 'agent'], "agent: true, but SSH_AUTH_SOCK is not set in the server's environment (start the server where an ssh-agent runs, or give identityFile)");
    }
  }
  return problems.length > 0 ? new ConfigError(executors.file, problems) : undefined;
}
