/**
 * Typed details of a `tool_call` item (protocol version 2): what a client shows for a call
 * besides its raw arguments and output — the command and where it ran, the file changes as
 * unified diffs, the MCP server and tool, the subagent sessions, the search or the read.
 * Known parts are sent in `item/started` and in `approval/request`; the whole in
 * `item/completed`. Shapes follow what Codex app-server clients render for command,
 * file-change and MCP items.
 */
import { z } from 'zod';

/** A shell command run by `exec_command`. */
export const CommandDetailsSchema = z.object({
  kind: z.literal('command'),
  /** The command line as given to the shell. */
  command: z.string(),
  /** Absolute working directory on the executor. */
  cwd: z.string(),
  /** Exit code; null while running, when killed by a signal or when it never started. Absent at start. */
  exitCode: z.number().int().nullable().optional(),
  /** Signal that ended it (`SIGKILL`), else null. Absent at start. */
  signal: z.string().nullable().optional(),
  /** Wall time of the command, ms. Absent at start. */
  durationMs: z.number().nonnegative().optional(),
  /**
   * The command's own output as produced (terminal control kept, head and tail around the
   * omission marker when longer than the stored bound), without the status line such as
   * `[exit code 1]` that the model reads. Absent at start.
   */
  output: z.string().optional(),
});

/** One file a call adds, deletes, updates or moves. */
export const FileChangeSchema = z.object({
  /** Path relative to the workspace root (as the patch named it). */
  path: z.string(),
  kind: z.enum(['add', 'delete', 'update', 'move']),
  /** With `move`: the new path, relative to the workspace root. */
  movePath: z.string().optional(),
  /** The change as a unified diff (`--- a/path`, `+++ b/path`, `@@` hunks with 3 lines of context). */
  unifiedDiff: z.string(),
});
/** One file a call changes. */
export type FileChange = z.infer<typeof FileChangeSchema>;

/** Files changed by `apply_patch` (or any tool that writes files). */
export const FileChangeDetailsSchema = z.object({
  kind: z.literal('fileChange'),
  /** In patch order. At start: what the call will change; at completion: what it changed. */
  changes: z.array(FileChangeSchema),
});

/** A tool of an MCP server. */
export const McpDetailsSchema = z.object({
  kind: z.literal('mcp'),
  /** The server's name from `mcp.yaml`. */
  server: z.string(),
  /** The tool's name as the server lists it (not the `mcp__…` name the model calls). */
  tool: z.string(),
  /** The server's `tools/call` result (`content`, `structuredContent`, `isError`). Absent at start. */
  result: z.unknown().optional(),
});

/**
 * Where a subagent session stood when a collaboration call ended: `running` (spawned, messaged,
 * or still working when a wait timed out), `completed` / `failed` / `interrupted` (how its last
 * turn ended, as `wait_agent` reports it), `closed`.
 */
export const SubagentStateSchema = z.object({
  sessionId: z.string(),
  status: z.enum(['running', 'completed', 'failed', 'interrupted', 'closed']),
});
/** Where one subagent session stood after a collaboration call. */
export type SubagentState = z.infer<typeof SubagentStateSchema>;

/** A collaboration call acting on subagent sessions. */
export const SubagentDetailsSchema = z.object({
  kind: z.literal('subagent'),
  /** The sessions the call spawned, messaged, waited for or closed. */
  sessionIds: z.array(z.string()),
  /**
   * Each session's state when the call ended, in `sessionIds` order. A `failed` one makes the
   * call failed for clients (the work it waited for failed), though the model reads the
   * statuses as a normal result. Absent at start and in items written before it was recorded.
   */
  states: z.array(SubagentStateSchema).optional(),
});

/** A file-name or content search (`glob`, `grep`). */
export const SearchDetailsSchema = z.object({
  kind: z.literal('search'),
  /** `glob` or `grep`. */
  tool: z.enum(['glob', 'grep']),
  /** The glob pattern or the regular expression. */
  pattern: z.string(),
  /** Absolute directory searched. */
  path: z.string(),
  /** Number of matches found. Absent at start. */
  matches: z.number().int().nonnegative().optional(),
});

/** A file read by `read_file`. */
export const ReadDetailsSchema = z.object({
  kind: z.literal('read'),
  /** Absolute path of the file. */
  path: z.string(),
  /** First line shown, 1-based. Absent at start or for an empty or unreadable file. */
  startLine: z.number().int().positive().optional(),
  /** Last line shown, 1-based. */
  endLine: z.number().int().nonnegative().optional(),
  /** Lines in the file. */
  totalLines: z.number().int().nonnegative().optional(),
});

/** A directory listed by `list_dir`. */
export const ListDetailsSchema = z.object({
  kind: z.literal('list'),
  /** Absolute path of the directory. */
  path: z.string(),
  /** Levels listed, 1 for the directory's own entries. */
  depth: z.number().int().positive().optional(),
  /** Entries found, shown or not (a lower bound when the listing stopped counting). Absent at start. */
  entries: z.number().int().nonnegative().optional(),
});

/** Typed details of a tool call, by `kind`. */
export const ToolDetailsSchema = z.discriminatedUnion('kind', [CommandDetailsSchema, FileChangeDetailsSchema, McpDetailsSchema, SubagentDetailsSchema, SearchDetailsSchema, ReadDetailsSchema, ListDetailsSchema]);
/** Typed details of a tool call. */
export type ToolDetails = z.infer<typeof ToolDetailsSchema>;
/** The details of one kind. */
export type ToolDetailsOf<K extends ToolDetails['kind']> = Extract<ToolDetails, { kind: K }>;
