/**
 * `openvaala export <conversation>` and `openvaala import FILE` / `import --from codex
 * ROLLOUT` (SPEC §2; docs/storage.md, "Export and import"). Both go through the local runtime
 * server (started in the background when none runs, like `openvaala conversations`): it owns
 * the logs and the index, so an import never races its writes and works on every storage
 * backend, and an export of a conversation in use reads what the server has stored.
 */
import { resumeCommand, serverDirectories } from '../client/resume-command.js';
import { existsSync, readFileSync } from 'node:fs';
import { RuntimeClientError } from '../client/runtime-client.js';
import type { OpenVaalaPaths } from '../config/paths.js';
import { serializeArchive, type ConversationArchive } from '../dao/conversation-archive.js';
import { convertCodexRollout } from '../dao/codex-rollout.js';
import { ErrorCodes, MAX_MESSAGE_BYTES } from '../protocol/index.js';
import { resolveConversationId } from './conversation-reference.js';
import { requireExistingDirectory } from './data-dir-option.js';
import { formatLogDamage } from './log-damage-output.js';
import type { OutputStreams } from './exec-output.js';
import { UsageError } from './usage-error.js';
import { withLocalServer } from './local-server-client.js';

/** Sources `import --from` understands. */
export const IMPORT_SOURCES = ['codex'] as const;

/**
 * Writes a conversation's archive to stdout.
 * @param reference an id, a unique id prefix, or `last`
 * @throws UsageError when no conversation fits the reference
 */
export async function runExport(paths: OpenVaalaPaths, reference: string, options: { requireConfigDir: boolean }, streams: OutputStreams): Promise<number> {
  const result = await withLocalServer(paths, options.requireConfigDir, 'openvaala-transfer', async (client) => client.request('conversation/export', { conversationId: await resolveConversationId(client, reference) }));
  await new Promise<void>((resolve, reject) => streams.stdout.write(result.archive, (error) => (error ? reject(error) : resolve())));
  streams.stderr.write(formatLogDamage(result.damage, paths.dataDir));
  streams.stderr.write(`exported conversation ${result.conversationId} (${Buffer.byteLength(result.archive)} bytes)\n`);
  return 0;
}

/** Options of {@link runImport}. */
export interface ImportOptions {
  /** Read a rollout of another tool instead of an OpenVaala archive. */
  from?: string;
  /** With `from`: the model and agent to continue with (default: the server's default agent and its model). */
  model?: string;
  agent?: string;
  /** With `from`: the working directory (default: the one the rollout recorded). */
  cwd?: string;
  /** Store a copy under new ids, also when the conversation is stored on the server already. */
  asNew?: boolean;
  requireConfigDir: boolean;
}

function readInput(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
}

/**
 * Imports an archive (or with `from: "codex"`, a Codex session rollout) into the local
 * server and prints the new conversation's id.
 * @throws UsageError for an unreadable file, an unknown source, `--model`/`--agent`/`--cwd` without `--from`, an agent not defined or a model not named `<provider>/<model-id>`, a rollout or archive that is not valid (naming the line), an archive too large for one protocol message, or a conversation stored on the server already without `asNew` (naming it and its title)
 */
export async function runImport(paths: OpenVaalaPaths, file: string, options: ImportOptions, streams: OutputStreams): Promise<number> {
  if (options.from !== undefined && !(IMPORT_SOURCES as readonly string[]).includes(options.from)) throw new UsageError(`--from: unknown source "${options.from}" (known: ${IMPORT_SOURCES.join(', ')})`);
  if (options.from === undefined) {
    const given = (['model', 'agent', 'cwd'] as const).filter((option) => options[option] !== undefined);
    if (given.length > 0) throw new UsageError(`--${given[0]} only applies with --from (an OpenVaala archive keeps its own sessions' models, agents and work location)`);
  }
  const text = readInput(file);
  if (text.trim() === '') throw new UsageError(`${file}: the file is empty; ${options.from === 'codex' ? 'a Codex rollout' : 'an archive (from openvaala export)'} holds one JSON object per line`);
  let directories: { dataDir: string; configDir: string } = paths;
  const outcome = await withLocalServer(paths, options.requireConfigDir, 'openvaala-transfer', async (client, server) => {
    directories = serverDirectories(server, paths);
    let archive = text;
    if (options.from === 'codex') {
      const [{ agents, defaultAgent }, { defaultModel, models }] = await Promise.all([client.request('agents/list', {}), client.request('models/list', {})]);
      const agent = options.agent ?? defaultAgent;
      // Checked here, as exec checks them: an imported session naming either wrongly fails every later turn.
      if (!agents.some((entry) => entry.name === agent)) throw new UsageError(`--agent: agent "${agent}" is not defined in agents.yaml (defined: ${agents.map((entry) => entry.name).join(', ') || 'none'})`);
      if (options.model !== undefined && !/^[^/\s]+\/\S+$/.test(options.model)) throw new UsageError(`--model: "${options.model}" must be named "<provider>/<model-id>"`);
      const model = options.model ?? agents.find((entry) => entry.name === agent)?.model ?? defaultModel;
      if (!model) throw new UsageError('no default model is configured: give --model provider/model');
      // A provider may serve models it does not list, so an unlisted one is warned about, not refused.
      const provider = model.split('/')[0] ?? '';
      const providers = [...new Set(models.map((entry) => entry.provider))];
      if (options.model !== undefined && !providers.includes(provider)) {
        streams.stderr.write(`warning: --model ${options.model}: no configured provider "${provider}" lists models (providers listing models: ${providers.join(', ') || 'none'}); the conversation's turns fail until it is in providers.yaml (resume with --model to use another)\n`);
      }
      // The conversation continues there: a mistyped --cwd is refused, as exec refuses one.
      requireExistingDirectory('--cwd', options.cwd, 'give the working directory the conversation continues in');
      let converted: ConversationArchive;
      try {
        converted = convertCodexRollout(text, { agent, model, ...(options.cwd !== undefined ? { cwd: options.cwd } : {}) });
      } catch (error) {
        throw new UsageError(`${file}: ${(error as Error).message}`);
      }
      const recorded = archiveWorkingDirectory(converted);
      if (options.cwd === undefined && recorded !== undefined && !existsSync(recorded)) {
        streams.stderr.write(`warning: the rollout's working directory ${recorded} does not exist here; its turns will fail until it does (import with --cwd to continue elsewhere)\n`);
      }
      archive = serializeArchive(converted);
    }
    // Inside the request the archive is a JSON string: its quotes and backslashes are escaped.
    const messageBytes = Buffer.byteLength(JSON.stringify(archive)) + 200;
    if (messageBytes > MAX_MESSAGE_BYTES) throw new UsageError(`${file}: the archive makes an import request of ${messageBytes} bytes; one request carries at most ${MAX_MESSAGE_BYTES} bytes (16 MiB)`);
    try {
      return await client.request('conversation/import', { archive, ...(options.asNew ? { asNew: true } : {}) });
    } catch (error) {
      if (error instanceof RuntimeClientError && error.code === ErrorCodes.invalidParams) throw new UsageError(`${file}: ${error.message.replace(/^conversation\/import: params\.archive: /, '')}`);
      if (error instanceof RuntimeClientError && error.code === ErrorCodes.conflict && (error.data as { reason?: unknown } | undefined)?.reason === 'conversation_exists') {
        // The server's message names the protocol's `asNew`; here the user's option is --as-new.
        throw new UsageError(`${file}: ${error.message.replace(/^conversation\/import: /, '').replace(/; import with asNew .*$/, '; give --as-new to import a copy under new ids')}`);
      }
      throw error;
    }
  });
  const id = outcome.conversation.id;
  streams.stdout.write(`${id}\n`);
  const renamed = outcome.renamed ? ` (a copy of conversation ${outcome.archivedConversationId}, under new ids)` : '';
  streams.stderr.write(`imported "${outcome.conversation.title}" as ${id}: ${outcome.items} items, ${outcome.attachments} attachments${renamed}\ncontinue it with: ${resumeCommand('exec', id, directories)}\n`);
  return 0;
}

/** The working directory an archive's conversation records (its first work location), if any. */
function archiveWorkingDirectory(archive: ConversationArchive): string | undefined {
  for (const entry of archive.streams.find((stream) => stream.stream === 'metadata')?.entries ?? []) {
    const value = entry.value as { type?: string; conversation?: { workLocation?: { cwd?: string }[] } };
    if (value.type === 'conversation') return value.conversation?.workLocation?.[0]?.cwd;
  }
  return undefined;
}
