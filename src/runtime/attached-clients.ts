/**
 * The clients attached to serve something for one conversation (its files, its commands),
 * latest first: the client attached last is asked first.
 */
export class AttachedClients<T> {
  /** Latest first. */
  protected readonly servers: T[] = [];

  /** Adds a client (asked before those attached earlier); returns the function that removes it. */
  attach(server: T): () => void {
    this.servers.unshift(server);
    return () => {
      const index = this.servers.indexOf(server);
      if (index >= 0) this.servers.splice(index, 1);
    };
  }

  /** True while some client is attached. */
  get attached(): boolean {
    return this.servers.length > 0;
  }
}
