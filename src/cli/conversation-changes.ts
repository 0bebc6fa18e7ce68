/**
 * `openvaala conversations rename | archive | unarchive | delete | fork`: changes to stored
 * conversations, made through the local server (started in the background when none runs) with
 * the protocol's methods (`conversation/update`, `conversation/archive`, `conversation/unarchive`,
 * `conversation/delete`, `conversation/fork`; docs/protocol.md, "Conversation lifecycle").
 * Each names its conversation as `conversations show` does: an id, a unique prefix, or `last`.
 */
import { RuntimeClientError, type RuntimeClient } from '../client/runtime-client.js';
import { commandLine, resumeCommand, serverDirectories } from '../client/resume-command.js';
import { inCommandTerms } from './command-terms.js';
import { localDateTime } from '../client/time-text.js';
import type { OpenVaalaPaths } from '../config/paths.js';
import { ErrorCodes } from '../protocol/error-codes.js';
import type { Conversation, MethodResult } from '../protocol/index.js';
import { terminalLine } from '../tools/terminal-text.js';
import { resolveConversationId } from './conversation-reference.js';
import type { OutputStreams } from './exec-output.js';
import { withLocalServer } from './local-server-client.js';
import type { ServerInfo } from '../server/server-info.js';
import { confirmOnTerminal } from './terminal-confirmation.js';
import { humanStreams } from './terminal-streams.js';
import { UsageError } from './usage-error.js';

/** What every change command takes besides its own options. */
export interface ChangeOptions {
  /** Print the method's result as one JSON line instead of a sentence. */
  json: boolean;
  /** Refuse a running server whose configuration directory is another one (an explicit `--config-dir`). */
  requireConfigDir: boolean;
}

/** The conversation a command was given, found. */
interface Target {
  /** As typed: an id, a prefix or `last`. */
  reference: string;
  id: string;
  snapshot: MethodResult<'conversation/get'>;
}

/** How an error names the conversation: as typed, with the id it stands for when that is another text. */
function named(reference: string, id: string): string {
  return reference === id ? id : `${reference} (${id})`;
}

/** A title on one line, quoted. */
function quoted(title: string): string {
  return `"${terminalLine(title)}"`;
}

/**
 * Runs `work`, a request about one conversation, so that its refusal names the conversation as
 * the user gave it: bad params and unknown things (ids, items, turns) are usage mistakes (exit
 * 64, as an unknown reference is); any other refusal (a damaged log, an unreachable owner) keeps
 * its kind (exit 1).
 * @param context what else the message names before the server's words, e.g. the option whose value was refused
 */
async function about<T>(reference: string, id: string, work: () => Promise<T>, context?: string, parameterNames: Readonly<Record<string, string>> = {}): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof RuntimeClientError)) throw error;
    const message = `${named(reference, id)}: ${context ? `${context}: ` : ''}${inCommandTerms(error.message, parameterNames)}`;
    if (error.code === ErrorCodes.invalidParams || error.code === ErrorCodes.notFound) throw new UsageError(message);
    error.message = message;
    throw error;
  }
}

/** Finds the conversation `reference` names and reads it. @throws UsageError for an unknown or ambiguous reference */
async function target(client: RuntimeClient, reference: string, options: { archived?: boolean } = {}): Promise<Target> {
  const id = await about(reference, reference, () => resolveConversationId(client, reference, options));
  const snapshot = await about(reference, id, () => client.request('conversation/get', { conversationId: id }));
  return { reference, id, snapshot };
}

/** Runs `work` with a client of the local server, the streams made safe for a terminal, and the server's record. */
function withServer<T>(paths: OpenVaalaPaths, options: ChangeOptions, streams: OutputStreams, work: (client: RuntimeClient, streams: OutputStreams, server: ServerInfo) => Promise<T>): Promise<T> {
  const safe = humanStreams(streams, options);
  return withLocalServer(paths, options.requireConfigDir, 'openvaala-conversations', (client, server) => work(client, safe, server));
}

/**
 * Renames a conversation (`conversation/update` `title`).
 * @returns exit code 0
 * @throws UsageError for a blank or too long title, or an unknown or ambiguous reference
 */
export async function runConversationRename(paths: OpenVaalaPaths, reference: string, title: string, options: ChangeOptions, streams: OutputStreams): Promise<number> {
  if (title.trim() === '') throw new UsageError('<title> is empty: give the new title');
  return withServer(paths, options, streams, async (client, out) => {
    const { id, snapshot } = await target(client, reference);
    const result = await about(reference, id, () => client.request('conversation/update', { conversationId: id, title }), undefined, { title: '<title>' });
    out.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `renamed ${id} to ${quoted(result.conversation.title)} (was ${quoted(snapshot.conversation.title)})\n`);
    return 0;
  });
}

/**
 * Archives a conversation (`conversation/archive`: left out of `conversations list` unless
 * `--archived`), or with `archived` false brings it back (`conversation/unarchive`). One
 * already in the wanted state is said so and left as it is. `last` in `unarchive` is the
 * most recently updated archived conversation.
 * @returns exit code 0
 * @throws UsageError for an unknown or ambiguous reference
 */
export async function runConversationArchive(paths: OpenVaalaPaths, reference: string, archived: boolean, options: ChangeOptions, streams: OutputStreams): Promise<number> {
  return withServer(paths, options, streams, async (client, out, server) => {
    const { id, snapshot } = await target(client, reference, { archived: !archived });
    if ((snapshot.conversation.archived === true) === archived) {
      out.stdout.write(options.json ? `${JSON.stringify({ conversation: snapshot.conversation })}\n` : `${id} is ${archived ? 'already' : 'not'} archived: ${terminalLine(snapshot.conversation.title)}\n`);
      return 0;
    }
    const result = await about(reference, id, () => client.request(archived ? 'conversation/archive' : 'conversation/unarchive', { conversationId: id }));
    out.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${archived ? 'archived' : 'unarchived'} ${id}: ${terminalLine(result.conversation.title)}\n`);
    if (archived) {
      const directories = serverDirectories(server, paths);
      out.stderr.write(`it is left out of the list now (${commandLine(['conversations', 'list', '--archived'], directories)} shows it); bring it back with: ${commandLine(['conversations', 'unarchive', id], directories)}\n`);
    }
    return 0;
  });
}

/** The live git worktree of a conversation, if it works in one. */
function liveWorktree(conversation: Conversation): NonNullable<Conversation['worktree']> | undefined {
  return conversation.worktree && conversation.worktree.removedAt === undefined ? conversation.worktree : undefined;
}

/** Why `delete` needs `--remove-worktree` for this conversation. */
function worktreeRefusal(target: Target, worktree: NonNullable<Conversation['worktree']>): UsageError {
  return new UsageError(`${named(target.reference, target.id)}: the conversation works in the git worktree ${worktree.path} (branch ${worktree.branch}); pass --remove-worktree to remove the worktree and its branch with it`);
}

/** The confirmation question: which conversation, and what else goes with it. */
function deletionQuestion(target: Target, removesWorktree: boolean): string {
  const { conversation, sessions, turns } = target.snapshot;
  const counted = turns.filter((turn) => turn.rewound !== true).length;
  const running = sessions.some((session) => session.activeTurnId !== null || session.queuedInputs.length > 0);
  const worktree = liveWorktree(conversation);
  const where = conversation.workLocation.map((entry) => terminalLine(entry.cwd)).join(', ');
  const lines = [
    `delete conversation ${conversation.id} ${quoted(conversation.title)}`,
    `  ${counted} turn${counted === 1 ? '' : 's'}, updated ${localDateTime(conversation.updatedAt)}, in ${where}`,
    ...(running ? ['  a turn is running in it: it is interrupted'] : []),
    ...(worktree && removesWorktree ? [`  its git worktree ${terminalLine(worktree.path)} and branch ${worktree.branch} are removed`] : []),
  ];
  return `${lines.join('\n')}\ndelete it? (y to delete) [y/N] `;
}

/** How `delete` is to go: confirmed by `--yes` or asked on `input`. */
export interface DeleteOptions extends ChangeOptions {
  /** Delete without asking. */
  yes: boolean;
  /** Also remove the conversation's git worktree and branch (`removeWorktree: true`). */
  removeWorktree: boolean;
}

/**
 * Deletes a conversation (`conversation/delete`: running turns are interrupted, its logs move
 * to the data directory's trash). Without `yes` it asks on the terminal, showing the id and
 * the title, and deletes only on `y`. Refused before anything is asked or started: no
 * terminal and no `yes` (nothing is deleted silently), and `last` with `yes` (which
 * conversation is the most recently updated one changes while others run, and with `--yes`
 * no one sees which one it is).
 * @param input where the answer is read from (stdin); its `isTTY` tells whether there is a terminal
 * @returns exit code 0 when deleted, 1 when the question was answered no
 * @throws UsageError as above, for an unknown or ambiguous reference, and for a conversation in a git worktree without `removeWorktree`
 */
export async function runConversationDelete(paths: OpenVaalaPaths, reference: string, options: DeleteOptions, streams: OutputStreams, input: NodeJS.ReadableStream & { isTTY?: boolean }): Promise<number> {
  if (!options.yes && input.isTTY !== true) throw new UsageError(`not deleting ${reference}: there is no terminal to confirm on; pass --yes to delete without being asked`);
  if (options.yes && reference === 'last') {
    throw new UsageError(`not deleting last with --yes: it names whichever conversation was updated most recently, unseen; give its id or a unique prefix of it (${commandLine(['conversations'], paths)} lists them), or leave out --yes to be asked`);
  }
  return withServer(paths, options, streams, async (client, out) => {
    const found = await target(client, reference);
    const worktree = liveWorktree(found.snapshot.conversation);
    if (worktree && !options.removeWorktree) throw worktreeRefusal(found, worktree);
    if (!options.yes && !(await confirmOnTerminal(deletionQuestion(found, options.removeWorktree), input, streams.stderr))) {
      out.stderr.write(`not deleted: ${found.id}\n`);
      return 1;
    }
    const result = await about(reference, found.id, () => client.request('conversation/delete', { conversationId: found.id, ...(options.removeWorktree ? { removeWorktree: true } : {}) })).catch((error: unknown) => {
      // A worktree made since the conversation was read.
      if (error instanceof RuntimeClientError && (error.data as { reason?: unknown } | undefined)?.reason === 'worktree_present') throw new UsageError(`${error.message}; with the command line: pass --remove-worktree`);
      throw error;
    });
    out.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `deleted ${found.id}: ${terminalLine(found.snapshot.conversation.title)}\n`);
    return 0;
  });
}

/** Where `fork` cuts the source: after one item, after one turn, or (neither) after its last stored item. */
export interface ForkOptions extends ChangeOptions {
  /** The last item copied (an item id, as `conversations show --json` lists them). */
  at?: string;
  /** The last turn copied (a turn id). */
  turn?: string;
}

/**
 * Forks a conversation (`conversation/fork`): a new conversation whose root session starts with
 * a copy of the source's root session up to and including the item `at`, up to the end of turn
 * `turn`, or (neither) all of it as stored. Prints the new conversation's id, and on stderr the
 * command that continues it.
 * @returns exit code 0
 * @throws UsageError for an unknown or ambiguous reference, both `at` and `turn`, or an item or turn not stored in the source's root session
 * @throws Error when the source has no stored item yet (nothing to fork)
 */
export async function runConversationFork(paths: OpenVaalaPaths, reference: string, options: ForkOptions, streams: OutputStreams): Promise<number> {
  if (options.at !== undefined && options.turn !== undefined) throw new UsageError('give --at or --turn, not both');
  return withServer(paths, options, streams, async (client, out, server) => {
    const { id, snapshot } = await target(client, reference);
    let cut: { fromItemId: string } | { lastTurnId: string };
    let context: string | undefined;
    if (options.at !== undefined) [cut, context] = [{ fromItemId: options.at }, `--at ${options.at}`];
    else if (options.turn !== undefined) [cut, context] = [{ lastTurnId: options.turn }, `--turn ${options.turn}`];
    else {
      const sessionId = snapshot.conversation.rootSessionId;
      const [last] = (await about(reference, id, () => client.request('items/list', { conversationId: id, sessionId, direction: 'backward', limit: 1 }))).items;
      if (!last) throw new Error(`${named(reference, id)}: nothing to fork, the conversation has no stored items yet`);
      cut = { fromItemId: last.item.id };
    }
    // The context names the option (`--at <id>`), so the parameter it became is left unsaid.
    const result = await about(reference, id, () => client.request('conversation/fork', { conversationId: id, ...cut }), context, { fromItemId: '', lastTurnId: '' });
    const fork = result.conversation;
    out.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `forked ${id} into ${fork.id}: ${terminalLine(fork.title)}\n`);
    out.stderr.write(`continue it with: ${resumeCommand('exec', fork.id, serverDirectories(server, paths))}\n`);
    return 0;
  });
}
