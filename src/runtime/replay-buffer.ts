/**
 * What a conversation keeps so late subscribers get exactly what they missed (SPEC §5): the
 * text so far of items in progress, and the live events held back while a subscriber's replay
 * runs. Both keep streamed text as {@link StreamedText}, never one entry per delta, so 200,000
 * deltas cost their characters, not 200,000 objects.
 */
import type { AnyNotification, ItemDelta } from '../protocol/index.js';
import { StreamedText } from './streamed-text.js';

/** The text fields of a delta, in the order a replay sends an item's text so far. */
export const DELTA_TEXT_FIELDS = ['text', 'reasoning', 'reasoningRaw', 'output'] as const;
/** A text field of a delta. */
export type DeltaTextField = (typeof DELTA_TEXT_FIELDS)[number];

/**
 * Most characters in one replayed delta: the text so far of a long item goes out in pieces,
 * each paced by the subscriber, so no replay message outgrows a connection's send buffer.
 */
export const REPLAY_DELTA_CHARS = 64 * 1024;

/** Counted for each held delta besides its text (ids and envelope), in characters. */
const HELD_DELTA_OVERHEAD = 200;

type StartedEvent = Extract<AnyNotification, { method: 'item/started' }>;
type DeltaEvent = Extract<AnyNotification, { method: 'item/delta' }>;

/**
 * An item in progress: its `item/started` event and its streamed text so far. Reasoning
 * summary text is kept per part (`partIndex`), so a late subscriber rebuilds the same parts.
 */
export class ItemInProgress {
  readonly text = new StreamedText();
  readonly reasoningParts: StreamedText[] = [];
  readonly reasoningRaw = new StreamedText();
  readonly output = new StreamedText();

  constructor(readonly started: StartedEvent) {}

  /** Adds a delta's text. */
  add(delta: ItemDelta): void {
    this.text.append(delta.text);
    if (delta.reasoning) (this.reasoningParts[delta.partIndex ?? 0] ??= new StreamedText()).append(delta.reasoning);
    this.reasoningRaw.append(delta.reasoningRaw);
    this.output.append(delta.output);
  }

  /**
   * Marks what it holds now (the texts only grow), for a replay that runs later: the returned
   * function yields the deltas of exactly that prefix, at most `REPLAY_DELTA_CHARS` characters
   * each — reasoning part by part, then text, raw reasoning and output.
   */
  mark(): () => Generator<ItemDelta> {
    const parts = this.reasoningParts.map((part) => part.length);
    const lengths = { text: this.text.length, reasoningRaw: this.reasoningRaw.length, output: this.output.length };
    const fields = { text: this.text, reasoningRaw: this.reasoningRaw, output: this.output };
    const reasoningParts = this.reasoningParts;
    return function* deltas() {
      for (const [partIndex, length] of parts.entries()) {
        const part = reasoningParts[partIndex];
        if (!part || !length) continue;
        for (const reasoning of part.slices(REPLAY_DELTA_CHARS, length)) yield { reasoning, partIndex };
      }
      for (const key of ['text', 'reasoningRaw', 'output'] as const) {
        for (const piece of fields[key].slices(REPLAY_DELTA_CHARS, lengths[key])) yield { [key]: piece };
      }
    };
  }
}

/**
 * An event held back for a subscriber whose replay is still running. Consecutive deltas of one
 * item (and one reasoning part) are merged into one entry.
 */
export type HeldEntry = { event: AnyNotification; size: number } | { delta: DeltaEvent; texts: Record<DeltaTextField, StreamedText>; size: number };

/** Holds `event` back; returns what it adds to the held size (characters, about). */
export function holdEvent(held: HeldEntry[], event: AnyNotification): number {
  if (event.method !== 'item/delta') {
    const size = JSON.stringify(event).length;
    held.push({ event, size });
    return size;
  }
  const last = held.at(-1);
  let entry: Extract<HeldEntry, { delta: DeltaEvent }>;
  let added = 0;
  // Text of two reasoning parts stays apart: the client files each under its partIndex.
  if (last && 'delta' in last && last.delta.params.itemId === event.params.itemId && last.delta.params.delta.partIndex === event.params.delta.partIndex) entry = last;
  else {
    entry = { delta: event, texts: { text: new StreamedText(), reasoning: new StreamedText(), reasoningRaw: new StreamedText(), output: new StreamedText() }, size: HELD_DELTA_OVERHEAD };
    held.push(entry);
    added = HELD_DELTA_OVERHEAD;
  }
  for (const key of DELTA_TEXT_FIELDS) {
    const piece = event.params.delta[key];
    if (!piece) continue;
    entry.texts[key].append(piece);
    added += piece.length;
  }
  entry.size += added;
  return added;
}

/** A held entry as the events to send: a merged delta as deltas of at most {@link REPLAY_DELTA_CHARS} characters each. */
export function* heldEvents(entry: HeldEntry): Generator<AnyNotification> {
  if ('event' in entry) {
    yield entry.event;
    return;
  }
  const { partIndex } = entry.delta.params.delta;
  for (const key of DELTA_TEXT_FIELDS) {
    for (const piece of entry.texts[key].slices(REPLAY_DELTA_CHARS)) {
      const delta: ItemDelta = key === 'reasoning' && partIndex !== undefined ? { reasoning: piece, partIndex } : { [key]: piece };
      yield { method: 'item/delta', params: { ...entry.delta.params, delta } };
    }
  }
}
