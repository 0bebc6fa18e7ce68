// Child process of index-crash.test.ts: writes conversations through the dao
// (ConversationStore over FileLogStorage + SqliteRecordStorage + the FTS5 search, all in
// <root>) until it is killed. After every dao call that resolved (log synced, then index and
// search updated) it prints "ack <conversation id> <stream> <seq> [<word>]", and "done <id>"
// when a conversation is complete.
// Arguments: <URL of the compiled src/ directory, with a trailing slash> <root> <run number>.
import path from 'node:path';
import process from 'node:process';
import { URL } from 'node:url';

const [sourceUrl, root, run] = process.argv.slice(2);
const { ConversationStore } = await import(new URL('dao/conversation-store.js', sourceUrl).href);
const { SqliteConversationSearchIndex } = await import(new URL('dao/sqlite-conversation-search-index.js', sourceUrl).href);
const { FileLogStorage, SqliteRecordStorage, openSqliteDatabase } = await import(new URL('storage/index.js', sourceUrl).href);

const database = openSqliteDatabase(path.join(root, 'metadata.db'));
const logs = new FileLogStorage(root, { onProblem: (problem) => process.stderr.write(`problem ${JSON.stringify(problem)}\n`) });
const store = new ConversationStore(logs, new SqliteRecordStorage(database), { search: new SqliteConversationSearchIndex(database) });
const say = (line) => process.stdout.write(`${line}\n`);

for (let number = 1; ; number += 1) {
  const id = `conv_r${String(run).padStart(3, '0')}n${String(number).padStart(4, '0')}`;
  const sessionId = `sess_${id}`;
  const time = Date.now();
  const conversation = { id, title: `Title t${run}x${number}`, workLocation: [{ executor: 'local', cwd: '/home/dev/project' }], rootSessionId: sessionId, createdAt: time, updatedAt: time };
  const session = { id: sessionId, conversationId: id, parentSessionId: null, agent: 'default', model: 'mock/model', status: 'idle', activeTurnId: null, queuedInputs: [], pendingApprovals: [], createdAt: time, updatedAt: time };
  say(`ack ${id} metadata ${await store.createConversation(conversation, session)}`);
  for (const batch of [[1, 2], [3]]) {
    const items = batch.map((index) => {
      const word = `w${run}x${number}x${index}`;
      const at = Date.now();
      const base = { id: `item_${id}_${index}`, sessionId, turnId: 'turn_1', createdAt: at, completedAt: at, status: 'completed' };
      return index === 2
        ? { ...base, kind: 'assistant_message', text: `answer ${word}`, model: 'mock/model' }
        : { ...base, kind: 'user_message', content: [{ type: 'text', text: `question ${word}` }], mode: 'input' };
    });
    const stored = await store.appendItems(id, sessionId, items);
    stored.forEach((entry, position) => say(`ack ${id} ${sessionId} ${entry.seq} w${run}x${number}x${batch[position]}`));
  }
  const renamed = { ...conversation, title: `Renamed r${run}x${number}`, updatedAt: Date.now() };
  say(`ack ${id} metadata ${await store.appendMetadata(id, [{ type: 'conversation', conversation: renamed }])}`);
  say(`done ${id}`);
}
