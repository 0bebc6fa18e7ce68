/**
 * Tells when a running server lacks an environment variable that the client has: a server
 * keeps the environment it was started with, so a key exported after it started (by the first
 * `exec`, which starts it in the background) never reaches it.
 */
import type { RuntimeClient } from '../client/runtime-client.js';
import { readStoredApiKey } from '../config/credentials.js';
import { loadProvidersFile } from '../config/providers.js';
import type { ServerInfo } from '../server/server-info.js';

/**
 * Checks the key of the provider a run will use (`modelName`, else `defaultModel` of the
 * client's `providers.yaml`). When it is `env:NAME`, this process has NAME, the server does not
 * and no key is stored for the provider, the run would fail: says why and what to do.
 * @returns the explanation, or undefined when nothing is missing (or it cannot be told)
 */
export async function missingServerEnvironment(client: RuntimeClient, server: ServerInfo, configDir: string, modelName: string | undefined, environment: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  let providers;
  try {
    providers = await loadProvidersFile(configDir);
  } catch {
    // A broken file is the server's to report, with its line and key.
    return undefined;
  }
  const providerName = (modelName ?? providers.defaultModel)?.split('/')[0];
  const apiKey = providerName ? providers.providers[providerName]?.apiKey : undefined;
  if (!providerName || !apiKey?.startsWith('env:')) return undefined;
  const variable = apiKey.slice(4);
  if (!environment[variable]) return undefined;
  try {
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
  const started = new Date(server.startedAt).toLocaleString();
  return (
    `the runtime server (pid ${server.pid}, started ${started}) does not have ${variable}, which providers.yaml names for provider "${providerName}" ` +
    `(providers.${providerName}.apiKey) and which this shell sets: a server keeps the environment it was started with. ` +
    `Restart it with this environment: openvaala server restart (or store the key: openvaala auth set ${providerName})`
  );
}
