/**
 * Workspace access for clients (SPEC §5): reading a conversation's files (`fs/*`) and
 * interactive terminals on its executors (`terminal/*`). Spread into `methods` and
 * `notifications` of `methods.ts`.
 */
import { z } from 'zod';

/** Most bytes one `fs/read` returns (1 MiB); read further with `offset`. */
export const FS_READ_MAX_BYTES = 1024 * 1024;
/** Most entries one `fs/list` returns; the rest is reported by `truncated`. */
export const FS_LIST_MAX_ENTRIES = 2000;
/** Largest terminal, in columns and in rows. */
export const TERMINAL_MAX_DIMENSION = 1000;
/** Largest `terminal/input` data, in characters (64 KiB of text at most per request). */
export const TERMINAL_INPUT_MAX_CHARS = 64 * 1024;

const conversationIdParam = z.string().regex(/^conv_[0-9A-Za-z]{1,64}$/, { message: 'not a conversation id (expected conv_ followed by letters and digits)' });
const terminalIdParam = z.string().regex(/^term_[0-9A-Za-z]{1,64}$/, { message: 'not a terminal id (expected term_ followed by letters and digits)' });
/** An executor of the conversation's work location, by name; default its first executor. */
const executorParam = z.string().min(1).max(200).optional();
/** A path relative to the executor's working directory, or absolute inside it (POSIX). */
const pathParam = z.string().min(1).max(4096).refine((value) => !value.includes('\0'), { message: 'must not contain a NUL byte' });
const dimension = z.number().int().min(1).max(TERMINAL_MAX_DIMENSION);

/** Kind of a workspace entry (a final symlink is reported as `symlink`, not followed). */
export const FileKindSchema = z.enum(['file', 'directory', 'symlink', 'other']);

/** What `fs/stat` and `fs/list` report about one entry. */
export const FileInfoSchema = z.object({
  kind: FileKindSchema,
  /** Size in bytes. */
  size: z.number().int().nonnegative(),
  /** Last modification, ms since the epoch. */
  modifiedAt: z.number(),
});

/** Request methods of workspace access: name → params and result schemas. */
export const workspaceMethods = {
  /** Lists a directory of the workspace, sorted by name, at most `FS_LIST_MAX_ENTRIES` entries. */
  'fs/list': {
    params: z.object({ conversationId: conversationIdParam, executor: executorParam, path: pathParam }),
    result: z.object({
      /** Absolute path of the directory on the executor. */
      path: z.string(),
      entries: z.array(z.object({ name: z.string(), kind: FileKindSchema })),
      /** True when the directory holds more than `FS_LIST_MAX_ENTRIES` entries (the first ones by name are listed). */
      truncated: z.boolean(),
    }),
  },
  /**
   * Reads a file of the workspace: from `offset` (bytes, default 0), at most `length` bytes
   * (default and cap `FS_READ_MAX_BYTES`).
   */
  'fs/read': {
    params: z.object({
      conversationId: conversationIdParam,
      executor: executorParam,
      path: pathParam,
      offset: z.number().int().nonnegative().optional(),
      length: z.number().int().min(1).max(FS_READ_MAX_BYTES).optional(),
    }),
    result: z.object({
      path: z.string(),
      /** Size of the whole file, bytes. */
      size: z.number().int().nonnegative(),
      /** First byte returned. */
      offset: z.number().int().nonnegative(),
      /** Bytes returned. */
      length: z.number().int().nonnegative(),
      /** True when the file goes on after the bytes returned. */
      truncated: z.boolean(),
      /** `utf8` when the bytes are valid UTF-8 text, else `base64`. */
      encoding: z.enum(['utf8', 'base64']),
      content: z.string(),
    }),
  },
  /** Describes one path of the workspace (a final symlink is not followed). */
  'fs/stat': {
    params: z.object({ conversationId: conversationIdParam, executor: executorParam, path: pathParam }),
    result: FileInfoSchema.extend({ path: z.string() }),
  },
  /**
   * Opens an interactive terminal (a PTY) on one of the conversation's executors, running
   * `command` (default: an interactive `bash`) in `cwd` (default: the executor's working
   * directory). Output arrives as `terminal/output` notifications on this connection only.
   */
  'terminal/create': {
    params: z.object({
      conversationId: conversationIdParam,
      executor: executorParam,
      cwd: pathParam.optional(),
      cols: dimension,
      rows: dimension,
      command: z.string().min(1).max(64 * 1024).optional(),
    }),
    result: z.object({ terminalId: z.string() }),
  },
  /** Types into a terminal (keys as the terminal would send them: `\r` for Enter, `\u0003` for Ctrl-C). */
  'terminal/input': {
    params: z.object({ terminalId: terminalIdParam, data: z.string().min(1).max(TERMINAL_INPUT_MAX_CHARS) }),
    result: z.object({}),
  },
  'terminal/resize': {
    params: z.object({ terminalId: terminalIdParam, cols: dimension, rows: dimension }),
    result: z.object({}),
  },
  /** Kills the terminal's process group; a final `terminal/output` reports the exit. */
  'terminal/close': {
    params: z.object({ terminalId: terminalIdParam }),
    result: z.object({}),
  },
} as const;

/** Notifications of workspace access: name → params schema. */
export const workspaceNotifications = {
  /**
   * Output of a terminal, in order (`seq` from 1, per terminal). The last one of a terminal
   * has `exited: true` with `exitCode` or `signal` (and no `data`); nothing follows it.
   */
  'terminal/output': z.object({
    terminalId: z.string(),
    seq: z.number().int().positive(),
    data: z.string().optional(),
    exited: z.boolean().optional(),
    exitCode: z.number().int().nullable().optional(),
    signal: z.string().nullable().optional(),
  }),
} as const;
