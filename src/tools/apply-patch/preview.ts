/**
 * What a patch will change, as unified diffs, worked out without writing anything: for the
 * `fileChange` details of an `apply_patch` call (in `item/started`, in the approval request,
 * and in the completed item).
 */
import type { Workspace } from '../../executors/workspace.js';
import type { FileChange } from '../../protocol/tool-details.js';
import type { ClientFileAccess } from '../tool.js';
import { unifiedDiff } from '../unified-diff.js';
import { parsePatch } from './parser.js';
import { PatchPathResolver } from './paths.js';
import { applyChunks } from './text-file.js';

/**
 * Reads the files a patch names and computes each section's change on their current text.
 * Sections that touch a file already changed by an earlier section see that change.
 * @param patchText the patch, `*** Begin Patch` … `*** End Patch`
 * @param workspace where the patch's paths are resolved
 * @param clientFiles a client serving the files' text (an editor's buffers), read before the executor
 * @returns one change per section, in patch order; paths relative to the workspace root
 * @throws ApplyPatchError or Error when the patch is malformed, names a path outside the
 *   workspace, or a section cannot be applied (the same failures `applyPatch` reports)
 */
export async function previewPatch(patchText: string, workspace: Workspace, clientFiles?: ClientFileAccess): Promise<FileChange[]> {
  const resolver = new PatchPathResolver(workspace);
  const fileSystem = workspace.executor.fs;
  // Text of each file as earlier sections left it; null: deleted by one.
  const texts = new Map<string, string | null>();
  const current = async (file: string): Promise<string | null> => {
    if (texts.has(file)) return texts.get(file) ?? null;
    const stat = await fileSystem.stat(file);
    if (stat === undefined || stat.kind === 'directory') return null;
    const served = await clientFiles?.readTextFile(file);
    if (served !== undefined) return served;
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(await fileSystem.readFile(file));
  };
  const changes: FileChange[] = [];
  for (const hunk of parsePatch(patchText)) {
    const file = await resolver.resolve(hunk.path, hunk.kind === 'delete' ? 'remove' : 'write');
    const display = workspace.display(file);
    if (hunk.kind === 'add') {
      const before = await current(file);
      texts.set(file, hunk.contents);
      changes.push({ path: display, kind: before === null ? 'add' : 'update', unifiedDiff: unifiedDiff(before, hunk.contents, display) });
      continue;
    }
    const before = await current(file);
    if (before === null) throw new Error(`"${hunk.path}" does not exist`);
    if (hunk.kind === 'delete') {
      texts.set(file, null);
      changes.push({ path: display, kind: 'delete', unifiedDiff: unifiedDiff(before, null, display) });
      continue;
    }
    const after = applyChunks(before, hunk.chunks, display);
    if (hunk.moveTo === undefined) {
      texts.set(file, after);
      changes.push({ path: display, kind: 'update', unifiedDiff: unifiedDiff(before, after, display) });
      continue;
    }
    const destination = await resolver.resolve(hunk.moveTo, 'write');
    const destinationDisplay = workspace.display(destination);
    texts.set(file, null);
    texts.set(destination, after);
    changes.push({ path: display, kind: 'move', movePath: destinationDisplay, unifiedDiff: unifiedDiff(before, after, display, destinationDisplay) });
  }
  return changes;
}
