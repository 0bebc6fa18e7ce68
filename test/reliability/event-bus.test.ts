/**
 * A conversation's event fan-out: a listener that throws is reported, stays subscribed, and
 * does not keep the event from the other listeners.
 */
import { describe, expect, it } from 'vitest';
import type { AnyNotification } from '../../src/protocol/index.js';
import { EventBus } from '../../src/runtime/event-bus.js';

const event = (text: string): AnyNotification => ({ method: 'item/delta', params: { conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', itemId: 'item_1', kind: 'assistant_message', seq: 0, delta: { text } } });

describe('EventBus', () => {
  it('reports a throwing listener, keeps it, and still delivers to the listeners after it', () => {
    const reports: { message: string; method: string; failures: number }[] = [];
    const bus = new EventBus((error, failed, failures) => reports.push({ message: (error as Error).message, method: failed.method, failures }));
    const seenByBroken: string[] = [];
    const seenByOther: string[] = [];
    bus.subscribe((received) => {
      seenByBroken.push(received.method);
      throw new Error('socket gone');
    });
    bus.subscribe((received) => seenByOther.push(received.method));
    bus.publish(event('a'));
    bus.publish(event('b'));
    expect(seenByOther).toEqual(['item/delta', 'item/delta']);
    expect(seenByBroken).toHaveLength(2);
    expect(bus.size).toBe(2);
    expect(reports).toEqual([
      { message: 'socket gone', method: 'item/delta', failures: 1 },
      { message: 'socket gone', method: 'item/delta', failures: 2 },
    ]);
  });

  it('keeps delivering when the error report itself throws', () => {
    const bus = new EventBus(() => {
      throw new Error('logger broken');
    });
    const seen: string[] = [];
    bus.subscribe(() => {
      throw new Error('listener broken');
    });
    bus.subscribe((received) => seen.push(received.method));
    bus.publish(event('a'));
    expect(seen).toEqual(['item/delta']);
  });
});
