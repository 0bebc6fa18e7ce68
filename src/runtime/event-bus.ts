import type { AnyNotification } from '../protocol/index.js';

/** Receives a conversation's live events. */
export type EventListener = (event: AnyNotification) => void;

/**
 * Fan-out of one conversation's events to its subscribers (clients, adapters, tests).
 * A listener that throws is removed, so one broken subscriber cannot stop the others.
 */
export class EventBus {
  private readonly listeners = new Set<EventListener>();

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Delivers an event to every listener, synchronously, in subscription order. */
  publish(event: AnyNotification): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        this.listeners.delete(listener);
      }
    }
  }

  /** Number of listeners (clients attached). */
  get size(): number {
    return this.listeners.size;
  }
}
