/**
 * What one client connection holds per conversation: its subscriptions (`conversation/subscribe`,
 * SPEC §5) and other holds (terminals), so they end together when the connection ends or the
 * caller's access to the conversation goes (docs/platform.md "Members and access").
 */

/** The subscriptions and holds of one connection, by conversation. */
export class ConnectionSubscriptions {
  /** Per conversation, the controller that ends the subscription (registered before its replay). */
  private readonly subscriptions = new Map<string, AbortController>();
  /** What the connection holds open per conversation besides subscriptions (terminals), by the function that closes it. */
  private readonly holds = new Map<() => void, string>();
  private closed = false;

  /** @param onEnded runs after a subscription ended by {@link end} (the connection forgets the conversation's pending state) */
  constructor(private readonly onEnded: (conversationId: string) => void) {}

  /**
   * Registers a subscription before its replay starts, ending any earlier one to the same
   * conversation; the returned signal aborts on unsubscribe, on a newer subscribe and when the
   * connection ends ({@link close}), whichever comes first. Aborted at once after `close`.
   */
  begin(conversationId: string): AbortSignal {
    this.subscriptions.get(conversationId)?.abort();
    const controller = new AbortController();
    if (this.closed) controller.abort();
    else this.subscriptions.set(conversationId, controller);
    return controller.signal;
  }

  /** Whether the connection is open and subscribed to a conversation. */
  has(conversationId: string): boolean {
    return !this.closed && this.subscriptions.has(conversationId);
  }

  /** Ends a subscription if `signal` is still the current one (e.g. its conversation was not found). */
  end(conversationId: string, signal?: AbortSignal): void {
    const current = this.subscriptions.get(conversationId);
    if (!current || (signal && current.signal !== signal)) return;
    current.abort();
    this.subscriptions.delete(conversationId);
    this.onEnded(conversationId);
  }

  /** Keeps `close` until the conversation's access goes ({@link recheck}); returns the function that forgets it. */
  hold(conversationId: string, close: () => void): () => void {
    this.holds.set(close, conversationId);
    return () => this.holds.delete(close);
  }

  /**
   * Ends every subscription and closes every hold of a conversation `mayRead` refuses now. A
   * hold whose `close` throws had already ended on its own.
   */
  recheck(mayRead: (conversationId: string) => boolean): void {
    if (this.closed) return;
    for (const conversationId of [...this.subscriptions.keys()]) if (!mayRead(conversationId)) this.end(conversationId);
    for (const [close, conversationId] of [...this.holds]) {
      if (mayRead(conversationId)) continue;
      this.holds.delete(close);
      try {
        close();
      } catch {
        // Already ended on its own.
      }
    }
  }

  /** Ends every subscription (the connection ended); holds are closed by their owners' own clean-up. */
  close(): void {
    this.closed = true;
    for (const controller of this.subscriptions.values()) controller.abort();
    this.subscriptions.clear();
  }
}
