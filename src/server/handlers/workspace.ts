/**
 * Workspace access for clients (docs/protocol.md, "Workspace files" and "Terminals"):
 * `fs/list`, `fs/read`, `fs/stat` and `terminal/*` on a conversation's executors. Every path
 * goes through `Workspace.resolveSafe`, the same confinement the model's tools get, so a
 * client can reach exactly what the conversation's tools can, on every executor kind.
 */
import path from 'node:path';
import type { Workspace } from '../../executors/workspace.js';
import { ErrorCodes, forbidden, FS_LIST_MAX_ENTRIES, FS_READ_MAX_BYTES, RpcError, type ContentPart, type InputContentPart, type MethodName, type MethodParams, type MethodResult } from '../../protocol/index.js';
import { classifyAttachment, type AttachmentStore } from '../../runtime/attachments.js';
import type { RpcConnection } from '../rpc-connection.js';
import { ConnectionTerminals, TerminalError } from '../terminals.js';
import { textStreamRedaction } from '../../platform/secrets/stream-redaction.js';

/**
 * Largest file `fs/read` reads on an executor that can only read whole files (the virtual one),
 * bytes (64 MiB): a piece of a larger file would hold all of it in the server's memory. The
 * others read only the piece asked for, whatever the file's size.
 */
export const FS_READ_MAX_FILE_BYTES = 64 * 1024 * 1024;

type WorkspaceMethod = 'fs/list' | 'fs/read' | 'fs/stat' | 'terminal/create' | 'terminal/input' | 'terminal/resize' | 'terminal/close';
/** The handlers of workspace access, bound to one connection. */
export type WorkspaceHandlers = { [M in WorkspaceMethod & MethodName]: (params: MethodParams<M>) => Promise<MethodResult<M>> };

/**
 * The workspace of the conversation's executor a request names (default: its first).
 * @throws RpcError notFound for an unknown conversation; invalidParams naming
 *   `params.executor` when the executor is not in its work location
 */
export async function workspaceOf(connection: RpcConnection, method: string, conversationId: string, executor: string | undefined): Promise<Workspace> {
  const conversation = await connection.runtime.getConversation(conversationId);
  if (executor === undefined) return conversation.workspaces[0];
  const found = conversation.workspaces.find((workspace) => workspace.executor.name === executor);
  if (!found) {
    const names = conversation.workspaces.map((workspace) => `"${workspace.executor.name}"`).join(', ');
    throw new RpcError(ErrorCodes.invalidParams, `${method}: params.executor: executor "${executor.slice(0, 200)}" is not in the work location of conversation ${conversationId} (it has ${names})`);
  }
  return found;
}

/**
 * Resolves a client's path in the workspace, refusing escapes (`..`, absolute paths outside,
 * symlinks leading out) as invalid params naming the field.
 */
async function safePath(workspace: Workspace, method: string, field: string, requested: string): Promise<string> {
  try {
    workspace.resolve(requested);
  } catch (error) {
    throw new RpcError(ErrorCodes.invalidParams, `${method}: params.${field}: ${(error as Error).message}`);
  }
  try {
    return await workspace.resolveSafe(requested);
  } catch (error) {
    const message = (error as Error).message;
    // Other failures (the executor unreachable) are the server's, not the request's.
    if (/leads outside the workspace|goes through a symlink/.test(message)) throw new RpcError(ErrorCodes.invalidParams, `${method}: params.${field}: ${message}`);
    throw error;
  }
}

/** The stat of what a path finally names (symlinks inside the workspace followed). */
async function statFollowing(workspace: Workspace, absolute: string) {
  const fileSystem = workspace.executor.fs;
  const own = await fileSystem.stat(absolute);
  if (own?.kind !== 'symlink') return own;
  return fileSystem.stat(await fileSystem.realPath(absolute));
}

function missing(method: string, field: string, requested: string, workspace: Workspace): RpcError {
  return new RpcError(ErrorCodes.notFound, `${method}: params.${field}: "${requested.slice(0, 500)}" does not exist on executor "${workspace.executor.name}"`);
}

/** Byte count at most `length` that does not end inside a UTF-8 sequence (when one can be avoided). */
function utf8Boundary(bytes: Uint8Array, length: number): number {
  for (let back = 0; back < 4 && back < length; back++) {
    const byte = bytes[length - 1 - back] as number;
    if ((byte & 0xc0) !== 0x80) {
      const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return needed > back + 1 ? length - 1 - back : length;
    }
  }
  return length;
}

function encode(bytes: Uint8Array): { encoding: 'utf8' | 'base64'; content: string } {
  try {
    return { encoding: 'utf8', content: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { encoding: 'base64', content: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') };
  }
}

function terminalFailure(method: string, error: unknown): never {
  if (error instanceof TerminalError) {
    if (error.reason === 'not_found') throw new RpcError(ErrorCodes.notFound, `${method}: params.terminalId: ${error.message}`);
    if (error.reason === 'forbidden') throw forbidden(method, `terminal "${error.terminalId}"`);
    throw RpcError.conflict(`${method}: ${error.message}`, error.reason === 'limit' ? 'terminal_limit' : 'no_terminal_support');
  }
  throw error;
}

/**
 * Builds the workspace handlers of one connection; its terminals are killed when it closes.
 * @param connection the client connection (its runtime, send queue and close)
 */
export function createWorkspaceHandlers(connection: RpcConnection): WorkspaceHandlers {
  const redactor = connection.platform?.redactor;
  const terminals = new ConnectionTerminals(
    (params) => connection.notify({ method: 'terminal/output', params }),
    () => connection.ready(),
    undefined,
    redactor ? () => textStreamRedaction(redactor) : undefined,
  );
  connection.onDispose(() => terminals.closeAll());
  return {
    async 'fs/list'(params) {
      const workspace = await workspaceOf(connection, 'fs/list', params.conversationId, params.executor);
      const absolute = await safePath(workspace, 'fs/list', 'path', params.path);
      const stat = await statFollowing(workspace, absolute);
      if (!stat) throw missing('fs/list', 'path', params.path, workspace);
      if (stat.kind !== 'directory') throw new RpcError(ErrorCodes.invalidParams, `fs/list: params.path: "${params.path.slice(0, 500)}" is not a directory (it is a ${stat.kind})`);
      const entries = await workspace.executor.fs.readDirectory(absolute);
      return { path: absolute, entries: entries.slice(0, FS_LIST_MAX_ENTRIES).map(({ name, kind }) => ({ name, kind })), truncated: entries.length > FS_LIST_MAX_ENTRIES };
    },

    async 'fs/read'(params) {
      const workspace = await workspaceOf(connection, 'fs/read', params.conversationId, params.executor);
      const absolute = await safePath(workspace, 'fs/read', 'path', params.path);
      const stat = await statFollowing(workspace, absolute);
      if (!stat) throw missing('fs/read', 'path', params.path, workspace);
      if (stat.kind !== 'file') throw new RpcError(ErrorCodes.invalidParams, `fs/read: params.path: "${params.path.slice(0, 500)}" is not a file (it is a ${stat.kind})`);
      // Only the piece asked for is read where the executor can (a client reading a large file
      // in 1 MiB pieces would otherwise read all of it for every piece).
      const fileSystem = workspace.executor.fs;
      if (!fileSystem.readRange && stat.size > FS_READ_MAX_FILE_BYTES) {
        throw RpcError.conflict(`fs/read: "${params.path.slice(0, 500)}" has ${stat.size} bytes; executor "${workspace.executor.name}" reads whole files, and files over ${FS_READ_MAX_FILE_BYTES} bytes (64 MiB) cannot be read through the protocol there`, 'file_too_large');
      }
      // Secret values are redacted with the bytes around the piece: a value its edges cut
      // would otherwise go out in parts (see `SecretRedactor.redactByteRange`).
      const redactor = connection.platform?.redactor;
      const context = redactor?.active ? redactor.rangeContextBytes : 0;
      let size: number;
      let offset: number;
      let window: Uint8Array;
      let windowStart: number;
      let wanted: number;
      if (fileSystem.readRange) {
        size = stat.size;
        offset = Math.min(params.offset ?? 0, size);
        wanted = Math.min(params.length ?? FS_READ_MAX_BYTES, FS_READ_MAX_BYTES, size - offset);
        windowStart = Math.max(0, offset - context);
        window = await fileSystem.readRange(absolute, windowStart, offset - windowStart + wanted + context);
      } else {
        const bytes = await fileSystem.readFile(absolute);
        size = bytes.byteLength;
        offset = Math.min(params.offset ?? 0, size);
        wanted = Math.min(params.length ?? FS_READ_MAX_BYTES, FS_READ_MAX_BYTES, size - offset);
        windowStart = Math.max(0, offset - context);
        window = bytes.subarray(windowStart, offset + wanted + context);
      }
      const from = offset - windowStart;
      const rest = window.subarray(from);
      wanted = Math.min(wanted, rest.byteLength);
      // A text file read in pieces stays text: a piece never ends inside a character.
      const length = offset + wanted < size ? utf8Boundary(rest, wanted) || wanted : wanted;
      const slice = redactor?.active ? redactor.redactByteRange(window, from, from + length) : rest.subarray(0, length);
      return { path: absolute, size, offset, length, truncated: offset + length < size, ...encode(slice) };
    },

    async 'fs/stat'(params) {
      const workspace = await workspaceOf(connection, 'fs/stat', params.conversationId, params.executor);
      const absolute = await safePath(workspace, 'fs/stat', 'path', params.path);
      const stat = await workspace.executor.fs.stat(absolute);
      if (!stat) throw missing('fs/stat', 'path', params.path, workspace);
      return { path: absolute, kind: stat.kind, size: stat.size, modifiedAt: stat.modifiedAt };
    },

    async 'terminal/create'(params) {
      const workspace = await workspaceOf(connection, 'terminal/create', params.conversationId, params.executor);
      const cwd = params.cwd === undefined ? workspace.root : await safePath(workspace, 'terminal/create', 'cwd', params.cwd);
      if (params.cwd !== undefined && (await statFollowing(workspace, cwd))?.kind !== 'directory') {
        throw new RpcError(ErrorCodes.invalidParams, `terminal/create: params.cwd: "${params.cwd.slice(0, 500)}" is not a directory on executor "${workspace.executor.name}"`);
      }
      try {
        const terminalId = terminals.create({ executor: workspace.executor, cwd, workspaceRoot: path.posix.resolve(workspace.root), columns: params.cols, rows: params.rows, ...(params.command !== undefined ? { command: params.command } : {}) });
        // A member removed from the conversation's project loses the terminal at once.
        connection.holdForConversation(params.conversationId, () => terminals.close(terminalId));
        return { terminalId };
      } catch (error) {
        return terminalFailure('terminal/create', error);
      }
    },

    async 'terminal/input'(params) {
      try {
        terminals.input(params.terminalId, params.data);
      } catch (error) {
        if (error instanceof TerminalError) terminalFailure('terminal/input', error);
        throw RpcError.conflict(`terminal/input: ${(error as Error).message}`, 'terminal_ended');
      }
      return {};
    },

    async 'terminal/resize'(params) {
      try {
        terminals.resize(params.terminalId, params.cols, params.rows);
      } catch (error) {
        terminalFailure('terminal/resize', error);
      }
      return {};
    },

    async 'terminal/close'(params) {
      try {
        terminals.close(params.terminalId);
      } catch (error) {
        terminalFailure('terminal/close', error);
      }
      return {};
    },
  };
}

/**
 * Checks the uploaded files a `session/input` names before anything is recorded, and fills in
 * each such part's stored path, name and media type (whatever the client wrote there).
 * @returns the content with attachment parts completed
 * @throws RpcError invalidParams naming `params.input[<index>]` when an attachment does not
 *   exist in this conversation or is neither an image (PNG, JPEG, GIF, WebP) nor UTF-8 text,
 *   or when a file part names neither an upload nor a path
 */
export function checkAttachments(store: AttachmentStore | undefined, conversationId: string, content: InputContentPart[]): ContentPart[] {
  return content.map((part, index): ContentPart => {
    if (part.type !== 'file') return part;
    if (part.attachmentId === undefined) {
      if (part.path === undefined) throw new RpcError(ErrorCodes.invalidParams, `session/input: params.input[${index}]: a file part needs \`attachmentId\` (an upload) or \`path\``);
      return { ...part, path: part.path };
    }
    const found = store?.read(conversationId, part.attachmentId);
    if (!found) throw new RpcError(ErrorCodes.invalidParams, `session/input: params.input[${index}].attachmentId: no attachment "${part.attachmentId.slice(0, 100)}" was uploaded to conversation ${conversationId}`);
    const kind = classifyAttachment(found.bytes).kind;
    if (kind === 'unsupported') {
      throw new RpcError(ErrorCodes.invalidParams, `session/input: params.input[${index}]: attachment "${found.attachment.name}" (${found.attachment.mediaType}) cannot be given to the model: only images (PNG, JPEG, GIF, WebP) and UTF-8 text files are supported`);
    }
    return { type: 'file', path: found.attachment.path, name: found.attachment.name, mediaType: found.attachment.mediaType, attachmentId: found.attachment.id };
  });
}
