/**
 * The items one model answer streams into while it arrives: its reasoning and its text, each
 * announced (`item/started`) at its first delta and streamed (`item/delta`). When an attempt
 * breaks off and is retried, or the turn is interrupted, what it streamed is ended as a stored
 * item with that status (`failed`: cut off by the provider; `interrupted`), so clients show it as
 * cut short instead of leaving it open, and the next attempt streams into new items, never into
 * the cut-off ones. Such items are not sent back to the model (see `context-builder.ts`), except
 * an interrupted answer's text, which the user saw and stopped.
 */
import { newId } from '../ids.js';
import type { Item, ItemDelta, ItemOf } from '../protocol/index.js';
import type { ProviderConfig } from '../config/providers.js';
import { reasoningDelta, reasoningText } from './reasoning-parts.js';
import { StreamedText } from './streamed-text.js';

/** What the answer needs from the agent loop. */
export interface StreamedAnswerHost {
  model: { name: string; kind: ProviderConfig['kind'] };
  itemStarted(itemId: string, kind: Item['kind'], partial: Record<string, unknown>): void;
  itemDelta(itemId: string, delta: ItemDelta): void;
  record(item: Item): Promise<void>;
  /** The fields every item of the turn has, for an item of this id created at `createdAt`. */
  base(id: string, createdAt: number): { id: string; sessionId: string; turnId: string; createdAt: number; completedAt: number };
}

/** The items of one answer in progress; {@link end} closes them and starts afresh. */
export class StreamedAnswer {
  /** Id of the `assistant_message` the text streams into. */
  textItemId = newId('item');
  /** Creation time of that item, ms since the epoch. */
  textCreatedAt = Date.now();
  /** Id of the `reasoning` item the reasoning streams into. */
  reasoningItemId = newId('item');
  /** Creation time of that item, ms since the epoch. */
  reasoningCreatedAt = Date.now();
  // Joined as it comes (not `+=`, which keeps one rope node per delta until the answer ends).
  private text = new StreamedText();
  /** Reasoning text streamed so far, by reasoning block; undefined until the first delta. */
  private reasoning: string[] | undefined;

  constructor(private readonly host: StreamedAnswerHost) {}

  /** Streams a text delta into the answer's `assistant_message` (announced at its first delta). */
  readonly onTextDelta = (delta: string): void => {
    if (this.text.length === 0) this.host.itemStarted(this.textItemId, 'assistant_message', { model: this.host.model.name });
    this.text.append(delta);
    this.host.itemDelta(this.textItemId, { text: delta });
  };

  /** Streams a reasoning delta of block `partIndex` into the answer's `reasoning` item (announced at its first delta). */
  readonly onReasoningDelta = (delta: string, partIndex: number): void => {
    if (!this.reasoning) {
      this.reasoning = [];
      this.host.itemStarted(this.reasoningItemId, 'reasoning', {});
    }
    this.reasoning[partIndex] = (this.reasoning[partIndex] ?? '') + delta;
    this.host.itemDelta(this.reasoningItemId, reasoningDelta(this.host.model.kind, delta, partIndex));
  };

  /**
   * Stores what was streamed as items ended with `status` (reasoning first, as it came), without
   * the provider data a whole answer's reasoning keeps: a cut-off block has no signature or
   * encrypted content to send back. Then starts afresh with new item ids.
   */
  async end(status: 'failed' | 'interrupted'): Promise<void> {
    const { reasoning, text } = this;
    const textItem = { id: this.textItemId, createdAt: this.textCreatedAt };
    const reasoningItem = { id: this.reasoningItemId, createdAt: this.reasoningCreatedAt };
    this.text = new StreamedText();
    this.reasoning = undefined;
    this.textItemId = newId('item');
    this.textCreatedAt = Date.now();
    this.reasoningItemId = newId('item');
    this.reasoningCreatedAt = Date.now();
    if (reasoning) {
      const parts = Array.from(reasoning, (part) => ({ text: part ?? '' }));
      const item: ItemOf<'reasoning'> = { ...this.host.base(reasoningItem.id, reasoningItem.createdAt), kind: 'reasoning', status, ...reasoningText(this.host.model.kind, parts), model: this.host.model.name };
      await this.host.record(item);
    }
    if (text.length > 0) {
      await this.host.record({ ...this.host.base(textItem.id, textItem.createdAt), kind: 'assistant_message', status, text: text.toString(), model: this.host.model.name });
    }
  }
}
