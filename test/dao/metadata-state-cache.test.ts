/**
 * Incremental folding of metadata writes: the state after each write, folded from the cached
 * state and the appended entries only, equals the fold of the whole log (SPEC §4: last entry
 * wins, in order of first appearance), over random write sequences.
 */
import { describe, expect, it } from 'vitest';
import { foldMetadata, type MetadataEntry } from '../../src/dao/metadata-log.js';
import { MetadataStateCache } from '../../src/dao/metadata-state-cache.js';
import type { LogEntry } from '../../src/storage/log-storage.js';
import { newConversation } from './fixtures.js';

function randomEntry(random: () => number, conversationId: string, sessionId: string, step: number): MetadataEntry {
  const { conversation, session } = newConversation(1, 'T');
  const pick = random();
  if (pick < 0.2) return { type: 'conversation', conversation: { ...conversation, id: conversationId, title: `title ${step}`, updatedAt: step } };
  if (pick < 0.5) return { type: 'session', session: { ...session, id: `${sessionId}_${Math.floor(random() * 3)}`, conversationId, updatedAt: step } };
  return {
    type: 'turn',
    turn: { id: `turn_${Math.floor(random() * 5)}`, sessionId, conversationId, status: random() < 0.5 ? 'running' : 'completed', steps: step, usage: { inputTokens: step, outputTokens: 0, totalTokens: step }, startedAt: step, completedAt: null },
  } as MetadataEntry;
}

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

describe('MetadataStateCache', () => {
  it('folds each write from the cached state to the same state as folding the whole log', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const random = seeded(seed);
      const cache = new MetadataStateCache();
      const { conversation, session } = newConversation(1, 'first');
      const log: LogEntry<MetadataEntry>[] = [];
      const write = (values: MetadataEntry[]) => {
        const appended = values.map((value) => ({ seq: log.length + 1 + values.indexOf(value), value }));
        log.push(...appended);
        const advanced = cache.advance(conversation.id, appended);
        expect(advanced, `seed ${seed}: the cache knows the state before each write`).toBeDefined();
        cache.remember(conversation.id, advanced?.state);
        expect(advanced?.state, `seed ${seed} after ${log.length} entries`).toEqual(foldMetadata(conversation.id, log, () => undefined));
      };
      write([{ type: 'conversation', conversation }, { type: 'session', session }]);
      for (let step = 0; step < 40; step++) {
        const count = 1 + Math.floor(random() * 3);
        write(Array.from({ length: count }, (_, index) => randomEntry(random, conversation.id, session.id, step * 10 + index)));
      }
    }
  });

  it('does not guess when it did not see the write before (another writer, an evicted state)', () => {
    const cache = new MetadataStateCache(1);
    const first = newConversation(1, 'one');
    const second = newConversation(2, 'two');
    const start = (entry: typeof first) => [
      { seq: 1, value: { type: 'conversation', conversation: entry.conversation } as MetadataEntry },
      { seq: 2, value: { type: 'session', session: entry.session } as MetadataEntry },
    ];
    cache.remember(first.conversation.id, cache.advance(first.conversation.id, start(first))?.state);
    const renamed = { seq: 3, value: { type: 'conversation', conversation: { ...first.conversation, title: 'renamed' } } as MetadataEntry };
    // A gap (seq 4 follows seq 2): someone else wrote seq 3.
    expect(cache.advance(first.conversation.id, [{ ...renamed, seq: 4 }])).toBeUndefined();
    // Remembering a second conversation evicts the first (capacity 1).
    cache.remember(second.conversation.id, cache.advance(second.conversation.id, start(second))?.state);
    expect(cache.advance(first.conversation.id, [renamed])).toBeUndefined();
    expect(cache.advance(second.conversation.id, [{ ...renamed, value: { type: 'conversation', conversation: { ...second.conversation, title: 'x' } } }])?.state?.conversation.title).toBe('x');
  });

  it('forgets a deleted conversation', () => {
    const cache = new MetadataStateCache();
    const { conversation, session } = newConversation(1, 'one');
    const start = [
      { seq: 1, value: { type: 'conversation', conversation } as MetadataEntry },
      { seq: 2, value: { type: 'session', session } as MetadataEntry },
    ];
    cache.remember(conversation.id, cache.advance(conversation.id, start)?.state);
    const deleted = cache.advance(conversation.id, [{ seq: 3, value: { type: 'conversation_deleted', conversationId: conversation.id, deletedAt: 5 } }]);
    expect(deleted).toEqual({ state: undefined });
    cache.remember(conversation.id, deleted?.state);
    expect(cache.advance(conversation.id, [{ seq: 4, value: start[0]!.value }])).toBeUndefined();
  });
});
