/**
 * Ownership of conversations among the runtime servers sharing one PostgreSQL schema
 * (docs/deployment.md, "Several servers on PostgreSQL"). A conversation's live state (running
 * turns, subscribers, pending approvals) lives in one server's memory, so exactly one server
 * serves it at a time:
 *
 * - the owner holds a session-level advisory lock keyed by the schema and the conversation id,
 *   on this module's dedicated connection. When the owner's process dies, PostgreSQL ends its
 *   session and the lock goes with it (at once for a killed process whose socket the kernel
 *   closes; after the TCP keepalive for a machine that vanished): that is the lease;
 * - a row of `conversation_owners` says where the owner is reached (its advertised URL), so
 *   other servers can route requests to it. The row may outlive its server; the lock decides.
 *
 * The same connection LISTENs on the schema's cluster channel: ownership changes and servers
 * stopping are announced there (`NOTIFY`), so other servers learn of them without asking.
 */
import pg from 'pg';
import type { ConversationIndexChange } from '../../dao/conversation-store.js';
import { quotePostgresIdentifier } from '../../storage/postgres/postgres-database.js';

/** Where a conversation is served. */
export type ConversationOwner = { kind: 'this-server' } | { kind: 'other-server'; serverId: string; url: string } | { kind: 'unknown' };

/** What servers announce to each other on the cluster channel. */
export type ClusterNotice =
  | { event: 'owned'; conversationId: string; serverId: string; url: string }
  | { event: 'server-stopping'; serverId: string; url: string }
  /** A change of the conversation index made by one server, for the list feeds of the others. */
  | { event: 'conversation-changed'; change: ConversationIndexChange }
  /** The same, when the change is too large for a notice: the receiver reads it from the database. */
  | { event: 'conversation-changed'; conversationId: string; kind: ConversationIndexChange['kind'] };

/** Largest payload sent on the channel, bytes (`NOTIFY` refuses more than 8000). */
export const MAX_NOTICE_BYTES = 7900;

/** Options of {@link ConversationOwnership.open}. */
export interface ConversationOwnershipOptions {
  connectionString: string;
  /** The schema whose conversations are owned (its tables hold the owner rows). */
  schema: string;
  /** This server's id (random per start). */
  serverId: string;
  /** The base URL other servers reach this one on. */
  url: string;
  /** Called when the lock connection fails: this server no longer owns anything and must stop. */
  onLost?: (error: Error) => void;
  /** Called for every notice another server sent on the cluster channel. */
  onNotice?: (notice: ClusterNotice) => void;
}

/** Channel names are `openvaala_cluster_<schema>`, cut at PostgreSQL's 63 characters. */
const CHANNEL_PREFIX = 'openvaala_cluster_';

/**
 * The advisory locks and owner rows of one server. Queries on the lock connection run one at a
 * time (pg queues them), which keeps claims and releases ordered.
 */
export class ConversationOwnership {
  private readonly owned = new Set<string>();
  private released = false;
  private readonly channel: string;

  private constructor(
    private readonly client: pg.Client,
    private readonly options: ConversationOwnershipOptions,
  ) {
    this.channel = quotePostgresIdentifier(`${CHANNEL_PREFIX}${options.schema}`.slice(0, 63));
  }

  /**
   * Connects the lock connection, registers the server in `cluster_servers` and listens on the
   * cluster channel.
   * @throws Error when the database cannot be reached (the message names the schema)
   */
  static async open(options: ConversationOwnershipOptions): Promise<ConversationOwnership> {
    const client = new pg.Client({ connectionString: options.connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000, application_name: 'openvaala cluster ownership', options: `-c search_path=${quotePostgresIdentifier(options.schema)}` });
    const ownership = new ConversationOwnership(client, options);
    client.on('error', (error: Error) => {
      if (!ownership.released) options.onLost?.(error);
    });
    try {
      await client.connect();
      await client.query('INSERT INTO cluster_servers (server_id, url, started_at) VALUES ($1, $2, $3)', [options.serverId, options.url, Date.now()]);
      await client.query(`LISTEN ${ownership.channel}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw new Error(`Cannot join the cluster of PostgreSQL schema "${options.schema}": ${(error as Error).message}`, { cause: error });
    }
    client.on('notification', (message) => {
      if (message.payload === undefined) return;
      try {
        const notice = JSON.parse(message.payload) as ClusterNotice & { from?: string };
        if (notice.from !== options.serverId) options.onNotice?.(notice);
      } catch {
        // A payload that is not ours is ignored.
      }
    });
    client.on('end', () => {
      if (!ownership.released) options.onLost?.(new Error('the connection holding the conversation locks ended'));
    });
    return ownership;
  }

  /** This server's id. */
  get serverId(): string {
    return this.options.serverId;
  }

  /** Whether this server owns the conversation now. */
  owns(conversationId: string): boolean {
    return this.owned.has(conversationId);
  }

  /**
   * Takes the conversation when no live server holds it; true when this server owns it (now or
   * already). The owner row is written and the change announced.
   * @throws Error when the database cannot be reached
   */
  async claim(conversationId: string): Promise<boolean> {
    if (this.owned.has(conversationId)) return true;
    if (this.released) return false;
    const tried = await this.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [this.lockKey(conversationId)]);
    if (tried.rows[0]?.locked !== true) return false;
    this.owned.add(conversationId);
    await this.client.query(
      `INSERT INTO conversation_owners (conversation_id, server_id, url, since) VALUES ($1, $2, $3, $4)
       ON CONFLICT (conversation_id) DO UPDATE SET server_id = excluded.server_id, url = excluded.url, since = excluded.since`,
      [conversationId, this.options.serverId, this.options.url, Date.now()],
    );
    await this.announce({ event: 'owned', conversationId, serverId: this.options.serverId, url: this.options.url });
    return true;
  }

  /**
   * Gives one conversation up (it was claimed for a request naming a conversation that does not
   * exist): its lock released and its owner row removed.
   * @throws Error when the database cannot be reached
   */
  async relinquish(conversationId: string): Promise<void> {
    if (!this.owned.delete(conversationId)) return;
    await this.client.query('DELETE FROM conversation_owners WHERE conversation_id = $1 AND server_id = $2', [conversationId, this.options.serverId]);
    await this.client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [this.lockKey(conversationId)]);
  }

  /**
   * Who serves a conversation: this server, another one (from its owner row, while its lock is
   * held), or `unknown` when nobody holds it (free to claim) or its holder wrote no row yet.
   */
  async ownerOf(conversationId: string): Promise<ConversationOwner> {
    if (this.owned.has(conversationId)) return { kind: 'this-server' };
    const row = await this.client.query<{ server_id: string; url: string }>('SELECT server_id, url FROM conversation_owners WHERE conversation_id = $1', [conversationId]);
    const owner = row.rows[0];
    if (!owner || owner.server_id === this.options.serverId) return { kind: 'unknown' };
    return { kind: 'other-server', serverId: owner.server_id, url: owner.url };
  }

  /**
   * Gives every conversation up: owner rows and registration removed, the other servers told,
   * the connection (and with it every lock) closed. Idempotent.
   */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    try {
      await this.client.query('DELETE FROM conversation_owners WHERE server_id = $1', [this.options.serverId]);
      await this.client.query('DELETE FROM cluster_servers WHERE server_id = $1', [this.options.serverId]);
      await this.client.query('SELECT pg_advisory_unlock_all()');
      await this.announce({ event: 'server-stopping', serverId: this.options.serverId, url: this.options.url });
    } catch {
      // The database is gone: closing the connection below releases what it still can.
    }
    this.owned.clear();
    await this.client.end().catch(() => undefined);
  }

  private lockKey(conversationId: string): string {
    return `openvaala:${this.options.schema}:${conversationId}`;
  }

  /**
   * Sends a notice to the other servers of the schema.
   * @returns false when its payload is over {@link MAX_NOTICE_BYTES} (nothing sent)
   * @throws Error when the database cannot be reached
   */
  async announce(notice: ClusterNotice): Promise<boolean> {
    const payload = JSON.stringify({ ...notice, from: this.options.serverId });
    if (Buffer.byteLength(payload) > MAX_NOTICE_BYTES) return false;
    await this.client.query('SELECT pg_notify($1, $2)', [`${CHANNEL_PREFIX}${this.options.schema}`.slice(0, 63), payload]);
    return true;
  }
}
