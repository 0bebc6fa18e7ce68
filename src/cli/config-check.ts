/**
 * `openvaala config check` (SPEC §2): loads and validates the whole configuration directory
 * and prints every problem with its file, line and key path.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { CONFIGURATION_FILES, ConfigurationError, loadConfiguration } from '../config/configuration.js';
import type { OutputStreams } from './exec-output.js';

/**
 * Validates the configuration directory.
 * @returns exit code: 0 valid, 1 invalid
 */
export async function runConfigCheck(configDir: string, streams: OutputStreams): Promise<number> {
  if (!existsSync(configDir)) {
    streams.stdout.write(`${configDir}: no configuration directory; the built-in defaults apply (no providers configured)\n`);
    return 0;
  }
  try {
    const configuration = await loadConfiguration(configDir);
    const providers = Object.keys(configuration.providers.providers);
    const agents = Object.keys(configuration.agents.agents);
    streams.stdout.write(
      `${configDir}: valid (${Object.values(CONFIGURATION_FILES).map((file) => file.fileName).filter((name) => existsSync(path.join(configDir, name))).join(', ') || 'no files: built-in defaults'})\n` +
        `  providers: ${providers.join(', ') || 'none'}; default model: ${configuration.providers.defaultModel ?? 'not set'}\n` +
        `  agents: ${agents.join(', ')}\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    streams.stderr.write(`${error.message}\n${error.errors.reduce((count, fileError) => count + fileError.problems.length, 0)} problem(s) in ${configDir}\n`);
    return 1;
  }
}
