/**
 * What applying a patch changed, and the Codex-style summary text built from it.
 */
import type { FileChange } from '../../protocol/tool-details.js';

/** A file renamed by `*** Move to:`; both paths relative to the workspace root. */
export interface MovedFile {
  from: string;
  to: string;
}

/**
 * The files a patch touched, as paths relative to the workspace root, in patch order and
 * without duplicates. A moved file appears in `moved` and, under its new path, in `modified`
 * (Codex reports a move as an update of the destination).
 */
export interface PatchChanges {
  added: string[];
  modified: string[];
  deleted: string[];
  moved: MovedFile[];
}

/** The outcome of a successful `applyPatch`: the changes plus the summary shown to the model. */
export interface ApplyPatchResult extends PatchChanges {
  /** `Success. Updated the following files:` followed by one `A|M|D path` line per file. */
  summary: string;
  /** One unified diff per section, in patch order, of the text as it was read and written (the `fileChange` details). */
  fileChanges: FileChange[];
}

/** Returns empty change lists. */
export function emptyChanges(): PatchChanges {
  return { added: [], modified: [], deleted: [], moved: [] };
}

/** Appends `path` to `list` unless it is already there (a patch may touch a file twice). */
export function recordPath(list: string[], path: string): void {
  if (!list.includes(path)) list.push(path);
}

/**
 * Lists changes one per line as `A path`, `M path` or `D path` (added first, then modified,
 * then deleted — the order Codex's applier prints them in).
 */
export function listChanges(changes: PatchChanges): string[] {
  return [
    ...changes.added.map((path) => `A ${path}`),
    ...changes.modified.map((path) => `M ${path}`),
    ...changes.deleted.map((path) => `D ${path}`),
  ];
}

/**
 * Formats the success message of the Codex `apply_patch` tool:
 * `Success. Updated the following files:\nA path\nM path\nD path`.
 */
export function formatSummary(changes: PatchChanges): string {
  return ['Success. Updated the following files:', ...listChanges(changes)].join('\n');
}
