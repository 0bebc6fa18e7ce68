/**
 * The clients that serve a conversation's text files (protocol `conversation/serveFiles`): an
 * editor attached to the conversation reads and writes files for its tools, so the agent sees
 * the editor's unsaved buffers. Tools see only `ClientFileAccess`; this registry picks the
 * client at each read or write, so a client that attaches or leaves during a turn counts from
 * its next file operation on.
 */
import type { ClientFileAccess } from '../tools/tool.js';
import { AttachedClients } from './attached-clients.js';

/** One client serving files, as its connection offers it. */
export interface ClientFileServer {
  /** Serves reads (`client/fs/readTextFile`). */
  read: boolean;
  /** Serves writes (`client/fs/writeTextFile`). */
  write: boolean;
  /** Asks the client for a file's text. @throws Error with the client's message */
  readTextFile(request: { sessionId: string; path: string }): Promise<string>;
  /** Asks the client to write a file. @throws Error with the client's message */
  writeTextFile(request: { sessionId: string; path: string; content: string }): Promise<void>;
}

/** The clients serving one conversation's files, latest first. */
export class ClientFileServers extends AttachedClients<ClientFileServer> {
  /**
   * What the tools of one session use: reads and writes go to the latest client serving them,
   * and answer "not served" (undefined, false) when none does.
   */
  accessFor(sessionId: string): ClientFileAccess {
    return {
      readTextFile: async (path) => {
        const server = this.servers.find((candidate) => candidate.read);
        return server ? server.readTextFile({ sessionId, path }) : undefined;
      },
      writeTextFile: async (path, content) => {
        const server = this.servers.find((candidate) => candidate.write);
        if (!server) return false;
        await server.writeTextFile({ sessionId, path, content });
        return true;
      },
    };
  }
}
