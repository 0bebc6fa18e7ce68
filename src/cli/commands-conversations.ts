/**
 * The commands that read and move stored conversations: `conversations`, `export`, `import`.
 * Each command's module is imported when that command runs.
 */
import path from 'node:path';
import type { Command } from 'commander';
import type { TopLevelCommand } from './program.js';
import { resolvePaths } from '../config/paths.js';
import { run, streams } from './command-runner.js';
import { requireExistingDataDir } from './data-dir-option.js';
import { existingConfigDirectory, integer } from './option-values.js';
import { reportUnknownCommand } from './unknown-command.js';
/** Declares `openvaala conversations list|search|show`. */
function declareConversations(program: Command): void {
  const conversations = program.command('conversations').description('list, search and show stored conversations');
  const conversationOptions = (command: Command) =>
    command.option('--json', 'print JSON', false).option('--data-dir <dir>', 'data directory of the server to use').option('--config-dir <dir>', 'configuration directory of the server to use', existingConfigDirectory);
  type ListOptions = { limit: number; json: boolean; dataDir?: string; configDir?: string; query?: string };
  conversationOptions(
    conversations
      .command('list', { isDefault: true })
      .description('list conversations, most recently updated first')
      .option('--query <text>', 'only conversations whose title or messages match (words, "phrases", prefix*, AND, OR, NOT)')
      .option('--limit <n>', 'how many to list', integer('--limit', 1, 500), 20)
      // `list` is the default, so `conversations lst` reaches it: name the mistyped word, not "too many arguments".
      .allowExcessArguments(true),
  ).action(async (options: ListOptions, command: Command) => {
    const [word, ...rest] = command.args;
    if (word !== undefined) {
      if (conversations.args[0] === 'list') command.error(`error: too many arguments for 'list'. Expected 0 arguments but got ${command.args.length}.`);
      reportUnknownCommand(conversations, word, rest);
    }
    await run('conversations', async () => {
      requireExistingDataDir(options.dataDir, 'lists stored conversations');
      return (await import('./conversations.js')).runConversationList(resolvePaths(options), { ...options, requireConfigDir: options.configDir !== undefined }, streams);
    });
  });
  conversationOptions(
    conversations
      .command('search')
      .description('list the conversations whose title or messages match a full-text query')
      .argument('<query>', 'words, "phrases", prefix*, AND, OR, NOT')
      .option('--limit <n>', 'how many to list', integer('--limit', 1, 500), 20),
  ).action(async (query: string, options: ListOptions) => {
    await run('conversations search', async () => {
      requireExistingDataDir(options.dataDir, 'searches stored conversations');
      return (await import('./conversations.js')).runConversationList(resolvePaths(options), { ...options, query, requireConfigDir: options.configDir !== undefined }, streams);
    });
  });
  conversationOptions(conversations.command('show').description('print a conversation: its turns and transcript').argument('<id|last>', 'a conversation id, or last')).action(
    async (reference: string, options: { json: boolean; dataDir?: string; configDir?: string }) => {
      await run('conversations show', async () => {
        requireExistingDataDir(options.dataDir, 'shows a stored conversation');
        return (await import('./conversations.js')).runConversationShow(resolvePaths(options), reference, { json: options.json, requireConfigDir: options.configDir !== undefined }, streams);
      });
    },
  );
}

/** Declares `openvaala export`: a conversation as a JSON Lines archive on stdout. */
function declareExport(program: Command): void {
  program
    .command('export')
    .description('write a conversation as a self-contained archive (JSON Lines: its logs and attachments) to stdout; see docs/storage.md')
    .argument('<conversation>', 'a conversation id, a unique prefix of one, or last (the most recently updated)')
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use', existingConfigDirectory)
    .addHelpText('after', '\nExample: openvaala export last > conversation.jsonl')
    .action(async (reference: string, options: { dataDir?: string; configDir?: string }) => {
      await run('export', async () => {
        requireExistingDataDir(options.dataDir, 'exports a stored conversation');
        return (await import('./transfer.js')).runExport(resolvePaths(options), reference, { requireConfigDir: options.configDir !== undefined }, streams);
      });
    });
}

/** Declares `openvaala import`: a conversation from an archive or a Codex rollout. */
function declareImport(program: Command): void {
  program
    .command('import')
    .description('store a conversation from an archive made by openvaala export (or, with --from codex, from a Codex session rollout) and print its id')
    .argument('<file>', 'the archive or rollout file; - reads stdin')
    .option('--from <source>', 'the file is a session of another tool: codex (a rollout-*.jsonl of ~/.codex/sessions)')
    .option('--model <provider/model>', 'with --from: model to continue with (default: the agent\'s model, else defaultModel)')
    .option('--agent <name>', 'with --from: agent to continue with (default: the default agent)')
    .option('--cwd <dir>', 'with --from: working directory of the conversation (default: the one the rollout recorded)')
    .option('--as-new', 'store a copy under new ids (without it, a conversation stored here already is refused)')
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use', existingConfigDirectory)
    .addHelpText(
      'after',
      '\nThe conversation keeps its ids (from --from codex: the Codex session\'s id). One stored on this server already is refused,\nnaming it; --as-new stores a copy under new ids instead.\nA damaged or truncated archive is refused naming the line, and nothing is stored.\n\nExamples:\n  openvaala import conversation.jsonl\n  openvaala import --as-new conversation.jsonl\n  openvaala import --from codex ~/.codex/sessions/2026/11/30/rollout-….jsonl --cwd "$PWD"',
    )
    .action(async (file: string, options: { from?: string; model?: string; agent?: string; cwd?: string; asNew?: boolean; dataDir?: string; configDir?: string }) => {
      await run('import', async () =>
        (await import('./transfer.js')).runImport(
          resolvePaths(options),
          file,
          {
            requireConfigDir: options.configDir !== undefined,
            ...(options.from !== undefined ? { from: options.from } : {}),
            ...(options.model !== undefined ? { model: options.model } : {}),
            ...(options.agent !== undefined ? { agent: options.agent } : {}),
            ...(options.cwd !== undefined ? { cwd: path.resolve(options.cwd) } : {}),
            ...(options.asNew === true ? { asNew: true } : {}),
          },
          streams,
        ),
      );
    });
}

/** Declarers of these top-level commands, by name. */
export const CONVERSATION_COMMANDS = {
  conversations: declareConversations,
  export: declareExport,
  import: declareImport,
} satisfies Partial<Record<TopLevelCommand, (program: Command) => void>>;
