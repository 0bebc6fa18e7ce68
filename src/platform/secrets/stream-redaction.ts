/**
 * Redaction of streamed text as it goes to one client (SPEC §9: secrets redacted wherever they
 * would appear). Each streamed text of an item in progress (assistant `text`, `reasoning` per
 * summary part, `reasoningRaw`, tool `output`) is redacted as one stream with
 * {@link SecretRedactor.redactStreamChunk}, so a value split across `item/delta` chunks cannot
 * be put back together by the client. What a stream holds back goes out (redacted) as a last
 * `item/delta` just before the item's `item/completed`, or at `turn/completed` for an item
 * that never completed; so the deltas a client receives still concatenate to the item's text,
 * redacted. A tool's output stream may stop where the output goes on (the streaming bound, a
 * command still running when the call returns): what it holds at its end is hidden, not given
 * out. The output of a background command read again (`write_stdin`, `kill_command`) begins
 * where an earlier call's stopped: a piece of a value it may begin with is hidden too.
 *
 * One instance per connection: it sees exactly the deltas that connection receives, a
 * replay's included (`item/started`, then the text so far in slices, then live deltas), so
 * the streams it follows are the connection's own.
 */
import type { AnyNotification, ItemDelta } from '../../protocol/index.js';
import { streamContinuesEarlierOutput } from './cut-texts.js';
import type { SecretRedactor, StreamHeld } from './secret-redactor.js';

type DeltaEvent = Extract<AnyNotification, { method: 'item/delta' }>;
type StreamedField = 'text' | 'reasoning' | 'reasoningRaw' | 'output';

const STREAMED_FIELDS: readonly StreamedField[] = ['reasoning', 'text', 'reasoningRaw', 'output'];

/** The streams of one item in progress: raw text held back per stream. */
interface ItemStreams {
  /** The last delta's params (ids, kind, seq), for the delta that gives out what is held. */
  params: DeltaEvent['params'];
  /** What each stream holds, per stream key (`text`, `reasoningRaw`, `output`, `reasoning:<partIndex>`). */
  held: Map<string, StreamHeld>;
}

function streamKey(field: StreamedField, partIndex: number | undefined): string {
  return field === 'reasoning' ? `reasoning:${partIndex ?? 0}` : field;
}

/** Redacts the streamed text of the notifications going to one client; see the module comment. */
export class StreamRedaction {
  /** Per conversation and item id, its streams (only items with text held back or streamed). */
  private readonly items = new Map<string, ItemStreams>();

  /** @param redactor the secret values to hide */
  constructor(private readonly redactor: SecretRedactor) {}

  /**
   * The notifications to send in place of `event`, in order: an `item/delta` redacted as part
   * of its streams (none when all its text is held back), `item/completed` and
   * `turn/completed` preceded by a delta giving out what their item's streams held, any other
   * event as it is. Secret values in the events' other strings are not handled here.
   * @param event a notification on its way to the client
   */
  redact(event: AnyNotification): AnyNotification[] {
    // With no values to hide and nothing held, every event is its own (and stays shared).
    if (!this.redactor.active && this.items.size === 0) return [event];
    switch (event.method) {
      case 'item/delta':
        return this.redactDelta(event);
      case 'item/started': {
        // A new subscription replays the item from its start: what an earlier one held is stale.
        const { partial, ...ids } = event.params;
        this.items.delete(`${ids.conversationId}\n${ids.itemId}`);
        if (streamContinuesEarlierOutput(ids.kind, partial)) {
          this.items.set(`${ids.conversationId}\n${ids.itemId}`, { params: { ...ids, delta: {} }, held: new Map([['output', this.redactor.cutStreamStart()]]) });
        }
        return [event];
      }
      case 'item/completed':
        return [...this.flush((key) => key === `${event.params.conversationId}\n${event.params.item.id}`), event];
      case 'turn/completed':
        return [...this.flush((_, streams) => streams.params.conversationId === event.params.conversationId && streams.params.turnId === event.params.turn.id), event];
      default:
        return [event];
    }
  }

  /** Forgets the streams of a conversation the client no longer follows (its subscription ended). */
  forgetConversation(conversationId: string): void {
    for (const [key, streams] of [...this.items]) if (streams.params.conversationId === conversationId) this.items.delete(key);
  }

  /**
   * Number of items whose streams are followed: nothing is kept after an item ends (tested), and
   * a connection with none and no secret values skips {@link redact} altogether.
   */
  get itemCount(): number {
    return this.items.size;
  }

  private redactDelta(event: DeltaEvent): AnyNotification[] {
    const { params } = event;
    const fields = STREAMED_FIELDS.filter((field) => typeof params.delta[field] === 'string');
    if (fields.length === 0) return [event];
    const key = `${params.conversationId}\n${params.itemId}`;
    const streams = this.items.get(key) ?? { params, held: new Map<string, StreamHeld>() };
    streams.params = params;
    this.items.set(key, streams);
    const delta: ItemDelta = { ...params.delta };
    let empty = true;
    for (const field of fields) {
      const stream = streamKey(field, params.delta.partIndex);
      const redacted = this.redactor.redactStreamChunk(streams.held.get(stream), params.delta[field] as string);
      if (redacted.held) streams.held.set(stream, redacted.held);
      else streams.held.delete(stream);
      if (redacted.text) {
        delta[field] = redacted.text;
        empty = false;
      } else {
        delete delta[field];
        if (field === 'reasoning') delete delta.partIndex;
      }
    }
    if (empty) return [];
    return [{ method: 'item/delta', params: { ...params, delta } }];
  }

  /** Deltas giving out (redacted) what the matching items' streams hold; those items are forgotten. */
  private flush(matches: (key: string, streams: ItemStreams) => boolean): AnyNotification[] {
    const events: AnyNotification[] = [];
    for (const [key, streams] of [...this.items]) {
      if (!matches(key, streams)) continue;
      this.items.delete(key);
      for (const [stream, held] of streams.held) {
        const [field, partIndex] = stream.split(':') as [StreamedField, string | undefined];
        const text = this.redactor.endStream(held, { end: field === 'output' });
        if (text === '') continue;
        const delta: ItemDelta = { [field]: text, ...(partIndex !== undefined ? { partIndex: Number(partIndex) } : {}) };
        events.push({ method: 'item/delta', params: { ...streams.params, delta } });
      }
    }
    return events;
  }
}

/**
 * The redaction of one plain stream of text (a terminal's output) across its chunks, with
 * {@link SecretRedactor.redactStreamChunk}: what could still be the beginning of a value is
 * held until the next chunk, and given out redacted at the end.
 * @param redactor the platform's secret values
 * @returns `push(chunk)` giving what may go out now, and `end()` giving what was held
 */
export function textStreamRedaction(redactor: SecretRedactor): { push(chunk: string): string; end(): string } {
  let held: StreamHeld | undefined;
  return {
    push(chunk) {
      const result = redactor.redactStreamChunk(held, chunk);
      held = result.held;
      return result.text;
    },
    end() {
      const rest = redactor.endStream(held);
      held = undefined;
      return rest;
    },
  };
}
