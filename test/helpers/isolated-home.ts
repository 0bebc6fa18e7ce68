/**
 * A temporary home for a test's CLI runs: HOME and the XDG configuration, data and state
 * directories all under it, removed after each test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

/** Makes an environment with a fresh home (call inside a test); `home()` is the current one's folder. */
export interface IsolatedHome {
  (): NodeJS.ProcessEnv;
  home(): string;
}

/**
 * Registers the clean-up and returns the function that makes the environment.
 * @param prefix name prefix of the temporary folder
 */
export function useIsolatedHome(prefix: string): IsolatedHome {
  let home: string | undefined;
  // A test may make several homes; every one is removed, not only the last.
  const made: string[] = [];
  afterEach(() => {
    for (const folder of made.splice(0)) rmSync(folder, { recursive: true, force: true });
    home = undefined;
  });
  const make = (): NodeJS.ProcessEnv => {
    home = mkdtempSync(path.join(tmpdir(), prefix));
    made.push(home);
    return { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_DATA_HOME: path.join(home, 'data'), XDG_STATE_HOME: path.join(home, 'state') };
  };
  return Object.assign(make, { home: () => home as string });
}
