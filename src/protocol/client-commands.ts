/**
 * Commands run by a client (protocol version 2): a client with a terminal on the server's
 * machine (an editor) declares that it runs a conversation's commands, and `exec_command` then
 * runs there, where the person sees it live. Modelled on the Agent Client Protocol's terminals
 * (`terminal/create`, `terminal/wait_for_exit`, `terminal/kill`;
 * https://agentclientprotocol.com/protocol/v1/terminals).
 *
 * Only calls routed to an unsandboxed executor of kind `local` go through the client (the client
 * is on the server's machine and runs commands without the executor's sandbox); every other
 * call, and every call while no client runs commands, uses the executor as before.
 */
import { z } from 'zod';

const conversationIdParam = z.string().regex(/^conv_[0-9A-Za-z]{1,64}$/, { message: 'not a conversation id (expected conv_ followed by letters and digits)' });

/** The client-command methods, spread into `methods`. */
export const clientCommandMethods = {
  /**
   * Declares that this connection runs the conversation's commands (`run: true`) through
   * `client/terminal/run`, until it calls again with `run: false` or the connection closes. The
   * latest connection to declare is asked; when it fails to answer, the tool call fails with its
   * message.
   */
  'conversation/serveCommands': {
    params: z.object({ conversationId: conversationIdParam, run: z.boolean() }),
    result: z.object({}),
  },
} as const;

/** The client-command server-to-client requests, spread into `serverRequests`. */
export const clientCommandServerRequests = {
  /**
   * Runs a shell command line in a terminal of the client and answers once it has ended (or was
   * killed through `client/terminal/kill`).
   */
  'client/terminal/run': {
    params: z.object({
      conversationId: z.string(),
      sessionId: z.string(),
      /** The `tool_call` item the command belongs to (a client shows its terminal there). */
      itemId: z.string(),
      /** Names this run in `client/terminal/kill`. */
      runId: z.string(),
      /** Shell command line, run by `bash -c`. */
      command: z.string(),
      /** Absolute working directory on the client's machine (the local executor). */
      cwd: z.string(),
      /** Variables to set besides the client's own environment. */
      env: z.record(z.string(), z.string()),
      /** The server sends `client/terminal/kill` once the command has run this long, ms. */
      timeoutMs: z.number().int().positive(),
      /** Bytes of output to keep; the client may keep the newest ones only. */
      outputByteLimit: z.number().int().positive(),
    }),
    result: z.object({
      /** Exit code; null when the command was ended by a signal. */
      exitCode: z.number().int().nullable(),
      /** Name of the signal that ended the command (`SIGTERM`…), else null. */
      signal: z.string().nullable(),
      /** The output kept (stdout and stderr as the terminal showed them). */
      output: z.string(),
      /** True when output was left out to stay within `outputByteLimit`. */
      truncated: z.boolean(),
    }),
  },
  /**
   * Kills a command started with `client/terminal/run` (the turn was interrupted or the command
   * ran out of time); its `client/terminal/run` then answers with how it ended. Answered `{}`,
   * also for a run that has ended already.
   */
  'client/terminal/kill': {
    params: z.object({ conversationId: z.string(), sessionId: z.string(), runId: z.string() }),
    result: z.object({}),
  },
} as const;
