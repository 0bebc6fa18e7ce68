import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Descriptions read so far, by tool name: the files ship with the program and do not change while it runs. */
const loaded = new Map<string, string>();

/**
 * Reads a tool's description from `descriptions/<name>.txt` beside this module, once per
 * process (tools are built for every turn). Descriptions live in their own text files so they
 * can be edited as prose. The build copies them next to the compiled module.
 * @throws Error naming the file when it is missing.
 */
export function loadToolDescription(name: string): string {
  const known = loaded.get(name);
  if (known !== undefined) return known;
  const file = fileURLToPath(new URL(`./descriptions/${name}.txt`, import.meta.url));
  try {
    const description = readFileSync(file, 'utf8').trim();
    loaded.set(name, description);
    return description;
  } catch (error) {
    throw new Error(`tool description for "${name}" is missing: ${file} (${(error as Error).message})`, { cause: error });
  }
}
