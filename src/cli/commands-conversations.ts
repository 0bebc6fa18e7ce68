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
/** What names a conversation on the command line (see `conversation-reference.ts`). */
const CONVERSATION_ARGUMENT = ['<conversation>', 'a conversation id, a unique prefix of one, or last (the most recently updated)'] as const;

/** Declares `openvaala conversations list|search|show|rename|archive|unarchive|delete|fork`. */
function declareConversations(program: Command): void {
  const conversations = program.command('conversations').description('list, search, show, rename, archive, delete and fork stored conversations');
  const conversationOptions = (command: Command) =>
    command.option('--json', 'print JSON', false).option('--data-dir <dir>', 'data directory of the server to use').option('--config-dir <dir>', 'configuration directory of the server to use', existingConfigDirectory);
  type ListOptions = { limit: number; json: boolean; archived: boolean; dataDir?: string; configDir?: string; query?: string };
  conversationOptions(
    conversations
      .command('list', { isDefault: true })
      .description('list conversations, most recently updated first')
      .option('--query <text>', 'only conversations whose title or messages match (words, "phrases", prefix*, AND, OR, NOT)')
      .option('--limit <n>', 'how many to list', integer('--limit', 1, 500), 20)
      .option('--archived', 'only the archived conversations (left out otherwise)', false)
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
      .option('--limit <n>', 'how many to list', integer('--limit', 1, 500), 20)
      .option('--archived', 'only the archived conversations (left out otherwise)', false),
  ).action(async (query: string, options: ListOptions) => {
    await run('conversations search', async () => {
      requireExistingDataDir(options.dataDir, 'searches stored conversations');
      return (await import('./conversations.js')).runConversationList(resolvePaths(options), { ...options, query, requireConfigDir: options.configDir !== undefined }, streams);
    });
  });
  conversationOptions(conversations.command('show').description('print a conversation: its turns and transcript').argument(...CONVERSATION_ARGUMENT)).action(
    async (reference: string, options: { json: boolean; dataDir?: string; configDir?: string }) => {
      await run('conversations show', async () => {
        requireExistingDataDir(options.dataDir, 'shows a stored conversation');
        return (await import('./conversations.js')).runConversationShow(resolvePaths(options), reference, { json: options.json, requireConfigDir: options.configDir !== undefined }, streams);
      });
    },
  );
  declareConversationChanges(conversations, conversationOptions);
}

/**
 * Declares the subcommands of `openvaala conversations` that change a stored conversation:
 * `rename`, `archive`, `unarchive`, `delete` and `fork` (implemented in `conversation-changes.ts`).
 */
function declareConversationChanges(conversations: Command, conversationOptions: (command: Command) => Command): void {
  type Options = { json: boolean; dataDir?: string; configDir?: string };
  const changeOptions = (options: Options) => ({ json: options.json, requireConfigDir: options.configDir !== undefined });
  const changes = () => import('./conversation-changes.js');
  conversationOptions(conversations.command('rename').description('give a conversation a new title').argument(...CONVERSATION_ARGUMENT).argument('<title>', 'the new title')).action(
    async (reference: string, title: string, options: Options) => {
      await run('conversations rename', async () => {
        requireExistingDataDir(options.dataDir, 'changes a stored conversation');
        return (await changes()).runConversationRename(resolvePaths(options), reference, title, changeOptions(options), streams);
      });
    },
  );
  for (const [name, archived, description] of [
    ['archive', true, 'archive a conversation: conversations list leaves it out (list --archived shows it); it keeps working'],
    ['unarchive', false, 'bring an archived conversation back into conversations list (last: the most recently updated archived one)'],
  ] as const) {
    conversationOptions(conversations.command(name).description(description).argument(...CONVERSATION_ARGUMENT)).action(async (reference: string, options: Options) => {
      await run(`conversations ${name}`, async () => {
        requireExistingDataDir(options.dataDir, 'changes a stored conversation');
        return (await changes()).runConversationArchive(resolvePaths(options), reference, archived, changeOptions(options), streams);
      });
    });
  }
  conversationOptions(
    conversations
      .command('delete')
      .description('delete a conversation (its running turn is interrupted); asks on the terminal first, showing its id and title')
      .argument(...CONVERSATION_ARGUMENT)
      .option('-y, --yes', 'delete without asking (needed when there is no terminal; not with last)', false)
      .option('--remove-worktree', 'for a conversation in a git worktree: remove the worktree and its branch with it', false)
      .addHelpText('after', '\nOnly y (or yes) at the question deletes. Without a terminal, --yes is needed (exit 64 otherwise); last with --yes is refused,\nas it names whichever conversation was updated most recently: give the id or a unique prefix.'),
  ).action(async (reference: string, options: Options & { yes: boolean; removeWorktree: boolean }) => {
    await run('conversations delete', async () => {
      requireExistingDataDir(options.dataDir, 'deletes a stored conversation');
      return (await changes()).runConversationDelete(resolvePaths(options), reference, { ...changeOptions(options), yes: options.yes, removeWorktree: options.removeWorktree }, streams, process.stdin);
    });
  });
  conversationOptions(
    conversations
      .command('fork')
      .description('copy a conversation (all of it, or up to an item or a turn) into a new one and print its id and how to continue it')
      .argument(...CONVERSATION_ARGUMENT)
      .option('--at <item id>', 'copy up to and including this item (ids: conversations show --json, items[].id)')
      .option('--turn <turn id>', 'copy up to the end of this turn (ids: conversations show --json, turns[].id)'),
  ).action(async (reference: string, options: Options & { at?: string; turn?: string }) => {
    await run('conversations fork', async () => {
      requireExistingDataDir(options.dataDir, 'forks a stored conversation');
      return (await changes()).runConversationFork(resolvePaths(options), reference, { ...changeOptions(options), ...(options.at !== undefined ? { at: options.at } : {}), ...(options.turn !== undefined ? { turn: options.turn } : {}) }, streams);
    });
  });
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
