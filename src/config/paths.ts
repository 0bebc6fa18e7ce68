/**
 * Where OpenVaala keeps its files (SPEC §2): every command honours XDG_CONFIG_HOME,
 * XDG_DATA_HOME and XDG_STATE_HOME (XDG Base Directory Specification), so a test or a second
 * installation is isolated by setting them.
 */
import os from 'node:os';
import path from 'node:path';

/** The directories a command uses. */
export interface OpenVaalaPaths {
  /** Configuration directory (`providers.yaml`…). */
  configDir: string;
  /** Data directory (`runtime.lock`, `metadata.db`, `conversations/`). */
  dataDir: string;
  /** State directory (`runtime-server.yaml`). */
  stateDir: string;
}

function xdg(variable: string, fallback: string[], environment: NodeJS.ProcessEnv): string {
  const value = environment[variable];
  // The XDG spec says relative values are invalid and must be ignored.
  if (value && path.isAbsolute(value)) return value;
  return path.join(os.homedir(), ...fallback);
}

/**
 * Resolves the default directories from the environment, with explicit overrides winning.
 * @param overrides values of `--config-dir` / `--data-dir`, made absolute against the cwd
 */
export function resolvePaths(
  overrides: { configDir?: string; dataDir?: string } = {},
  environment: NodeJS.ProcessEnv = process.env,
): OpenVaalaPaths {
  return {
    configDir: overrides.configDir ? path.resolve(overrides.configDir) : path.join(xdg('XDG_CONFIG_HOME', ['.config'], environment), 'openvaala'),
    dataDir: overrides.dataDir ? path.resolve(overrides.dataDir) : path.join(xdg('XDG_DATA_HOME', ['.local', 'share'], environment), 'openvaala'),
    stateDir: path.join(xdg('XDG_STATE_HOME', ['.local', 'state'], environment), 'openvaala'),
  };
}

/** The file through which clients find the local server (SPEC §2). */
export function serverInfoFile(paths: OpenVaalaPaths): string {
  return path.join(paths.stateDir, 'runtime-server.yaml');
}

/**
 * The same information kept in the data directory, so that a client of a server on another
 * data directory than the one in the state file (two installations sharing XDG_STATE_HOME)
 * still finds it.
 */
export function dataDirServerInfoFile(paths: Pick<OpenVaalaPaths, 'dataDir'>): string {
  return path.join(paths.dataDir, 'runtime-server.yaml');
}
