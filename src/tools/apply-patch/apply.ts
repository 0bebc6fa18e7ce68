/**
 * Applies a Codex `apply_patch` patch to a workspace. All file access goes through the
 * workspace's `ExecutorFileSystem`, so the same code edits local files, files over SSH and an
 * in-memory sandbox.
 */
import path from 'node:path';
import type { ExecutorFileSystem } from '../../executors/executor.js';
import { lockKeyOf, pathLocksOf, type PathLocks } from '../../executors/path-locks.js';
import type { Workspace } from '../../executors/workspace.js';
import type { ClientFileAccess } from '../tool.js';
import { internalFailureNote, isInternalError, reportInternalError } from '../internal-errors.js';
import { ApplyPatchError } from './errors.js';
import { parsePatch, type PatchHunk } from './parser.js';
import { PatchPathResolver } from './paths.js';
import { emptyChanges, formatSummary, recordPath, type ApplyPatchResult, type PatchChanges } from './result.js';
import { applyChunks } from './text-file.js';
import type { FileChange } from '../../protocol/tool-details.js';
import { unifiedDiff } from '../unified-diff.js';

export { ApplyPatchError } from './errors.js';
export type { ApplyPatchErrorDetails } from './errors.js';
export type { ApplyPatchResult, MovedFile, PatchChanges } from './result.js';

interface Target {
  hunk: PatchHunk;
  /** Absolute path of the file the section names. */
  file: string;
  /** Absolute `*** Move to:` destination of an update section. */
  destination: string | undefined;
}

/** A target with the lock keys (real paths) of the files it changes. */
interface LockedTarget extends Target {
  fileKey: string;
  destinationKey: string | undefined;
}

/** What a section needs besides its target: the executor's locks and when this call started. */
interface CallState {
  locks: PathLocks;
  /** Mark from `PathLocks.beginCall`, taken before waiting for the locks. */
  startMark: number;
  /** Marks of this call's own writes, by lock key: a file an earlier section of the same patch changed was not changed by another edit. */
  ownWrites: Map<string, number>;
}

const CHANGED_BY_ANOTHER_CALL = 'the file was changed by another edit after this patch was sent; read it again and patch its current text';

const HEADERS: Record<PatchHunk['kind'], string> = {
  add: '*** Add File:',
  delete: '*** Delete File:',
  update: '*** Update File:',
};

/**
 * Parses and applies a patch in the Codex `apply_patch` format.
 *
 * Every path is checked before anything is written, so a patch naming a path outside the
 * workspace changes nothing. File sections are then applied in order, each one completely
 * (all chunks of an update are located before the file is written). When a section fails,
 * the sections before it stay applied — Codex's applier behaves the same — and the thrown
 * error lists them in `applied`.
 *
 * Rules (Codex `apply_patch`): `Add File` creates missing parent directories and replaces an
 * existing file; `Delete File` removes a file and refuses directories and missing files;
 * `Update File` requires an existing file, and with `Move to` writes the result to the
 * destination (replacing a file there) and removes the original.
 *
 * Concurrent patches (docs/tools.md, "Several changes to one file"): every file the patch
 * changes is locked, by real path, on the executor's `PathLocks` from its first read to the
 * last write, so calls from one reply or from several conversations run one after the other.
 * A chunk that no longer fits because another call wrote the file meanwhile fails saying so;
 * a file whose size or modification time changed between read and write (written by a
 * command or an editor) is not written.
 *
 * @param patchText the patch, `*** Begin Patch` … `*** End Patch`
 * @param workspace where paths are resolved; relative paths are taken from its root
 * @param clientFiles a client serving the files' text (an editor's buffers): updated files are
 *   read and written through it, added ones written through it, when it serves them
 * @returns the changed files, relative to the workspace root, and the summary text
 * @throws ApplyPatchError for a malformed patch (message starts with `line N:`), a path
 *   outside the workspace, or a section that cannot be applied (message names the file and,
 *   for updates, the chunk and its patch line; for a file changed meanwhile, says so)
 */
export async function applyPatch(patchText: string, workspace: Workspace, clientFiles?: ClientFileAccess): Promise<ApplyPatchResult> {
  const hunks = parsePatch(patchText);
  const locks = pathLocksOf(workspace.executor);
  const state: CallState = { locks, startMark: locks.beginCall(), ownWrites: new Map() };
  try {
    const targets = await withLockKeys(await resolveTargets(hunks, workspace), workspace.executor.fs);
    const keys = targets.flatMap((target) => (target.destinationKey === undefined ? [target.fileKey] : [target.fileKey, target.destinationKey]));
    // Every file the patch changes stays locked from its first read to its last write, so a
    // concurrent patch of the same file waits and then sees this one's result.
    return await locks.withLocks(keys, async () => {
      const changes = emptyChanges();
      const fileChanges: FileChange[] = [];
      for (const target of targets) {
        try {
          await applySection(target, workspace, changes, fileChanges, state, clientFiles);
        } catch (error) {
          throw asPatchError(error, target, workspace).withApplied(structuredClone(changes), [...fileChanges]);
        }
      }
      return { ...changes, summary: formatSummary(changes), fileChanges };
    });
  } finally {
    locks.endCall();
  }
}

async function withLockKeys(targets: readonly Target[], fileSystem: ExecutorFileSystem): Promise<LockedTarget[]> {
  const locked: LockedTarget[] = [];
  for (const target of targets) {
    const fileKey = await lockKeyOf(fileSystem, target.file, target.hunk.kind === 'delete' ? 'entry' : 'follow');
    const destinationKey = target.destination === undefined ? undefined : await lockKeyOf(fileSystem, target.destination, 'follow');
    locked.push({ ...target, fileKey, destinationKey });
  }
  return locked;
}

/**
 * File-system failures name absolute paths only; say which patch section they belong to. An
 * internal failure is logged, and the model only learns which section could not be applied.
 */
function asPatchError(error: unknown, target: Target, workspace: Workspace): ApplyPatchError {
  if (error instanceof ApplyPatchError) return error;
  const reason = isInternalError(error) ? internalFailureNote(reportInternalError('apply_patch', error)) : (error as Error).message;
  return new ApplyPatchError(
    `cannot ${describeSection(target, workspace)}: ${reason}`,
    { lineNumber: target.hunk.lineNumber, path: workspace.display(target.file) },
    { cause: error },
  );
}

function describeSection(target: Target, workspace: Workspace): string {
  return `${target.hunk.kind} ${workspace.display(target.file)} (patch line ${target.hunk.lineNumber})`;
}

async function resolveTargets(hunks: readonly PatchHunk[], workspace: Workspace): Promise<Target[]> {
  const resolver = new PatchPathResolver(workspace);
  const targets: Target[] = [];
  for (const hunk of hunks) {
    const resolveOne = async (patchPath: string, header: string, intent: 'write' | 'remove'): Promise<string> => {
      try {
        return await resolver.resolve(patchPath, intent);
      } catch (error) {
        const line = header === HEADERS[hunk.kind] ? hunk.lineNumber : hunk.lineNumber + 1;
        throw new ApplyPatchError(
          `line ${line}: refusing "${header} ${patchPath}": ${(error as Error).message}; no file was changed`,
          { lineNumber: line, path: patchPath, applied: emptyChanges() },
          { cause: error },
        );
      }
    };
    const file = await resolveOne(hunk.path, HEADERS[hunk.kind], hunk.kind === 'delete' ? 'remove' : 'write');
    const destination =
      hunk.kind === 'update' && hunk.moveTo !== undefined ? await resolveOne(hunk.moveTo, '*** Move to:', 'write') : undefined;
    targets.push({ hunk, file, destination });
  }
  return targets;
}

async function applySection(target: LockedTarget, workspace: Workspace, changes: PatchChanges, fileChanges: FileChange[], state: CallState, clientFiles?: ClientFileAccess): Promise<void> {
  const fileSystem = workspace.executor.fs;
  // Through the client when it serves the file (its buffer is updated too), else the executor.
  const write = async (file: string, content: string): Promise<void> => {
    if (!(await clientFiles?.writeTextFile(file, content))) await fileSystem.writeFile(file, content);
  };
  const { hunk, file, fileKey } = target;
  const changedByAnotherCall = (): boolean => state.locks.changedSince(fileKey, Math.max(state.startMark, state.ownWrites.get(fileKey) ?? 0));
  const noteWrite = (key: string): void => {
    state.ownWrites.set(key, state.locks.noteWrite(key));
  };
  const display = workspace.display(file);
  const fail = (reason: string): never => {
    throw new ApplyPatchError(`cannot ${describeSection(target, workspace)}: ${reason}`, {
      lineNumber: hunk.lineNumber,
      path: display,
    });
  };

  if (hunk.kind === 'add') {
    const existingTarget = await fileSystem.stat(file);
    if (existingTarget?.kind === 'directory') fail('a directory with that name exists');
    // A file added over one that exists replaces it: its diff is from the text it had.
    const replaced = existingTarget === undefined ? null : await textForDiff(file, existingTarget.kind, fileSystem, clientFiles);
    await ensureParentDirectory(fileSystem, file);
    await write(file, hunk.contents);
    noteWrite(fileKey);
    recordPath(changes.added, display);
    if (replaced !== undefined) fileChanges.push({ path: display, kind: replaced === null ? 'add' : 'update', unifiedDiff: unifiedDiff(replaced, hunk.contents, display) });
    return;
  }

  const existing = await fileSystem.stat(file);
  if (existing === undefined) fail(changedByAnotherCall() ? `the file does not exist any more: ${CHANGED_BY_ANOTHER_CALL}` : 'the file does not exist');
  if (existing?.kind === 'directory') fail(`it is a directory; only files can be ${hunk.kind}d`);

  if (hunk.kind === 'delete') {
    const removed = await textForDiff(file, existing?.kind, fileSystem, clientFiles);
    await fileSystem.removeFile(file);
    noteWrite(fileKey);
    recordPath(changes.deleted, display);
    if (removed !== undefined) fileChanges.push({ path: display, kind: 'delete', unifiedDiff: unifiedDiff(removed, null, display) });
    return;
  }

  const readStat = await fileSystem.stat(fileKey);
  const served = await clientFiles?.readTextFile(file);
  const original = served ?? decodeText(await fileSystem.readFile(file)) ?? fail('the file is not valid UTF-8 text');
  let updated: string;
  try {
    updated = applyChunks(original, hunk.chunks, display);
  } catch (error) {
    if (error instanceof ApplyPatchError && changedByAnotherCall()) {
      throw new ApplyPatchError(`${error.message}\n${CHANGED_BY_ANOTHER_CALL}`, { lineNumber: error.lineNumber, path: error.path }, { cause: error });
    }
    throw error;
  }
  // Something other than a tool call (a command, an editor) may have written the file since
  // it was read; writing now would undo that change.
  const writeStat = await fileSystem.stat(fileKey);
  if (writeStat?.size !== readStat?.size || writeStat?.modifiedAt !== readStat?.modifiedAt) {
    fail('the file changed while the patch was being applied (it was written by something else); nothing was written to it, read it again');
  }
  const destination = target.destination;
  if (destination === undefined || destination === file) {
    await write(file, updated);
    noteWrite(fileKey);
    recordPath(changes.modified, display);
    fileChanges.push({ path: display, kind: 'update', unifiedDiff: unifiedDiff(original, updated, display) });
    return;
  }
  const destinationDisplay = workspace.display(destination);
  if ((await fileSystem.stat(destination))?.kind === 'directory') {
    fail(`the move destination ${destinationDisplay} is a directory`);
  }
  await ensureParentDirectory(fileSystem, destination);
  await write(destination, updated);
  if (target.destinationKey !== undefined) noteWrite(target.destinationKey);
  await fileSystem.removeFile(file);
  noteWrite(fileKey);
  recordPath(changes.modified, destinationDisplay);
  changes.moved.push({ from: display, to: destinationDisplay });
  fileChanges.push({ path: display, kind: 'move', movePath: destinationDisplay, unifiedDiff: unifiedDiff(original, updated, display, destinationDisplay) });
}

/**
 * The text a file had, for the diff of a section that replaces or deletes it without patching
 * it; undefined when it has none to show: not a regular file (a link, whose target may be
 * missing or a directory), not UTF-8 text, or unreadable. The section goes ahead either way,
 * as it did before diffs were shown, so a read failure here only leaves its diff out.
 */
async function textForDiff(file: string, kind: string | undefined, fileSystem: ExecutorFileSystem, clientFiles?: ClientFileAccess): Promise<string | undefined> {
  if (kind !== 'file') return undefined;
  try {
    return (await clientFiles?.readTextFile(file)) ?? decodeText(await fileSystem.readFile(file));
  } catch {
    return undefined;
  }
}

async function ensureParentDirectory(fileSystem: ExecutorFileSystem, file: string): Promise<void> {
  const parent = path.posix.dirname(file);
  if ((await fileSystem.stat(parent)) === undefined) await fileSystem.makeDirectory(parent);
}

/** The bytes as UTF-8 text (a byte-order mark is kept), or undefined when they are not UTF-8. */
function decodeText(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
