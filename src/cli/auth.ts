/**
 * `openvaala auth set | remove | list`: API keys stored in `credentials.json` of the
 * configuration directory (mode 0600), so a key need not be exported in every shell nor reach
 * a server that was started before it was exported. See `src/config/credentials.ts` for when a
 * stored key is used.
 */
import { updateConfigurationFiles, type ConfigurationChange } from '../config/config-writer.js';
import { readCredentials, removeApiKey, storeApiKey } from '../config/credentials.js';
import { loadProvidersFile, type ProvidersFile } from '../config/providers.js';
import type { OutputStreams } from './exec-output.js';
import { UsageError } from './usage-error.js';
import { commandLine } from '../client/resume-command.js';

/** Providers `auth set` adds to an empty `providers.yaml`, with the default model it sets. */
const WELL_KNOWN_PROVIDERS: Record<string, { kind: 'openai' | 'anthropic' | 'google'; defaultModel: string }> = {
  openai: { kind: 'openai', defaultModel: 'openai/gpt-5.5' },
  anthropic: { kind: 'anthropic', defaultModel: 'anthropic/claude-sonnet-4-5' },
  google: { kind: 'google', defaultModel: 'google/gemini-2.5-pro' },
};

/**
 * Reads a secret from the terminal without echoing it: raw mode, characters kept until Enter.
 * Backspace erases; Ctrl-C or Ctrl-D on an empty line gives up.
 * @throws UsageError when given up
 */
export function readSecretFromTerminal(question: string, input: NodeJS.ReadStream, output: NodeJS.WritableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let secret = '';
    const finish = (error?: Error) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      output.write('\n');
      if (error) reject(error);
      else resolve(secret);
    };
    const onData = (chunk: Buffer) => {
      for (const character of chunk.toString('utf8')) {
        if (character === '\r' || character === '\n') return finish();
        if (character === '\u0003' || (character === '\u0004' && secret === '')) return finish(new UsageError('no key given'));
        if (character === '\u007f' || character === '\b') secret = secret.slice(0, -1);
        else if (character >= ' ') secret += character;
      }
    };
    // Echo off before the question shows: a key typed as soon as it shows is never echoed.
    input.setRawMode(true);
    output.write(question);
    input.resume();
    input.on('data', onData);
  });
}

async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Stores a provider's key, read from the terminal (not echoed) or from stdin when it is not a
 * terminal. When `providers.yaml` does not define the provider and it is one of openai,
 * anthropic, google, it is added (and made the default model's provider when there is none).
 * @returns 0
 * @throws UsageError for an empty key or a key with spaces or line breaks inside
 */
export async function runAuthSet(configDir: string, providerName: string, streams: OutputStreams, input: NodeJS.ReadStream = process.stdin): Promise<number> {
  if (!/^[A-Za-z0-9_.-]+$/.test(providerName)) throw new UsageError(`provider "${providerName}": provider names use letters, digits, ".", "_" and "-"`);
  const raw = input.isTTY ? await readSecretFromTerminal(`API key for provider "${providerName}" (not shown): `, input, streams.stderr) : await readAll(input);
  const key = raw.trim();
  if (key === '') throw new UsageError('no key given (type it at the prompt, or pipe it on stdin)');
  if (/\s/.test(key)) throw new UsageError('the key contains spaces or line breaks; give the key alone');
  const file = storeApiKey(configDir, providerName, key);
  streams.stdout.write(`stored the key of provider "${providerName}" in ${file} (readable by you only); a running server uses it from its next turn\n`);
  let providers: ProvidersFile | undefined;
  try {
    providers = await loadProvidersFile(configDir);
  } catch (error) {
    // The problems one per line, after the command that lists them all for this directory.
    streams.stderr.write(`note: providers.yaml cannot be read; fix it with: ${commandLine(['config', 'check'], { configDir })}\n${(error as Error).message.replace(/\n+$/, '')}\n`);
    return 0;
  }
  const configured = providers.providers[providerName];
  const known = WELL_KNOWN_PROVIDERS[providerName];
  if (!configured && known) {
    const changes: ConfigurationChange[] = [{ file: 'providers', path: ['providers', providerName], value: { kind: known.kind } }];
    if (!providers.defaultModel) changes.push({ file: 'providers', path: ['defaultModel'], value: known.defaultModel });
    try {
      await updateConfigurationFiles(configDir, changes);
      streams.stdout.write(`added provider "${providerName}" (kind ${known.kind}) to providers.yaml${providers.defaultModel ? '' : ` with defaultModel ${known.defaultModel}`}\n`);
    } catch (error) {
      streams.stderr.write(`note: could not add provider "${providerName}" to providers.yaml: ${(error as Error).message}\n`);
    }
  } else if (!configured) {
    streams.stderr.write(`note: providers.yaml defines no provider "${providerName}"; the key is used once one is added under providers\n`);
  } else if (configured.apiKey && !configured.apiKey.startsWith('env:')) {
    streams.stderr.write(`note: providers.yaml gives provider "${providerName}" an apiKey of its own, which is used instead of the stored key\n`);
  } else if (configured.apiKey) {
    streams.stdout.write(`providers.yaml reads this provider's key from ${configured.apiKey.slice(4)}; the stored key is used when that variable is not set\n`);
  }
  return 0;
}

/** Removes a provider's stored key. @returns 0, or 1 when none was stored */
export function runAuthRemove(configDir: string, providerName: string, streams: OutputStreams): number {
  if (!removeApiKey(configDir, providerName)) {
    streams.stderr.write(`openvaala: auth remove: no key is stored for provider "${providerName}"\n`);
    return 1;
  }
  streams.stdout.write(`removed the stored key of provider "${providerName}"\n`);
  return 0;
}

/** Lists the providers that have a stored key (never the keys). */
export function runAuthList(configDir: string, streams: OutputStreams): number {
  const names = Object.keys(readCredentials(configDir).providers).sort();
  if (names.length === 0) streams.stderr.write(`no keys stored (store one with: ${commandLine(['auth', 'set'], { configDir })} <provider>)\n`);
  for (const name of names) streams.stdout.write(`${name}\n`);
  return 0;
}
