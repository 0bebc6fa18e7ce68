/**
 * Files served by a client (protocol version 2): a client that shows the files of a
 * conversation's work location (an editor, with buffers not yet saved) declares that it serves
 * their text, and the runtime then reads and writes those files through it. Modelled on the
 * Agent Client Protocol's `fs/read_text_file` and `fs/write_text_file`
 * (https://agentclientprotocol.com/protocol/v1/file-system).
 *
 * Only calls routed to an executor of kind `local` go through the client (the client is on the
 * server's machine); every other call, and every call while no client serves files, uses the
 * executor's file system as before.
 */
import { z } from 'zod';

const conversationIdParam = z.string().regex(/^conv_[0-9A-Za-z]{1,64}$/, { message: 'not a conversation id (expected conv_ followed by letters and digits)' });

/** The client-file methods, spread into `methods`. */
export const clientFileMethods = {
  /**
   * Declares that this connection serves reads (`read`) and writes (`write`) of the conversation's
   * text files through `client/fs/readTextFile` and `client/fs/writeTextFile`, until it calls
   * again with both false or the connection closes. The latest connection to declare is asked
   * first; when it fails to answer, the tool fails with its message.
   */
  'conversation/serveFiles': {
    params: z.object({ conversationId: conversationIdParam, read: z.boolean(), write: z.boolean() }),
    result: z.object({}),
  },
} as const;

/** The client-file server-to-client requests, spread into `serverRequests`. */
export const clientFileServerRequests = {
  /** Reads a text file as the client has it (unsaved changes included). */
  'client/fs/readTextFile': {
    params: z.object({
      conversationId: z.string(),
      sessionId: z.string(),
      /** Absolute path on the client's machine (the local executor). */
      path: z.string(),
    }),
    result: z.object({ content: z.string() }),
  },
  /** Writes a text file through the client (which updates its buffer and saves it). */
  'client/fs/writeTextFile': {
    params: z.object({
      conversationId: z.string(),
      sessionId: z.string(),
      /** Absolute path on the client's machine (the local executor). */
      path: z.string(),
      content: z.string(),
    }),
    result: z.object({}),
  },
} as const;
