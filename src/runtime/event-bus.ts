import type { AnyNotification } from '../protocol/index.js';

/** Receives a conversation's live events. */
export type EventListener = (event: AnyNotification) => void;

/**
 * Told when a listener throws: the error, the event it was given, and how many times that
 * listener has thrown so far (1 the first time).
 */
export type ListenerErrorHandler = (error: unknown, event: AnyNotification, failures: number) => void;

/**
 * Fan-out of one conversation's events to its subscribers (clients, adapters, tests).
 * A listener that throws is reported to the error handler and stays subscribed (a client's
 * one bad frame must not cut it off); the other listeners still get the event.
 */
export class EventBus {
  private readonly listeners = new Map<EventListener, { failures: number }>();

  /** @param onListenerError told about every throwing listener (default: nothing; the server passes its logger) */
  constructor(private readonly onListenerError: ListenerErrorHandler = () => undefined) {}

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: EventListener): () => void {
    this.listeners.set(listener, { failures: 0 });
    return () => this.listeners.delete(listener);
  }

  /** Delivers an event to every listener, synchronously, in subscription order. */
  publish(event: AnyNotification): void {
    for (const [listener, record] of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        record.failures += 1;
        try {
          this.onListenerError(error, event, record.failures);
        } catch {
          // A failing report must not stop delivery either.
        }
      }
    }
  }

  /** Number of listeners (clients attached). */
  get size(): number {
    return this.listeners.size;
  }
}
