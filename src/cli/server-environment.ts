/**
 * Tells when a running server lacks an environment variable that the client has: a server
 * keeps the environment it was started with, so a key exported after it started (by the first
 * `exec`, which starts it in the background) never reaches it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { RuntimeClient } from '../client/runtime-client.js';
import type { ServerInfo } from '../server/server-info.js';
import { commandLine, serverDirectories } from '../client/resume-command.js';
import { localDateTime } from '../client/time-text.js';

/**
 * The `apiKey` reference of the provider a run will use, read from `providers.yaml` without
 * validating the whole file (the server validates it and reports its problems; the client only
 * needs two fields, and skipping the configuration schemas keeps `exec` small and quick).
 * @returns undefined when the file is missing or unreadable, or names no such provider
 */
function providerKeyReference(configDir: string, modelName: string | undefined): { providerName: string; apiKey: string } | undefined {
  let document: unknown;
  try {
    document = parse(readFileSync(path.join(configDir, 'providers.yaml'), 'utf8'));
  } catch {
    return undefined;
  }
  const record = (value: unknown) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined);
  const file = record(document);
  const defaultModel = typeof file?.defaultModel === 'string' ? file.defaultModel : undefined;
  const providerName = (modelName ?? defaultModel)?.split('/')[0];
  const apiKey = providerName ? record(record(file?.providers)?.[providerName])?.apiKey : undefined;
  return providerName && typeof apiKey === 'string' ? { providerName, apiKey } : undefined;
}

/**
 * Checks the key of the provider a run will use (`modelName`, else `defaultModel` of the
 * client's `providers.yaml`). When it is `env:NAME`, this process has NAME, the server does not
 * and no key is stored for the provider, the run would fail: says why and what to do.
 * @returns the explanation, or undefined when nothing is missing (or it cannot be told)
 */
export async function missingServerEnvironment(client: RuntimeClient, server: ServerInfo, configDir: string, modelName: string | undefined, environment: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  // A broken file is the server's to report, with its line and key.
  const reference = providerKeyReference(configDir, modelName);
  if (!reference?.apiKey.startsWith('env:')) return undefined;
  const { providerName, apiKey } = reference;
  const variable = apiKey.slice(4);
  if (!environment[variable]) return undefined;
  try {
    // Imported only here: the credentials module builds a zod schema, which a client whose
    // provider needs no environment variable never has to load.
    const { readStoredApiKey } = await import('../config/credentials.js');
    if (readStoredApiKey(configDir, providerName) !== undefined) return undefined;
  } catch {
    // An unreadable credentials file does not hold a usable key either.
  }
  let status;
  try {
    status = await client.request('server/status', { environment: [variable] });
  } catch {
    return undefined;
  }
  if (status.environment[variable]) return undefined;
  const started = localDateTime(server.startedAt, { seconds: true });
  const directories = serverDirectories(server, { dataDir: server.dataDir, configDir });
  return (
    `the runtime server (pid ${server.pid}, started ${started}) does not have ${variable}, which providers.yaml names for provider "${providerName}" ` +
    `(providers.${providerName}.apiKey) and which this shell sets: a server keeps the environment it was started with. ` +
    `Restart it with this environment: ${commandLine(['server', 'restart'], directories, environment)} ` +
    `(or store the key: ${commandLine(['auth', 'set', providerName], { configDir: directories.configDir }, environment)})`
  );
}

/**
 * Why the server's configuration may not be what the files say: the last reload of the
 * configuration directory failed (a file edited while the server runs, with a mistake), so the
 * server keeps the previous configuration (docs/configuration.md). `config/get` carries the
 * reload's error; the returned warning names it. Undefined when the last reload worked, or the
 * server cannot say.
 */
export async function configurationReloadWarning(client: RuntimeClient): Promise<string | undefined> {
  try {
    const { error } = await client.request('config/get', {});
    return error === undefined ? undefined : `warning: the server could not reload its configuration and keeps the previous one until the files are fixed: ${error}`;
  } catch {
    return undefined;
  }
}
