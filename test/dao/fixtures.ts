/**
 * Builders of conversations, sessions and items for the dao tests, and the storages the
 * server composes (staged file logs, staged SQLite index, search in the same file).
 */
import path from 'node:path';
import { ConversationStore } from '../../src/dao/conversation-store.js';
import { SqliteConversationSearchIndex } from '../../src/dao/sqlite-conversation-search-index.js';
import { ConversationSchema, SessionSchema, type Conversation, type Item, type Session } from '../../src/protocol/index.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogStorage } from '../../src/storage/log-storage.js';
import { openSqliteDatabase, type SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { StagedLogStorage } from '../../src/storage/staged/staged-log-storage.js';
import { StagedRecordStorage } from '../../src/storage/staged/staged-record-storage.js';

/** A conversation with its root session, created at `time` (ms). */
export function newConversation(number: number, title: string, time = 1_700_000_000_000 + number * 1000): { conversation: Conversation; session: Session } {
  const id = `conv_${String(number).padStart(4, '0')}`;
  const sessionId = `sess_${String(number).padStart(4, '0')}`;
  const session = SessionSchema.parse({ id: sessionId, conversationId: id, parentSessionId: null, agent: 'default', model: 'mock/model', status: 'idle', activeTurnId: null, queuedInputs: [], createdAt: time, updatedAt: time });
  const conversation = ConversationSchema.parse({ id, title, workLocation: [{ executor: 'local', cwd: `/home/dev/project-${number}` }], rootSessionId: sessionId, createdAt: time, updatedAt: time });
  return { conversation, session };
}

let itemNumber = 0;

function base(sessionId: string): { id: string; sessionId: string; turnId: string; createdAt: number; completedAt: number; status: 'completed' } {
  itemNumber += 1;
  return { id: `item_${itemNumber}`, sessionId, turnId: 'turn_1', createdAt: itemNumber, completedAt: itemNumber, status: 'completed' };
}

/** A user message item. */
export function userMessage(sessionId: string, text: string): Item {
  return { ...base(sessionId), kind: 'user_message', content: [{ type: 'text', text }], mode: 'input' };
}

/** An assistant message item. */
export function assistantMessage(sessionId: string, text: string): Item {
  return { ...base(sessionId), kind: 'assistant_message', text, model: 'mock/model' };
}

/** A tool call item whose output is `output`. */
export function toolCall(sessionId: string, output: string): Item {
  return { ...base(sessionId), kind: 'tool_call', callId: `call_${itemNumber}`, toolName: 'exec_command', arguments: { command: 'echo' }, output, isError: false, exitCode: 0, durationMs: 1 };
}

/** The storages of a data directory as the server composes them, and the store on top. */
export interface ComposedStore {
  store: ConversationStore;
  database: SqliteDatabase;
  close(): Promise<void>;
}

/** Opens the data directory `root` as the server does (staged storages, search in metadata.db). */
export function openComposedStore(root: string, options: { logs?: LogStorage } = {}): ComposedStore {
  const logs = new StagedLogStorage(options.logs ?? new FileLogStorage(root));
  const database = openSqliteDatabase(path.join(root, 'metadata.db'));
  const index = new StagedRecordStorage(new SqliteRecordStorage(database));
  const search = new SqliteConversationSearchIndex(database);
  const store = new ConversationStore(logs, index, { search });
  return {
    store,
    database,
    async close() {
      await store.close();
      await search.close();
      await index.close();
      await logs.close();
      database.close();
    },
  };
}
