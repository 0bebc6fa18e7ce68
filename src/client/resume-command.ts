/**
 * The command a person runs to continue a conversation, as the command line and the terminal
 * UI print it when they end. It names the data and configuration directories when they are not
 * the ones found without options: the same command without them would look for the
 * conversation in the default data directory and not find it.
 */
import { resolvePaths, type OpenVaalaPaths } from '../config/paths.js';

/** Characters a POSIX shell word may hold without quotes. */
const PLAIN_WORD = /^[\w@%+=:,./-]+$/;

function shellWord(text: string): string {
  return PLAIN_WORD.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A command line to print for a person to run: `openvaala <words…>` followed by `--data-dir`
 * and `--config-dir` for each of `paths` that is not the default of `environment`, so that it
 * acts on the same server and files as the command that printed it.
 * @param words the command and its arguments (each quoted for a POSIX shell when it needs it)
 * @param paths the directories the command must use; `dataDir` is left out for a command that
 *   takes only `--config-dir` (`auth set`)
 * @param environment where the defaults come from (XDG variables; `process.env` by default)
 */
export function commandLine(words: string[], paths: { dataDir?: string; configDir: string }, environment: NodeJS.ProcessEnv = process.env): string {
  const defaults = resolvePaths({}, environment);
  const options = [
    ...(paths.dataDir !== undefined && paths.dataDir !== defaults.dataDir ? [`--data-dir ${shellWord(paths.dataDir)}`] : []),
    ...(paths.configDir !== defaults.configDir ? [`--config-dir ${shellWord(paths.configDir)}`] : []),
  ];
  return ['openvaala', ...words.map(shellWord), ...options].join(' ');
}

/**
 * `openvaala exec --resume <id> "…"` (or `openvaala tui --resume <id>`), with `--data-dir` and
 * `--config-dir` when `paths` are not the defaults of `environment`.
 * @param client the command that continues it
 * @param conversationId the conversation's id
 * @param paths the directories of the server the conversation is in
 * @param environment where the defaults come from (XDG variables; `process.env` by default)
 */
export function resumeCommand(client: 'exec' | 'tui', conversationId: string, paths: Pick<OpenVaalaPaths, 'dataDir' | 'configDir'>, environment: NodeJS.ProcessEnv = process.env): string {
  return `${commandLine([client], paths, environment)} --resume ${shellWord(conversationId)}${client === 'exec' ? ' "…"' : ''}`;
}

/**
 * The directories of the server a client used, for the commands it prints for a person to run
 * next: its data directory, and the configuration directory the server was started with (its
 * server record's `configDir`), since a command without `--config-dir` may have found a server
 * started with another one.
 * @param server the server record the client found (`configDir` absent in records of old servers)
 * @param paths the directories the client resolved from its options
 */
export function serverDirectories(server: { configDir?: string }, paths: Pick<OpenVaalaPaths, 'dataDir' | 'configDir'>): { dataDir: string; configDir: string } {
  return { dataDir: paths.dataDir, configDir: server.configDir ?? paths.configDir };
}
