/**
 * `openvaala config check` (SPEC §2): loads and validates the configuration directory and
 * prints every problem with its file, line and key path.
 */
import { loadProvidersFile, PROVIDERS_FILE } from '../config/providers.js';
import { ConfigError } from '../config/yaml-file.js';
import type { OutputStreams } from './exec-output.js';

/**
 * Validates the configuration directory.
 * @returns exit code: 0 valid, 1 invalid
 */
export async function runConfigCheck(configDir: string, streams: OutputStreams): Promise<number> {
  try {
    const providers = await loadProvidersFile(configDir);
    const names = Object.keys(providers.providers);
    streams.stdout.write(`${configDir}: ${PROVIDERS_FILE}: ${names.length} providers (${names.join(', ') || 'none'}); default model ${providers.defaultModel ?? 'not set'}\n`);
    return 0;
  } catch (error) {
    streams.stderr.write(`${error instanceof ConfigError ? error.message : `${configDir}: ${(error as Error).message}`}\n`);
    return 1;
  }
}
