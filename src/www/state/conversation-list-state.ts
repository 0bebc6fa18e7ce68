/**
 * The conversation list: pages of `conversation/list` (cursor, full-text `query`, `cwd` and
 * `archived` filters) kept live by the list feed `conversations/subscribe`
 * (`conversation/created`, `conversation/updated` with `summary`, `conversation/deleted`;
 * docs/protocol.md, "The list feed").
 */
import type { ConversationSummary } from '../../protocol/entities.js';
import type { AnyNotification } from '../../protocol/methods.js';

/** The filters of the list. */
export interface ConversationFilters {
  query?: string;
  cwd?: string;
  archived?: boolean;
}

/** What the list needs of the protocol client. */
export interface ListRequester {
  request(method: 'conversation/list', params: { limit?: number; cursor?: string; query?: string; cwd?: string; archived?: boolean }): Promise<{ conversations: ConversationSummary[]; nextCursor?: string }>;
  request(method: 'conversations/subscribe', params: Record<string, never>): Promise<object>;
}

/** Conversations shown per page. */
export const LIST_PAGE_SIZE = 50;

/** The live, filtered conversation list. */
export class ConversationListState {
  conversations: ConversationSummary[] = [];
  nextCursor: string | undefined;
  filters: ConversationFilters = {};
  loading = false;
  error: string | undefined;
  version = 0;
  private readonly listeners = new Set<() => void>();
  private request = 0;

  constructor(private readonly client: ListRequester) {}

  /** Adds a change listener; returns its remover. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts the feed and loads the first page (call again after a reconnect). */
  async start(): Promise<void> {
    await this.client.request('conversations/subscribe', {}).catch(() => undefined);
    await this.reload();
  }

  /** Sets the filters and loads the first page for them. */
  async setFilters(filters: ConversationFilters): Promise<void> {
    this.filters = filters;
    await this.reload();
  }

  /** Loads the first page again. */
  async reload(): Promise<void> {
    const request = ++this.request;
    this.loading = true;
    this.changed();
    try {
      const page = await this.client.request('conversation/list', { limit: LIST_PAGE_SIZE, ...this.filterParams() });
      if (request !== this.request) return;
      this.conversations = page.conversations;
      this.nextCursor = page.nextCursor;
      this.error = undefined;
    } catch (error) {
      if (request === this.request) this.error = error instanceof Error ? error.message : String(error);
    } finally {
      if (request === this.request) this.loading = false;
      this.changed();
    }
  }

  /** Appends the next page, when there is one. */
  async loadMore(): Promise<void> {
    if (!this.nextCursor || this.loading) return;
    const request = this.request;
    this.loading = true;
    this.changed();
    try {
      const page = await this.client.request('conversation/list', { limit: LIST_PAGE_SIZE, cursor: this.nextCursor, ...this.filterParams() });
      if (request !== this.request) return;
      const known = new Set(this.conversations.map((summary) => summary.id));
      this.conversations = [...this.conversations, ...page.conversations.filter((summary) => !known.has(summary.id))];
      this.nextCursor = page.nextCursor;
    } catch (error) {
      this.error = error instanceof Error ? error.message : String(error);
    } finally {
      this.loading = false;
      this.changed();
    }
  }

  /** Applies a list-feed notification. */
  handle(event: AnyNotification): void {
    if (event.method === 'conversation/created' || (event.method === 'conversation/updated' && event.params.summary)) {
      const summary = event.params.summary as ConversationSummary;
      const index = this.conversations.findIndex((entry) => entry.id === summary.id);
      if (!this.matches(summary)) {
        if (index >= 0) this.conversations = this.conversations.filter((entry) => entry.id !== summary.id);
      } else if (index >= 0) {
        this.conversations = this.conversations.map((entry) => (entry.id === summary.id ? summary : entry));
      } else if (this.filters.query === undefined) {
        // A full-text match cannot be judged here; new ones appear on the next search.
        this.conversations = [summary, ...this.conversations];
      }
      // Ties (the same millisecond) by id, newest first, as the server lists them.
      this.conversations = [...this.conversations].sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      this.changed();
    } else if (event.method === 'conversation/deleted') {
      this.conversations = this.conversations.filter((entry) => entry.id !== event.params.conversationId);
      this.changed();
    }
  }

  private matches(summary: ConversationSummary): boolean {
    if (summary.archived !== (this.filters.archived ?? false)) return false;
    if (this.filters.cwd !== undefined && summary.cwd !== this.filters.cwd) return false;
    return true;
  }

  private filterParams(): ConversationFilters {
    const params: ConversationFilters = {};
    if (this.filters.query) params.query = this.filters.query;
    if (this.filters.cwd) params.cwd = this.filters.cwd;
    if (this.filters.archived) params.archived = true;
    return params;
  }

  private changed(): void {
    this.version += 1;
    for (const listener of this.listeners) listener();
  }
}
