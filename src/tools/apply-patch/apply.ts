/**
 * Applies a Codex `apply_patch` patch to a workspace. All file access goes through the
 * workspace's `ExecutorFileSystem`, so the same code edits local files, files over SSH and an
 * in-memory sandbox.
 */
import path from 'node:path';
import type { ExecutorFileSystem } from '../../executors/executor.js';
import type { Workspace } from '../../executors/workspace.js';
import { internalFailureNote, isInternalError, reportInternalError } from '../internal-errors.js';
import { ApplyPatchError } from './errors.js';
import { parsePatch, type PatchHunk } from './parser.js';
import { PatchPathResolver } from './paths.js';
import { emptyChanges, formatSummary, recordPath, type ApplyPatchResult, type PatchChanges } from './result.js';
import { applyChunks } from './text-file.js';

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
 * @param patchText the patch, `*** Begin Patch` … `*** End Patch`
 * @param workspace where paths are resolved; relative paths are taken from its root
 * @returns the changed files, relative to the workspace root, and the summary text
 * @throws ApplyPatchError for a malformed patch (message starts with `line N:`), a path
 *   outside the workspace, or a section that cannot be applied (message names the file and,
 *   for updates, the chunk and its patch line)
 */
export async function applyPatch(patchText: string, workspace: Workspace): Promise<ApplyPatchResult> {
  const hunks = parsePatch(patchText);
  const targets = await resolveTargets(hunks, workspace);
  const changes = emptyChanges();
  for (const target of targets) {
    try {
      await applySection(target, workspace, changes);
    } catch (error) {
      throw asPatchError(error, target, workspace).withApplied(structuredClone(changes));
    }
  }
  return { ...changes, summary: formatSummary(changes) };
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

async function applySection(target: Target, workspace: Workspace, changes: PatchChanges): Promise<void> {
  const fileSystem = workspace.executor.fs;
  const { hunk, file } = target;
  const display = workspace.display(file);
  const fail = (reason: string): never => {
    throw new ApplyPatchError(`cannot ${describeSection(target, workspace)}: ${reason}`, {
      lineNumber: hunk.lineNumber,
      path: display,
    });
  };

  if (hunk.kind === 'add') {
    if ((await fileSystem.stat(file))?.kind === 'directory') fail('a directory with that name exists');
    await ensureParentDirectory(fileSystem, file);
    await fileSystem.writeFile(file, hunk.contents);
    recordPath(changes.added, display);
    return;
  }

  const existing = await fileSystem.stat(file);
  if (existing === undefined) fail('the file does not exist');
  if (existing?.kind === 'directory') fail(`it is a directory; only files can be ${hunk.kind}d`);

  if (hunk.kind === 'delete') {
    await fileSystem.removeFile(file);
    recordPath(changes.deleted, display);
    return;
  }

  const original = decodeText(await fileSystem.readFile(file)) ?? fail('the file is not valid UTF-8 text');
  const updated = applyChunks(original, hunk.chunks, display);
  const destination = target.destination;
  if (destination === undefined || destination === file) {
    await fileSystem.writeFile(file, updated);
    recordPath(changes.modified, display);
    return;
  }
  const destinationDisplay = workspace.display(destination);
  if ((await fileSystem.stat(destination))?.kind === 'directory') {
    fail(`the move destination ${destinationDisplay} is a directory`);
  }
  await ensureParentDirectory(fileSystem, destination);
  await fileSystem.writeFile(destination, updated);
  await fileSystem.removeFile(file);
  recordPath(changes.modified, destinationDisplay);
  changes.moved.push({ from: display, to: destinationDisplay });
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
