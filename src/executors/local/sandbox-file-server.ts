/**
 * The file server that runs inside the bwrap sandbox of a sandboxed local executor, so that
 * file tools do their I/O where the kernel enforces the sandbox's boundary: a symlink flipped
 * by a sandboxed command between a check and an open can only lead to what the sandbox
 * itself can see and write.
 *
 * Protocol (one JSON object per line, both ways, over the server's stdin and stdout):
 * request `{ id, op, path, data?, offset?, length? }` with `op` one of `read`, `readRange`,
 * `write`, `stat`, `list`, `mkdir`, `remove`, `realpath` (`data`: base64 bytes for `write`;
 * `offset` and `length`, in bytes, for `readRange`); response
 * `{ id, result }` or `{ id, error: { code, message } }` (`code`: the errno name, e.g.
 * `ENOENT`). Requests are served concurrently; the server exits when its stdin closes.
 *
 * `sandboxFileServerMain` is started as `node -e "(SOURCE)(require)"`: its source is sent as
 * text, so it may use nothing but its argument and Node's globals.
 */

/** Operations of the protocol. */
export type SandboxFileOperation = 'read' | 'readRange' | 'write' | 'stat' | 'list' | 'mkdir' | 'remove' | 'realpath';

/** One request line. */
export interface SandboxFileRequest {
  id: number;
  op: SandboxFileOperation;
  /** Absolute path, as seen inside the sandbox (the same as on the host for bound paths). */
  path: string;
  /** `write`: the bytes, base64. */
  data?: string;
  /** `readRange`: the first byte to read. */
  offset?: number;
  /** `readRange`: how many bytes at most (fewer at the end of the file). */
  length?: number;
}

/** One response line. */
export interface SandboxFileResponse {
  id: number;
  /** `read`, `readRange`: base64 bytes; `stat`: `{ kind, size, modifiedAt }` or null; `list`: `[{ name, kind }]`; `realpath`: the path. */
  result?: unknown;
  error?: { code?: string; message: string };
}

/**
 * The server's main function, run inside the sandbox by `node -e`.
 * @param load Node's `require` (CommonJS), the only way in to `node:fs` from `-e` source
 */
export function sandboxFileServerMain(load: (id: string) => unknown): void {
  const fs = load('node:fs') as typeof import('node:fs');
  const path = load('node:path') as typeof import('node:path');
  const readline = load('node:readline') as typeof import('node:readline');
  const crypto = load('node:crypto') as typeof import('node:crypto');
  const files = fs.promises;

  const kindOf = (entry: import('node:fs').Stats | import('node:fs').Dirent): string => {
    if (entry.isSymbolicLink()) return 'symlink';
    if (entry.isFile()) return 'file';
    if (entry.isDirectory()) return 'directory';
    return 'other';
  };
  const codeOf = (error: unknown): string | undefined => (error as { code?: string } | undefined)?.code;

  // Made one level at a time (the server's own make-directory.ts, which this source cannot
  // import): Node's recursive mkdir never returns where a parent exists but cannot hold the
  // directory (ENOENT, anywhere under /proc).
  const isDirectory = async (directory: string): Promise<boolean> => (await files.stat(directory).catch(() => undefined))?.isDirectory() ?? false;
  const makeDirectory = async (directory: string): Promise<void> => {
    try {
      await files.mkdir(directory);
      return;
    } catch (error) {
      if (codeOf(error) === 'EEXIST' && (await isDirectory(directory))) return;
      const parent = path.dirname(directory);
      if (codeOf(error) !== 'ENOENT' || parent === directory) throw error;
    }
    await makeDirectory(path.dirname(directory));
    try {
      await files.mkdir(directory);
    } catch (error) {
      if (codeOf(error) !== 'EEXIST' || !(await isDirectory(directory))) throw error;
    }
  };

  // Replaces the file in one step (temporary file in the same directory, then rename), so a
  // reader never sees half a file; the old file's mode (and, as root, owner) is kept, a new
  // one gets 0666 & ~umask.
  const writeAtomically = async (target: string, data: Buffer): Promise<void> => {
    let destination = target;
    try {
      destination = await files.realpath(target);
    } catch {
      // A file about to be created: written at its own path.
    }
    let previous: import('node:fs').Stats | undefined;
    try {
      previous = await files.stat(destination);
    } catch {
      previous = undefined;
    }
    const mode = previous !== undefined ? previous.mode & 0o7777 : undefined;
    // Random, not a pid: every sandbox has its own PID namespace, so two file servers share pids.
    const temporary = path.join(path.dirname(destination), `.${path.basename(destination)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
    const handle = await files.open(temporary, 'wx', mode ?? 0o666);
    try {
      try {
        await handle.writeFile(data);
        if (mode !== undefined) await handle.chmod(mode);
        // Only root may give a file away; others keep their own ownership, as an in-place write would.
        if (previous !== undefined && process.getuid?.() === 0) await handle.chown(previous.uid, previous.gid);
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await files.rename(temporary, destination);
    } catch (error) {
      await files.unlink(temporary).catch(() => undefined);
      throw error;
    }
  };

  const handle = async (request: SandboxFileRequest): Promise<unknown> => {
    const target = request.path;
    switch (request.op) {
      case 'read':
        return (await files.readFile(target)).toString('base64');
      case 'readRange': {
        const length = Math.max(0, Math.floor(request.length ?? 0));
        const position = Math.max(0, Math.floor(request.offset ?? 0));
        const file = await files.open(target, 'r');
        try {
          // A read may return fewer bytes than asked for: repeated until the piece is whole or the
          // file ends (the loop of executors/read-range.ts, which this source sent as text cannot import).
          const buffer = Buffer.alloc(length);
          let filled = 0;
          while (filled < length) {
            const { bytesRead } = await file.read(buffer, filled, length - filled, position + filled);
            if (bytesRead === 0) break;
            filled += bytesRead;
          }
          return buffer.subarray(0, filled).toString('base64');
        } finally {
          await file.close();
        }
      }
      case 'write':
        await writeAtomically(target, Buffer.from(request.data ?? '', 'base64'));
        return null;
      case 'stat':
        try {
          const stats = await files.lstat(target);
          return { kind: kindOf(stats), size: stats.size, modifiedAt: stats.mtimeMs };
        } catch (error) {
          if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return null;
          throw error;
        }
      case 'list':
        return (await files.readdir(target, { withFileTypes: true })).map((entry) => ({ name: entry.name, kind: kindOf(entry) }));
      case 'mkdir':
        await makeDirectory(path.resolve(target));
        return null;
      case 'remove':
        if ((await files.lstat(target)).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
        await files.unlink(target);
        return null;
      case 'realpath':
        return await files.realpath(target);
      default:
        throw new Error(`unknown operation ${String(request.op)}`);
    }
  };

  const reply = (response: SandboxFileResponse): void => {
    process.stdout.write(`${JSON.stringify(response)}\n`);
  };
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    let request: SandboxFileRequest;
    try {
      request = JSON.parse(line) as SandboxFileRequest;
    } catch {
      return;
    }
    handle(request).then(
      (result) => reply({ id: request.id, result }),
      (error: unknown) => reply({ id: request.id, error: { code: codeOf(error), message: (error as Error).message } }),
    );
  });
  lines.on('close', () => process.exit(0));
}

/** The `node -e` source that starts the server. */
export function sandboxFileServerSource(): string {
  return `(${sandboxFileServerMain.toString()})(require);`;
}
