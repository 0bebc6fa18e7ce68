import type { FileChange } from '../../protocol/tool-details.js';
import type { PatchChanges } from './result.js';

/** Where an `ApplyPatchError` happened, and what had already been changed by then. */
export interface ApplyPatchErrorDetails {
  /** 1-based line of the patch text the failure points at. */
  lineNumber?: number;
  /** The file concerned, relative to the workspace root (or as written in the patch). */
  path?: string;
  /** Changes made by earlier file sections; they are kept, as Codex's applier keeps them. */
  applied?: PatchChanges;
  /** The unified diffs of those earlier sections, as written. */
  appliedFileChanges?: FileChange[];
}

/**
 * Thrown when a patch is malformed or cannot be applied. The message is meant for the model
 * and always says where the problem is: the patch line for syntax errors, the file and the
 * chunk for failures while applying.
 */
export class ApplyPatchError extends Error {
  override readonly name = 'ApplyPatchError';
  /** 1-based patch line the error points at, when known. */
  readonly lineNumber: number | undefined;
  /** File concerned, when the error is about one file. */
  readonly path: string | undefined;
  /** Changes already made before the failure (empty when nothing was written). */
  readonly applied: PatchChanges | undefined;
  /** Unified diffs of the changes already made before the failure. */
  readonly appliedFileChanges: FileChange[] | undefined;

  /**
   * @param message complete, human-readable description of the problem
   * @param details location and partial progress, see `ApplyPatchErrorDetails`
   */
  constructor(message: string, details: ApplyPatchErrorDetails = {}, options?: ErrorOptions) {
    super(message, options);
    this.lineNumber = details.lineNumber;
    this.path = details.path;
    this.applied = details.applied;
    this.appliedFileChanges = details.appliedFileChanges;
  }

  /** A copy of this error that also records the changes made before it happened, and their diffs. */
  withApplied(applied: PatchChanges, appliedFileChanges: FileChange[] = []): ApplyPatchError {
    return new ApplyPatchError(this.message, { lineNumber: this.lineNumber, path: this.path, applied, appliedFileChanges }, { cause: this.cause });
  }
}
