/**
 * `openvaala conversations [list] | search QUERY | show ID|last`: the stored conversations of
 * the local server (started in the background when none runs).
 */
import { RuntimeClientError } from '../client/runtime-client.js';
import { inCommandTerms } from './command-terms.js';
import type { OpenVaalaPaths } from '../config/paths.js';
import { describeStopReason, ErrorCodes, turnEndNotice, type ConversationSummary, type Item, type Turn } from '../protocol/index.js';
import { resolveConversationId } from './conversation-reference.js';
import { formatItem, type OutputStreams } from './exec-output.js';
import { hookRunLine, summarizeArguments } from './exec-item-formats.js';
import { formatLogDamage } from './log-damage-output.js';
import { UsageError } from './usage-error.js';
import { withLocalServer } from './local-server-client.js';
import { humanStreams } from './terminal-streams.js';
import { commandLine, resumeCommand, serverDirectories } from '../client/resume-command.js';
import stringWidth from 'string-width';
import { terminalLine } from '../tools/terminal-text.js';
import { localDateTime } from '../client/time-text.js';

/**
 * One line per conversation: id, last update, last turn's status (and why it stopped, when it
 * stopped other than by a normal finish), working directory, title
 * (each on one line, see `terminalLine`). Columns are aligned by the width a terminal gives each character (`string-width`: wide East
 * Asian characters and emoji take two columns, combining marks none).
 */
export function formatConversationList(conversations: ConversationSummary[]): string {
  if (conversations.length === 0) return '';
  const rows = conversations.map((conversation) => [conversation.id, localDateTime(conversation.updatedAt), lastTurnCell(conversation), terminalLine(conversation.cwd), terminalLine(conversation.title)]);
  const header = ['ID', 'UPDATED', 'LAST TURN', 'DIRECTORY', 'TITLE'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => stringWidth(row[column] ?? ''))));
  const padded = (cell: string, width: number) => cell + ' '.repeat(Math.max(0, width - stringWidth(cell)));
  return [header, ...rows].map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : padded(cell, widths[column] ?? 0))).join('  ')).join('\n') + '\n';
}

/** The last turn's status, with why it stopped when that says more (`completed (output limit reached)`). */
function lastTurnCell(conversation: ConversationSummary): string {
  const status = conversation.lastTurnStatus ?? '-';
  const label = conversation.lastTurnStopReason === undefined ? undefined : describeStopReason(conversation.lastTurnStopReason).label;
  return label !== undefined && label !== status ? `${status} (${label})` : status;
}

/**
 * Lists conversations, newest first; with `query`, only those whose title or messages match
 * (full-text search, SQLite FTS5 syntax); with `archived`, only the archived ones (which are
 * otherwise left out).
 * @throws UsageError for a query the search index cannot parse
 */
export async function runConversationList(paths: OpenVaalaPaths, options: { query?: string; archived?: boolean; limit: number; json: boolean; requireConfigDir: boolean }, streams: OutputStreams): Promise<number> {
  streams = humanStreams(streams, options);
  const listing = await withLocalServer(paths, options.requireConfigDir, 'openvaala-conversations', (client) =>
    client.request('conversation/list', { limit: options.limit, ...(options.query !== undefined ? { query: options.query } : {}), ...(options.archived ? { archived: true } : {}) }).catch((error: unknown) => {
      if (error instanceof RuntimeClientError && error.code === ErrorCodes.invalidParams) throw new UsageError(inCommandTerms(error.message, { query: '', limit: '--limit' }));
      throw error;
    }),
  );
  if (options.json) {
    streams.stdout.write(`${JSON.stringify(listing.conversations)}\n`);
  } else if (listing.conversations.length === 0) {
    const kind = options.archived ? 'archived conversation' : 'conversation';
    streams.stderr.write(options.query ? `no ${kind} matches ${JSON.stringify(options.query)}\n` : options.archived ? 'no archived conversations\n' : `no conversations yet (start one with: ${commandLine(['exec'], paths)} "…")\n`);
  } else {
    streams.stdout.write(formatConversationList(listing.conversations));
    if (listing.nextCursor) streams.stderr.write(`(the ${options.limit} most recent; --limit shows more)\n`);
  }
  return 0;
}

/**
 * A session's items as `conversations show` prints them, one entry per item that has anything
 * to show, each followed by a newline, and a blank line between turns. A tool hook's run is
 * recorded before its call ends, and several calls run at once: its line names the call by what
 * that call's line shows. A turn that records its interruption says so once, on that line.
 * @param turns the conversation's turns by id: after the last item of a turn that ended other
 *   than by a normal finish (an answer cut at the output limit…), a `warning:` line says so
 */
export function formatTranscript(items: readonly Item[], turns: ReadonlyMap<string, Turn> = new Map()): string {
  const calls = new Map<string, string>();
  const interruptedTurns = new Set<string>();
  for (const item of items) {
    if (item.kind === 'tool_call') calls.set(`${item.sessionId} ${item.callId}`, summarizeArguments(item.toolName, item.arguments));
    else if (item.kind === 'interruption') interruptedTurns.add(item.turnId);
  }
  let text = '';
  let lastTurnShown: string | undefined;
  for (const [index, item] of items.entries()) {
    const shown = item.kind === 'hook_run' ? hookRunLine(item, item.callId !== undefined ? calls.get(`${item.sessionId} ${item.callId}`) : undefined) : formatItem(item, { interruptionShown: interruptedTurns.has(item.turnId) });
    if (shown !== undefined) {
      if (lastTurnShown !== undefined && lastTurnShown !== item.turnId) text += '\n';
      lastTurnShown = item.turnId;
      text += `${shown}\n`;
    }
    // A turn whose answer may be incomplete says so after its last item, where the answer ends.
    const notice = items[index + 1]?.turnId === item.turnId ? undefined : endNotice(turns.get(item.turnId));
    if (notice) text += `warning: ${notice}\n`;
  }
  return text;
}

/**
 * Prints a conversation: its state, each turn's outcome, and the root session's transcript.
 * @throws UsageError when there is no such conversation
 */
export async function runConversationShow(paths: OpenVaalaPaths, reference: string, options: { json: boolean; requireConfigDir: boolean }, streams: OutputStreams): Promise<number> {
  streams = humanStreams(streams, options);
  await withLocalServer(paths, options.requireConfigDir, 'openvaala-conversations', async (client, server) => {
    const conversationId = await resolveConversationId(client, reference);
    const snapshot = await client.request('conversation/get', { conversationId });
    streams.stderr.write(formatLogDamage(snapshot.damage, paths.dataDir));
    const sessionId = snapshot.conversation.rootSessionId;
    const items: Item[] = [];
    for (let cursor: number | undefined; ; ) {
      const page = await client.request('items/list', { conversationId, sessionId, limit: 500, ...(cursor !== undefined ? { cursor } : {}) });
      items.push(...page.items.map((stored) => stored.item));
      if (page.nextCursor === undefined) break;
      cursor = page.nextCursor;
    }
    if (options.json) {
      streams.stdout.write(`${JSON.stringify({ ...snapshot, items })}\n`);
      return;
    }
    const { conversation } = snapshot;
    const root = snapshot.sessions.find((session) => session.id === sessionId);
    const where = conversation.workLocation.map((entry) => `${terminalLine(entry.cwd)} (${entry.executor})`).join(', ');
    streams.stdout.write(`conversation ${conversation.id}: ${terminalLine(conversation.title)}\n  ${where} · ${root?.model ?? ''} · ${snapshot.turns.length} turn${snapshot.turns.length === 1 ? '' : 's'} · updated ${localDateTime(conversation.updatedAt)}\n\n`);
    streams.stdout.write(formatTranscript(items, new Map(snapshot.turns.map((turn) => [turn.id, turn]))));
    const last = snapshot.turns.at(-1);
    if (last) streams.stdout.write(`\n${describeLastTurn(last)}\n`);
    streams.stderr.write(`continue it with: ${resumeCommand('exec', conversation.id, serverDirectories(server, paths))}\n`);
  });
  return 0;
}

/** What a turn's end adds to the transcript, when anything (`turnEndNotice`). */
function endNotice(turn: Turn | undefined): string | undefined {
  return turn ? turnEndNotice(turn) : undefined;
}

/**
 * The transcript's closing line: the last turn's status, with its stop reason when the status
 * and error do not tell it (`turnEndNotice`), and its error.
 */
function describeLastTurn(turn: Turn): string {
  const reason = turn.stopReason !== undefined && turnEndNotice(turn) ? ` (${describeStopReason(turn.stopReason).label})` : '';
  return `last turn ${turn.status}${reason}${turn.error ? `: ${turn.error}` : ''}`;
}
