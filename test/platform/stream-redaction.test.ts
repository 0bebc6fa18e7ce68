/**
 * Redaction of streamed text (docs/platform.md, "Secrets"): a secret value split across
 * `item/delta` chunks never reaches a client whole, and the redacted deltas concatenate to
 * exactly the redacted text (checked over many seeded random chunkings).
 */
import { describe, expect, it } from 'vitest';
import type { AnyNotification } from '../../src/protocol/index.js';
import { SecretRedactor, type StreamHeld } from '../../src/platform/secrets/secret-redactor.js';
import { redactorOf, seededRandom } from './redaction-helpers.js';
import { StreamRedaction } from '../../src/platform/secrets/stream-redaction.js';


/** What a client assembles from `chunks` streamed through the redactor, and every piece it received. */
function streamed(redactor: SecretRedactor, chunks: string[]): { text: string; pieces: string[] } {
  let held: StreamHeld | undefined;
  const pieces: string[] = [];
  for (const chunk of chunks) {
    const result = redactor.redactStreamChunk(held, chunk);
    held = result.held;
    pieces.push(result.text);
  }
  pieces.push(redactor.endStream(held));
  return { text: pieces.join(''), pieces };
}

/** `text` cut at the given positions. */
function cutAt(text: string, positions: number[]): string[] {
  const sorted = [...new Set(positions)].sort((a, b) => a - b);
  const chunks: string[] = [];
  let start = 0;
  for (const position of sorted) {
    chunks.push(text.slice(start, position));
    start = position;
  }
  chunks.push(text.slice(start));
  return chunks;
}

/** No client-visible prefix of the stream holds a value whole (what a client could reassemble). */
function expectNoValueVisible(pieces: string[], values: string[]): void {
  let visible = '';
  const seen: string[] = [];
  for (const piece of pieces) {
    visible += piece;
    for (const value of values) if (visible.includes(value)) seen.push(value);
  }
  expect(seen).toEqual([]);
}

describe('SecretRedactor.redactStreamChunk', () => {
  const SECRET = 'tok_ABCD123';

  it('catches a value split across two chunks', () => {
    const redactor = redactorOf(SECRET);
    const first = redactor.redactStreamChunk(undefined, 'key tok_AB');
    expect(first.text).toBe('key ');
    expect(first.held?.text.slice(first.held.from)).toBe('tok_AB');
    const second = redactor.redactStreamChunk(first.held, 'CD123 done');
    expect(second).toEqual({ text: '*** done', held: undefined });
  });

  it('catches a value split at every position, and across three or more chunks', () => {
    const redactor = redactorOf(SECRET);
    const text = `before ${SECRET} after`;
    const start = text.indexOf(SECRET);
    for (let cut = start; cut <= start + SECRET.length; cut++) {
      const result = streamed(redactor, cutAt(text, [cut]));
      expect(result.text).toBe('before *** after');
      expectNoValueVisible(result.pieces, [SECRET]);
    }
    const characterByCharacter = streamed(redactor, [...text]);
    expect(characterByCharacter.text).toBe('before *** after');
    const threeWays = streamed(redactor, ['before tok', '_ABC', 'D1', '23 after']);
    expect(threeWays.pieces).toEqual(['before ', '', '', '*** after', '']);
  });

  it('gives out at the end what could only have begun a value', () => {
    const redactor = redactorOf(SECRET);
    const result = streamed(redactor, ['the prefix tok_A', 'BC']);
    expect(result.pieces).toEqual(['the prefix ', '', 'tok_ABC']);
    // A held tail that turns out not to be a value goes out with the next chunk.
    expect(streamed(redactor, ['tok_AB', 'X']).pieces).toEqual(['', 'tok_ABX', '']);
  });

  it('redacts two values meeting at a chunk boundary, and a shorter value inside a longer one, as redactText does', () => {
    const redactor = redactorOf('alpha-secret', 'beta-secret', 'cd', 'abcdef');
    expect(streamed(redactor, ['x alpha-sec', 'retbeta-', 'secret y']).text).toBe('x ****** y');
    expect(streamed(redactor, ['ab', 'cd', 'ef']).text).toBe('***');
    expect(streamed(redactor, ['ab', 'cd', 'eX']).text).toBe(redactor.redactText('abcdeX'));
    expect(streamed(redactor, ['abc', 'd']).text).toBe('ab***');
    // A value that begins a longer one: the longer wins when it completes (longest first).
    const nested = redactorOf('tok_AB', SECRET);
    const held = nested.redactStreamChunk(undefined, 'x tok_AB');
    expect(held.text).toBe('x ');
    expect(held.held?.text.slice(held.held.from)).toBe('tok_AB');
    expect(streamed(nested, ['x tok_AB', 'CD123 y']).pieces).toEqual(['x ', '*** y', '']);
    expect(streamed(nested, ['x tok_AB', 'CD y']).text).toBe('x ***CD y');
  });

  it('equals redactText of the whole stream for seeded random chunkings, with and without values', () => {
    const values = ['tok_ABCD123', 'tok_AB', 'canary-7f3a9c2e', 'aaab', 'ab', 'x.y*z'];
    const redactor = redactorOf(...values);
    const random = seededRandom(20261130);
    const alphabet = 'ab_tokABCD123canry-7f9c2ex.y*z ';
    for (let round = 0; round < 400; round++) {
      // Texts mixing values, near misses (prefixes of values) and noise.
      let text = '';
      const parts = 1 + Math.floor(random() * 8);
      for (let part = 0; part < parts; part++) {
        const choice = random();
        const value = values[Math.floor(random() * values.length)] as string;
        if (choice < 0.3) text += value;
        else if (choice < 0.5) text += value.slice(0, 1 + Math.floor(random() * (value.length - 1)));
        else for (let count = Math.floor(random() * 10); count > 0; count--) text += alphabet[Math.floor(random() * alphabet.length)];
      }
      for (let chunking = 0; chunking < 10; chunking++) {
        const cuts = Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * (text.length + 1)));
        const result = streamed(redactor, cutAt(text, cuts));
        if (result.text !== redactor.redactText(text)) expect(result.text, `chunks ${JSON.stringify(cutAt(text, cuts))}`).toBe(redactor.redactText(text));
        expectNoValueVisible(result.pieces, values);
      }
    }
  });

  it('leaves text unchanged, in the same chunks, when no value is known', () => {
    const redactor = new SecretRedactor();
    expect(streamed(redactor, ['tok_AB', 'CD123']).pieces).toEqual(['tok_AB', 'CD123', '']);
  });
});

describe('StreamRedaction of notifications', () => {
  const SECRET = 'tok_ABCD123';
  const ids = { conversationId: 'c1', sessionId: 's1', turnId: 't1', itemId: 'i1', kind: 'assistant_message', seq: 3 };
  const delta = (fields: Record<string, unknown>, itemId = 'i1'): AnyNotification => ({ method: 'item/delta', params: { ...ids, itemId, delta: fields } }) as AnyNotification;
  const deltasOf = (events: AnyNotification[], field: string): string =>
    events.map((event) => (event.method === 'item/delta' ? ((event.params.delta as Record<string, string | undefined>)[field] ?? '') : '')).join('');

  it('redacts each stream of an item across its deltas and gives out what is held before item/completed', () => {
    const redaction = new StreamRedaction(redactorOf(SECRET));
    const sent: AnyNotification[] = [];
    const inputs = [
      delta({ reasoning: 'think tok_A', partIndex: 0 }),
      delta({ text: 'say tok_AB' }),
      delta({ reasoning: 'BCD123 ok', partIndex: 0 }),
      delta({ output: 'out tok_' }, 'i2'),
      delta({ text: 'CD123!' }),
      delta({ text: ' and tok_ABC' }),
      delta({ output: 'ABCD123' }, 'i2'),
    ];
    for (const event of inputs) sent.push(...redaction.redact(event));
    sent.push(...redaction.redact({ method: 'item/completed', params: { conversationId: 'c1', sessionId: 's1', seq: 4, item: { id: 'i1' } } } as unknown as AnyNotification));
    expect(JSON.stringify(sent)).not.toContain(SECRET);
    expect(deltasOf(sent, 'reasoning')).toBe('think *** ok');
    expect(deltasOf(sent, 'text')).toBe('say ***! and tok_ABC');
    expect(sent.at(-1)?.method).toBe('item/completed');
    // The item's last held text went out, as a delta of that item, just before its completion.
    expect(sent.at(-2)).toMatchObject({ method: 'item/delta', params: { itemId: 'i1', delta: { text: 'tok_ABC' } } });
    // i2 has not completed: its held text goes out when its turn completes.
    const ended = redaction.redact({ method: 'turn/completed', params: { conversationId: 'c1', turn: { id: 't1' }, seq: 5 } } as unknown as AnyNotification);
    expect(deltasOf([...sent, ...ended], 'output')).toBe('out ***');
    expect(redaction.itemCount).toBe(0);
  });

  it('a delta whose text is all held back is not sent; other events pass unchanged', () => {
    const redaction = new StreamRedaction(redactorOf(SECRET));
    expect(redaction.redact(delta({ text: 'tok_AB' }))).toEqual([]);
    const other = { method: 'turn/started', params: { conversationId: 'c1', turn: { id: 't2' }, seq: 1 } } as unknown as AnyNotification;
    expect(redaction.redact(other)).toEqual([other]);
  });

  it('a replay (item/started again, then the text so far in slices) starts the item over', () => {
    const redaction = new StreamRedaction(redactorOf(SECRET));
    const started = { method: 'item/started', params: { ...ids, partial: {} } } as AnyNotification;
    redaction.redact(started);
    expect(deltasOf(redaction.redact(delta({ text: 'a tok_AB' })), 'text')).toBe('a ');
    // The client subscribes again: the replay gives the text so far, cut inside the value.
    const replayed = [started, delta({ text: 'a tok_ABC' }), delta({ text: 'D123 b' })].flatMap((event) => redaction.redact(event));
    expect(deltasOf(replayed, 'text')).toBe('a *** b');
  });
});
