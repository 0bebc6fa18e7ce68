/**
 * Stored API keys: `credentials.json` in the configuration directory, readable by its owner
 * only (mode 0600), written by `openvaala auth set <provider>`.
 *
 * ```json
 * { "providers": { "openai": { "apiKey": "sk-..." } } }
 * ```
 *
 * A provider of `providers.yaml` uses its stored key when it has no `apiKey`, or when its
 * `apiKey: env:NAME` names a variable that is not set. The file is read each time a key is
 * needed, so a key stored while the server runs is used from the next turn on.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { makeDirectorySync } from '../make-directory.js';
import { writeFileAtomicallySync } from '../write-file-atomically.js';
import { jsonSyntaxProblem } from '../printable-text.js';
import { formatKeyPath } from '../key-path.js';

/** File name of the stored keys inside the configuration directory. */
export const CREDENTIALS_FILE = 'credentials.json';

const CredentialsSchema = z.object({
  providers: z.record(z.string(), z.object({ apiKey: z.string().min(1) })),
});
/** Contents of `credentials.json`. */
export type Credentials = z.infer<typeof CredentialsSchema>;

/** Path of `credentials.json` in a configuration directory. */
export function credentialsFile(configDir: string): string {
  return path.join(configDir, CREDENTIALS_FILE);
}

/** `credentials.json` cannot be read or is not a valid keys file; {@link problem} says why (without the path). */
export class CredentialsFileError extends Error {
  /**
   * @param unreadable true when the file could not be read at all (permissions, a directory),
   *   false when it was read but holds no valid keys
   */
  constructor(
    readonly file: string,
    readonly problem: string,
    readonly unreadable: boolean,
    options?: ErrorOptions,
  ) {
    super(`${file}: ${problem}`, options);
    this.name = 'CredentialsFileError';
  }
}

/**
 * Reads the stored keys.
 * @returns `{ providers: {} }` when the file does not exist
 * @throws CredentialsFileError naming the file and the problem when it cannot be read or is not valid
 */
export function readCredentials(configDir: string): Credentials {
  const file = credentialsFile(configDir);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { providers: {} };
    throw new CredentialsFileError(file, `cannot read: ${(error as Error).message}`, true, { cause: error });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CredentialsFileError(file, `not valid JSON: ${jsonSyntaxProblem(error)}`, false, { cause: error });
  }
  const parsed = CredentialsSchema.safeParse(value);
  if (!parsed.success) {
    throw new CredentialsFileError(file, parsed.error.issues.map((issue) => `${formatKeyPath(issue.path) || '(root)'}: ${issue.message}`).join('; '), false);
  }
  return parsed.data;
}

/** The stored key of one provider, if any. @throws CredentialsFileError when the file cannot be read or is not valid */
export function readStoredApiKey(configDir: string, providerName: string): string | undefined {
  return readCredentials(configDir).providers[providerName]?.apiKey;
}

/**
 * Replaces the file whole (temporary file, flushed, renamed over it), mode 0600 whatever the
 * old file's mode was: a crash or a full disk never leaves half of it, which would lose every key.
 */
function writeCredentials(file: string, credentials: unknown): void {
  writeFileAtomicallySync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Stores (or replaces) one provider's key, keeping the others. Written to a temporary file
 * with mode 0600 and renamed over the old one, so a reader never sees half a file.
 * @throws Error when the existing file is not valid (it is left as it is)
 */
export function storeApiKey(configDir: string, providerName: string, apiKey: string): string {
  const credentials = readCredentials(configDir);
  credentials.providers[providerName] = { apiKey };
  makeDirectorySync(configDir, 0o700);
  const file = credentialsFile(configDir);
  writeCredentials(file, credentials);
  return file;
}

/** Removes one provider's key. @returns false when none was stored */
export function removeApiKey(configDir: string, providerName: string): boolean {
  const credentials = readCredentials(configDir);
  if (!credentials.providers[providerName]) return false;
  delete credentials.providers[providerName];
  writeCredentials(credentialsFile(configDir), credentials);
  return true;
}
