import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Reads a tool's description from `descriptions/<name>.txt` beside this module. Descriptions
 * live in their own text files so they can be edited as prose. The build copies them next to
 * the compiled module.
 * @throws Error naming the file when it is missing.
 */
export function loadToolDescription(name: string): string {
  const file = fileURLToPath(new URL(`./descriptions/${name}.txt`, import.meta.url));
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new Error(`tool description for "${name}" is missing: ${file} (${(error as Error).message})`, { cause: error });
  }
}
