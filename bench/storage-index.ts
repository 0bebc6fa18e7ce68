/**
 * Index benchmarks of the storage issue, each printed next to a baseline measured in the
 * same run:
 *   - first page of `conversation/list` over 100,000 conversations through the dao (staged
 *     storages, as the server composes them) vs the raw SELECT of the same page; and a
 *     search page (`query`) over the same conversations;
 *   - `reindex` of 1,000,000 items (1,000 conversations x 1,000 items) in items/s vs a raw
 *     read of the same files that only counts lines.
 * Targets: list first page <= 5 ms at 100k; reindex >= 300,000 items/s.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CONVERSATION_INDEX, ConversationStore, conversationPath, METADATA_STREAM, type MetadataEntry } from '../src/dao/conversation-store.js';
import { createFileConversationLoader } from '../src/dao/file-conversation-loader.js';
import { reindex } from '../src/dao/reindex.js';
import { SqliteConversationSearchIndex } from '../src/dao/sqlite-conversation-search-index.js';
import type { Conversation, ConversationSummary, Item, Session, Turn } from '../src/protocol/index.js';
import { FileLogStorage, openSqliteDatabase, SqliteRecordStorage, StagedLogStorage, StagedRecordStorage } from '../src/storage/index.js';
import { median, percentile } from './statistics.js';

const LIST_CONVERSATIONS = 100_000;
const LIST_ROUNDS = 300;
const REINDEX_CONVERSATIONS = 1_000;
const ITEMS_PER_CONVERSATION = 1_000;
/** Items per turn: one user message, then 13 steps of an assistant message and two tool calls. */
const ITEMS_PER_TURN = 40;
const REINDEX_ROUNDS = 3;
/** Words per user message, assistant message and tool output (about 6.5 characters a word). */
const USER_WORDS = 25;
const ASSISTANT_WORDS = 15;
const TOOL_OUTPUT_WORDS = 45;

/**
 * A deterministic text source, so every run indexes the same text: words from a vocabulary
 * of 4,352 made-up words, skewed towards the common ones as in prose. `pool(count, length)`
 * returns `count` texts of `length` words; items pick from such pools, since
 * generating a million texts word by word would take longer than the reindex measured.
 */
function createTexts(seed: number): { words: (count: number) => string; pool: (count: number, words: number) => string[] } {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'pe', 'da', 'gu', 'xi', 'bo', 'ze', 'fa', 'ly'];
  const vocabulary = Array.from({ length: 4096 + 256 }, (_, rank) => syllables[rank % 16]! + syllables[(rank >> 4) % 16]! + (rank >= 256 ? syllables[(rank >> 8) % 16]! : ''));
  let state = seed >>> 0;
  const random = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
  const words = (count: number): string => {
    const picked: string[] = [];
    for (let index = 0; index < count; index += 1) {
      // The high bits: the low bits of a power-of-two LCG repeat with short periods.
      const value = random() >>> 8;
      picked.push(vocabulary[value % 7 === 0 ? value % vocabulary.length : value % 256]!);
    }
    return picked.join(' ');
  };
  return { words, pool: (count, length) => Array.from({ length: count }, () => words(length)) };
}

function line(label: string, measured: string, baselineLabel: string, baseline: string, ratio: string): void {
  console.log(`${label.padEnd(52)} ${measured.padStart(22)}   | ${baselineLabel}: ${baseline}   | ratio ${ratio}`);
}

function summaryOf(number: number): ConversationSummary {
  return {
    id: `conv_${String(number).padStart(8, '0')}`,
    title: `Conversation ${number}`,
    cwd: `/home/dev/project-${number % 20}`,
    executor: 'local',
    createdAt: 1_700_000_000_000 + number,
    updatedAt: 1_700_000_000_000 + ((number * 7919) % LIST_CONVERSATIONS) * 1000,
    lastTurnStatus: 'completed',
    running: false,
    preview: '',
    archived: false,
  };
}

async function measure(rounds: number, action: () => Promise<unknown> | unknown): Promise<number[]> {
  for (let round = 0; round < 20; round += 1) await action();
  const samples: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const began = performance.now();
    await action();
    samples.push(performance.now() - began);
  }
  return samples;
}

/** `conversation/list` first page at 100k conversations, through the dao, vs a raw SELECT. */
export async function benchmarkConversationList(directory: string): Promise<boolean> {
  const database = openSqliteDatabase(path.join(directory, 'list-metadata.db'));
  const records = new SqliteRecordStorage(database);
  const search = new SqliteConversationSearchIndex(database);
  const logs = new StagedLogStorage(new FileLogStorage(path.join(directory, 'list-logs')));
  const index = new StagedRecordStorage(records);
  const store = new ConversationStore(logs, index, { search });
  // The listing reads only the index, so the index is filled directly (100,000 log directories would only cost setup time).
  const { words } = createTexts(7);
  for (let first = 0; first < LIST_CONVERSATIONS; first += 10_000) {
    const batch = Array.from({ length: 10_000 }, (_, offset) => summaryOf(first + offset));
    // Stored as the dao stores them: with the listState the listing filters on.
    await records.mset(CONVERSATION_INDEX, batch.map((summary) => ({ key: summary.id, value: { ...summary, listState: 'active' }, updatedAt: summary.updatedAt })));
    await search.setConversations(batch.map((summary) => ({ conversationId: summary.id, title: `${summary.title} ${words(6)}`, updatedAt: summary.updatedAt })));
  }
  database.exec('ANALYZE');
  const raw = database.prepare(`SELECT key, value, updated_at FROM records_${CONVERSATION_INDEX} ORDER BY updated_at DESC, key DESC LIMIT 50`);
  const rawPage = (): unknown[] => (raw.all() as { value: string }[]).map((row) => JSON.parse(row.value) as unknown);
  const listed = await measure(LIST_ROUNDS, () => store.listConversations({ limit: 50 }));
  const rawTimes = await measure(LIST_ROUNDS, rawPage);
  const page = await store.listConversations({ limit: 50 });
  const newest = Math.max(...Array.from({ length: LIST_CONVERSATIONS }, (_, number) => summaryOf(number).updatedAt));
  if (page.conversations.length !== 50 || page.conversations[0]?.updatedAt !== newest) throw new Error('conversation/list did not return the 50 newest conversations');
  const ms = (value: number): string => `${value.toFixed(3)} ms`;
  line(
    'conversation/list page 1 (50 of 100k), dao',
    `median ${ms(median(listed))} p99 ${ms(percentile(listed, 99))}`,
    'raw SELECT (+JSON.parse)',
    `median ${ms(median(rawTimes))} p99 ${ms(percentile(rawTimes, 99))}`,
    `${(median(listed) / median(rawTimes)).toFixed(2)}x`,
  );
  const matches = (query: string): number => (database.prepare('SELECT count(DISTINCT rowid >> 32) AS count FROM conversation_search_text WHERE conversation_search_text MATCH ?').get(query) as { count: number }).count;
  const queries: [string, string][] = [
    ['common word', 'kaka'],
    ['two words', 'kaka lolo'],
    ['prefix*', 'kal*'],
    ['one match', 'Conversation AND 4242'],
  ];
  for (const [label, query] of queries) {
    const searched = await measure(100, () => store.listConversations({ limit: 50, query }));
    line(
      `conversation/list query ${label} (${matches(query).toLocaleString('en')} of 100k match)`,
      `median ${ms(median(searched))} p99 ${ms(percentile(searched, 99))}`,
      'raw SELECT, no query',
      ms(median(rawTimes)),
      `${(median(searched) / median(rawTimes)).toFixed(2)}x`,
    );
  }
  const met = median(listed) <= 5;
  console.log(`target "conversation/list first page <= 5 ms at 100k" (median): ${met ? 'met' : 'NOT met'}`);
  await store.close();
  await search.close();
  await index.close();
  await logs.close();
  database.close();
  return met;
}

/** Pools of texts the items pick from (see {@link createTexts}). */
interface TextPools {
  user: string[];
  assistant: string[];
  output: string[];
  words: (count: number) => string;
}

function pick(pool: string[], number: number): string {
  return pool[(Math.imul(number, 2654435761) >>> 0) % pool.length]!;
}

function itemAt(sessionId: string, turnId: string, number: number, texts: TextPools): Item {
  const base = { id: `item_${String(number).padStart(8, '0')}`, sessionId, turnId, createdAt: 1_700_000_000_000 + number, completedAt: 1_700_000_000_000 + number, status: 'completed' as const };
  const position = number % ITEMS_PER_TURN;
  if (position === 0) return { ...base, kind: 'user_message', content: [{ type: 'text', text: pick(texts.user, number) }], mode: 'input' };
  if (position % 3 === 1) return { ...base, kind: 'assistant_message', text: pick(texts.assistant, number), model: 'openai/gpt-5.5' };
  return {
    ...base,
    kind: 'tool_call',
    callId: `call_${number}`,
    toolName: 'exec_command',
    arguments: { command: `npm test -- ${pick(texts.user, number + 1).slice(0, 20)}` },
    output: `${pick(texts.output, number)}\n`,
    isError: false,
    exitCode: 0,
    durationMs: 42,
  };
}

/** Writes one conversation as the server would leave it: metadata log plus one session log. */
function writeConversation(root: string, number: number, texts: TextPools): void {
  const conversationId = `conv_${String(number).padStart(8, '0')}`;
  const sessionId = `sess_${String(number).padStart(8, '0')}`;
  const time = 1_700_000_000_000 + number * 1000;
  let conversation: Conversation = { id: conversationId, title: `Fix ${texts.words(3)}`, workLocation: [{ executor: 'local', cwd: `/home/dev/project-${number % 20}` }], rootSessionId: sessionId, createdAt: time, updatedAt: time };
  const session: Session = { id: sessionId, conversationId, parentSessionId: null, agent: 'default', model: 'openai/gpt-5.5', status: 'idle', activeTurnId: null, queuedInputs: [], pendingApprovals: [], pendingUserInputs: [], createdAt: time, updatedAt: time };
  const metadata: MetadataEntry[] = [{ type: 'conversation', conversation }, { type: 'session', session }];
  const items: Item[] = [];
  for (let turnNumber = 0; turnNumber < ITEMS_PER_CONVERSATION / ITEMS_PER_TURN; turnNumber += 1) {
    const turnId = `turn_${number}_${turnNumber}`;
    const turn: Turn = { id: turnId, sessionId, conversationId, status: 'running', steps: 0, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, startedAt: time + turnNumber, completedAt: null };
    conversation = { ...conversation, updatedAt: time + turnNumber };
    metadata.push({ type: 'session', session: { ...session, status: 'running', activeTurnId: turnId } }, { type: 'conversation', conversation }, { type: 'turn', turn }, { type: 'conversation', conversation });
    for (let offset = 0; offset < ITEMS_PER_TURN; offset += 1) items.push(itemAt(sessionId, turnId, number * ITEMS_PER_CONVERSATION + turnNumber * ITEMS_PER_TURN + offset, texts));
    const done: Turn = { ...turn, status: 'completed', steps: 13, usage: { inputTokens: 1000, outputTokens: 100, totalTokens: 1100 }, completedAt: time + turnNumber + 1 };
    metadata.push({ type: 'turn', turn: done }, { type: 'conversation', conversation }, { type: 'session', session }, { type: 'conversation', conversation });
  }
  // Written in FileLogStorage's file format (docs/storage.md) without its fsyncs: setup, not the thing measured.
  const directory = path.join(root, conversationPath(conversationId));
  fs.mkdirSync(directory, { recursive: true });
  const lines = (values: unknown[]): string => values.map((value, index) => `${JSON.stringify({ seq: index + 1, value })}\n`).join('');
  fs.writeFileSync(path.join(directory, `${METADATA_STREAM}.jsonl`), lines(metadata));
  fs.writeFileSync(path.join(directory, `${sessionId}.jsonl`), lines(items));
}

function countLines(root: string): { lines: number; bytes: number } {
  let lines = 0;
  let bytes = 0;
  const conversations = path.join(root, 'conversations');
  for (const name of fs.readdirSync(conversations)) {
    for (const file of fs.readdirSync(path.join(conversations, name))) {
      const data = fs.readFileSync(path.join(conversations, name, file));
      bytes += data.length;
      for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, at + 1)) lines += 1;
    }
  }
  return { lines, bytes };
}

/** `reindex` over 1,000,000 items vs a raw line count of the same files. */
export async function benchmarkReindex(directory: string): Promise<boolean> {
  const root = path.join(directory, 'reindex');
  const written = performance.now();
  const source = createTexts(11);
  const texts: TextPools = { user: source.pool(4096, USER_WORDS), assistant: source.pool(16_384, ASSISTANT_WORDS), output: source.pool(16_384, TOOL_OUTPUT_WORDS), words: source.words };
  for (let number = 0; number < REINDEX_CONVERSATIONS; number += 1) writeConversation(root, number, texts);
  const totalItems = REINDEX_CONVERSATIONS * ITEMS_PER_CONVERSATION;
  const { lines, bytes } = countLines(root);
  console.log(
    `(wrote ${REINDEX_CONVERSATIONS.toLocaleString('en')} conversations, ${totalItems.toLocaleString('en')} items + ${(lines - totalItems).toLocaleString('en')} metadata entries, ` +
      `${(bytes / 1024 / 1024).toFixed(0)} MiB, in ${((performance.now() - written) / 1000).toFixed(1)} s; items: 2.5% user, 32.5% assistant, 65% tool calls)`,
  );
  const rates: number[] = [];
  const rawRates: number[] = [];
  let messages = 0;
  for (let round = 0; round < REINDEX_ROUNDS; round += 1) {
    const rawStarted = performance.now();
    countLines(root);
    rawRates.push(totalItems / ((performance.now() - rawStarted) / 1000));
    fs.rmSync(path.join(directory, 'reindex.db'), { force: true });
    const database = openSqliteDatabase(path.join(directory, 'reindex.db'));
    const logs = new FileLogStorage(root);
    const started = performance.now();
    // As `openvaala reindex` runs it: FileLogStorage, the file loader (worker thread), one SQLite file.
    const loader = createFileConversationLoader(root);
    const report = await reindex(logs, new SqliteRecordStorage(database), { search: new SqliteConversationSearchIndex(database), loader });
    rates.push(totalItems / ((performance.now() - started) / 1000));
    await loader.close();
    await logs.close();
    database.close();
    if (report.conversations !== REINDEX_CONVERSATIONS || report.items !== totalItems) throw new Error(`reindex indexed ${report.conversations} conversations and ${report.items} items`);
    messages = report.messages;
  }
  const rate = median(rates);
  const rawRate = median(rawRates);
  const format = (value: number): string => `${Math.round(value).toLocaleString('en')} items/s`;
  line(`reindex 1M items (${messages.toLocaleString('en')} searchable messages)`, format(rate), 'raw read + line count', format(rawRate), `${(rate / rawRate).toFixed(2)}x`);
  const met = rate >= 300_000;
  console.log(`target "reindex >= 300,000 items/s" (median of ${REINDEX_ROUNDS}): ${met ? 'met' : 'NOT met'}`);
  return met;
}
