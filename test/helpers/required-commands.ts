/**
 * Finding the system programs some test suites need (OpenSSH's `sshd`, bubblewrap's `bwrap`,
 * ripgrep's `rg`). A missing program makes the test fail with a message saying how to install
 * it, never skip silently.
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** The script that installs every program the test suites need (Debian/Ubuntu). */
export const INSTALL_SCRIPT = 'scripts/install-test-packages.sh';

/**
 * The absolute path of an executable: searched on `PATH`, then in `extraDirectories`
 * (`sshd` lives in `/usr/sbin`, which is not on a normal user's `PATH`).
 * @returns undefined when it is found nowhere
 */
export function findExecutable(name: string, extraDirectories: string[] = ['/usr/sbin', '/usr/local/sbin', '/sbin']): string | undefined {
  const directories = [...(process.env.PATH ?? '').split(path.delimiter).filter((entry) => entry !== ''), ...extraDirectories];
  for (const directory of directories) {
    const candidate = path.join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return undefined;
}

/**
 * Like `findExecutable`, but throws when the program is missing, naming the Debian package
 * and the install script, so that a test needing it fails with instructions.
 * @throws Error `<name> (Debian package <package>) is not installed: run <script>`
 */
export function requireExecutable(name: string, debianPackage: string): string {
  const found = findExecutable(name);
  if (found === undefined) {
    throw new Error(`${name} (Debian package ${debianPackage}) is not installed, and these tests need it: run ${INSTALL_SCRIPT}`);
  }
  return found;
}
