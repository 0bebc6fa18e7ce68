import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(): { root: string; version: string } {
  // Modules run from src/ (tests) or dist/src/ (built): walk up to the package root.
  let directory = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    const candidate = path.join(directory, 'package.json');
    if (existsSync(candidate)) {
      const manifest = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'openvaala') return { root: directory, version: manifest.version ?? '0.0.0' };
    }
    directory = path.dirname(directory);
  }
  throw new Error(`cannot find the openvaala package root above ${fileURLToPath(import.meta.url)}`);
}

const found = findPackageRoot();

/** The package version (from package.json). */
export const VERSION = found.version;
/** Absolute path of the package root (where package.json and bin/ are). */
export const PACKAGE_ROOT = found.root;
/** Absolute path of the `openvaala` executable. */
export const CLI_EXECUTABLE = path.join(found.root, 'bin', 'openvaala');
