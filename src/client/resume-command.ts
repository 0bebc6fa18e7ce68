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
 * `openvaala exec --resume <id> "…"` (or `openvaala tui --resume <id>`), with `--data-dir` and
 * `--config-dir` when `paths` are not the defaults of `environment`.
 * @param client the command that continues it
 * @param conversationId the conversation's id
 * @param paths the directories of the server the conversation is in
 * @param environment where the defaults come from (XDG variables; `process.env` by default)
 */
export function resumeCommand(client: 'exec' | 'tui', conversationId: string, paths: Pick<OpenVaalaPaths, 'dataDir' | 'configDir'>, environment: NodeJS.ProcessEnv = process.env): string {
  const defaults = resolvePaths({}, environment);
  const options = [
    ...(paths.dataDir !== defaults.dataDir ? [`--data-dir ${shellWord(paths.dataDir)}`] : []),
    ...(paths.configDir !== defaults.configDir ? [`--config-dir ${shellWord(paths.configDir)}`] : []),
  ];
  return ['openvaala', client, ...options, '--resume', conversationId, ...(client === 'exec' ? ['"…"'] : [])].join(' ');
}
