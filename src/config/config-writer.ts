/**
 * Writes configuration the way SPEC §8 asks: edit the YAML files (changing only the text of
 * the edited values, so comments, blank lines, line endings, indentation and quoting of
 * everything else stay byte for byte; see `yaml-edit.ts`), load the result, and restore the
 * old files byte for byte if that load fails.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { isMap, isScalar, parseDocument } from 'yaml';
import { decodeConfigText } from './config-text.js';
import { editYamlText } from './yaml-edit.js';
import { CONFIGURATION_FILES, loadConfiguration, type Configuration, type ConfigurationFileKey } from './configuration.js';
import { writeFileAtomically } from '../write-file-atomically.js';
import { formatKeyPath } from '../key-path.js';

/** One change: set (or remove) the value at a key path of one file. */
export interface ConfigurationChange {
  file: ConfigurationFileKey;
  /** Key path inside the file, e.g. `['providers', 'openai', 'apiKey']`. */
  path: (string | number)[];
  /** The new value (ignored with `remove`). */
  value?: unknown;
  /** Removes the key instead of setting it. */
  remove?: boolean;
}

/** A change that could not be applied; nothing was written (or everything was restored). */
export class ConfigurationUpdateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConfigurationUpdateError';
  }
}

async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Applies changes to the files of a configuration directory and loads the result.
 * The caller serialises calls (one writer at a time); each call re-reads the files, so a
 * change made meanwhile by someone else is kept, not overwritten with a stale copy.
 * @param accept called with the loaded result before it is returned; when it throws, the files
 *   are restored as for a result that does not load
 * @returns the configuration loaded after the change
 * @throws ConfigurationUpdateError naming the file and key path when a path cannot be set,
 *   or with the load's problems when the result does not validate (the files are then
 *   restored byte for byte)
 */
export async function updateConfigurationFiles(configDir: string, changes: ConfigurationChange[], accept?: (configuration: Configuration) => void | Promise<void>): Promise<Configuration> {
  const files = [...new Set(changes.map((change) => change.file))];
  const originals = new Map<ConfigurationFileKey, Buffer | undefined>();
  const edited = new Map<ConfigurationFileKey, string>();
  for (const key of files) {
    const fileSpec = CONFIGURATION_FILES[key];
    if (!fileSpec) throw new ConfigurationUpdateError(`unknown configuration file "${String(key)}" (known: ${Object.keys(CONFIGURATION_FILES).join(', ')})`);
    const file = path.join(configDir, fileSpec.fileName);
    const original = await readIfExists(file);
    originals.set(key, original);
    const decoded = decodeConfigText(original ?? new Uint8Array());
    const problem = decoded.problems[0];
    if (problem) throw new ConfigurationUpdateError(`${file}:${problem.line}: cannot edit the file: ${problem.message}`);
    let text = decoded.text;
    const document = parseDocument(text);
    if (document.errors.length > 0) throw new ConfigurationUpdateError(`${file}: cannot edit a file that does not parse: ${document.errors[0]?.message}`);
    if (!isMap(document.contents) && document.contents !== null && !(isScalar(document.contents) && document.contents.value === null)) {
      throw new ConfigurationUpdateError(`${file}: the top level must be a mapping`);
    }
    for (const change of changes.filter((entry) => entry.file === key)) {
      if (change.path.length === 0) throw new ConfigurationUpdateError(`${file}: a change needs a key path`);
      try {
        text = editYamlText(text, change.path, change);
      } catch (error) {
        throw new ConfigurationUpdateError(`${file}: ${formatKeyPath(change.path)}: ${(error as Error).message}`, { cause: error });
      }
    }
    edited.set(key, text);
  }
  for (const [key, text] of edited) await writeFileAtomically(path.join(configDir, CONFIGURATION_FILES[key].fileName), text);
  try {
    const configuration = await loadConfiguration(configDir);
    await accept?.(configuration);
    return configuration;
  } catch (error) {
    for (const [key, original] of originals) {
      const file = path.join(configDir, CONFIGURATION_FILES[key].fileName);
      if (original === undefined) await rm(file, { force: true });
      else await writeFileAtomically(file, original);
    }
    throw new ConfigurationUpdateError(`the change was not applied, the files are restored:\n${(error as Error).message}`, { cause: error });
  }
}
