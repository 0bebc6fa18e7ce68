/**
 * The API key of a configured provider, looked up the way a turn looks it up: the model
 * registry uses it for every model call, and `config check` to warn about a key a server
 * started from its shell could not find.
 */
import { CREDENTIALS_FILE, CredentialsFileError, readStoredApiKey } from './credentials.js';
import { MissingSecretError, resolveSecret, type ProviderConfig } from './providers.js';

/**
 * The API key of a provider: a literal `apiKey`; else the variable `apiKey: env:NAME` names
 * when it is set; else the key stored by `openvaala auth set` (`credentials.json`); else none
 * (the provider's SDK may still read its own variable, e.g. `OPENAI_API_KEY`).
 * @param configDir the configuration directory holding `credentials.json`; undefined: no stored keys
 * @throws MissingSecretError when `env:NAME` is unset and no key is stored (naming both ways to
 *   give one), or when the stored keys cannot be read (its `cause` is the CredentialsFileError)
 */
export function resolveProviderApiKey(providerName: string, provider: Pick<ProviderConfig, 'apiKey'>, configDir: string | undefined): string | undefined {
  const stored = (): string | undefined => {
    if (!configDir) return undefined;
    try {
      return readStoredApiKey(configDir, providerName);
    } catch (error) {
      // The user's file to repair, told to the client as it is (without the server's paths), not an internal error.
      if (error instanceof CredentialsFileError) throw new MissingSecretError(`the API key of provider "${providerName}" cannot be looked up: the stored keys (${CREDENTIALS_FILE} in the server's configuration directory) ${error.unreadable ? 'cannot be read' : 'are damaged'}: ${error.problem}; repair the file, or move it aside and store the key again with: openvaala auth set ${providerName}`, { cause: error });
      throw error;
    }
  };
  if (provider.apiKey === undefined) return stored();
  const where = `providers.yaml: providers.${providerName}.apiKey`;
  try {
    return resolveSecret(provider.apiKey, where);
  } catch (error) {
    const key = stored();
    if (key !== undefined) return key;
    throw new MissingSecretError(`${(error as Error).message}, and no key is stored for provider "${providerName}" (store one with: openvaala auth set ${providerName})`, { cause: error });
  }
}
