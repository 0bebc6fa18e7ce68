/**
 * `openvaala dev apply-patch [--cwd DIR]`: applies a Codex `apply_patch` patch read from
 * stdin to a local directory, exactly as the `apply_patch` tool would. Useful to try a patch
 * a model produced without running a conversation.
 */
import path from 'node:path';
import type { Executor } from '../executors/executor.js';
import { LocalFileSystem } from '../executors/local/local-file-system.js';
import { Workspace } from '../executors/workspace.js';
import { applyPatch, ApplyPatchError } from '../tools/apply-patch/index.js';
import { listChanges } from '../tools/apply-patch/result.js';

/** Options of `runApplyPatchCommand`. */
export interface ApplyPatchCommandOptions {
  /** Directory the patch paths are relative to (made absolute against the process's cwd). */
  cwd: string;
  /** The patch text, `*** Begin Patch` … `*** End Patch`. */
  patchText: string;
  /** Receives the success summary. */
  stdout: NodeJS.WritableStream;
  /** Receives the error message when the patch is rejected. */
  stderr: NodeJS.WritableStream;
}

/** A local executor that only offers files: applying a patch never runs a command. */
function fileOnlyExecutor(): Executor {
  return {
    name: 'local',
    kind: 'local',
    fs: new LocalFileSystem(),
    run: () => Promise.reject(new Error('dev apply-patch does not run commands')),
    close: () => Promise.resolve(),
  };
}

/**
 * Applies `patchText` under `cwd` and reports like Codex's `apply_patch` command.
 * @returns the exit code: 0 after success (summary on stdout), 1 when the patch is rejected
 *   (message on stderr, followed by the changes of earlier sections that were kept)
 * @throws only for unexpected failures (not for malformed or inapplicable patches)
 */
export async function runApplyPatchCommand(options: ApplyPatchCommandOptions): Promise<number> {
  const workspace = new Workspace(fileOnlyExecutor(), path.resolve(options.cwd));
  try {
    const result = await applyPatch(options.patchText, workspace);
    options.stdout.write(`${result.summary}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ApplyPatchError)) throw error;
    const kept = error.applied === undefined ? [] : listChanges(error.applied);
    const keptText = kept.length === 0 ? '' : `Changes applied before the failure were kept:\n${kept.join('\n')}\n`;
    options.stderr.write(`${error.message}\n${keptText}`);
    return 1;
  }
}
