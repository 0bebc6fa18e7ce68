/**
 * The `apply_patch` tool: edits files with a patch in the Codex `apply_patch` format.
 */
import { z } from 'zod';
import { loadToolDescription } from '../descriptions.js';
import { defineTool, type Tool, type ToolResult } from '../tool.js';
import { applyPatch, ApplyPatchError } from './apply.js';
import { previewPatch } from './preview.js';
import { emptyChanges, listChanges, type PatchChanges } from './result.js';

export { applyPatch, ApplyPatchError } from './apply.js';
export type { ApplyPatchErrorDetails, ApplyPatchResult, MovedFile, PatchChanges } from './apply.js';
export { parsePatch } from './parser.js';
export type { ChangeLine, PatchHunk, UpdateChunk } from './parser.js';
export { normaliseForMatching, seekSequence } from './seek.js';
export type { LineSource } from './seek.js';
export { formatSummary } from './result.js';

/**
 * Arguments of the `apply_patch` tool. The patch goes in `patch`; Codex's own function-call
 * form names this field `input`, which is not accepted here, so that the schema has exactly
 * one field and a mistaken call fails with a message naming `patch`.
 */
export const applyPatchArguments = z.object({
  patch: z.string().describe('The whole patch, from "*** Begin Patch" to "*** End Patch".'),
});

/** Validated arguments of the `apply_patch` tool. */
export type ApplyPatchArguments = z.infer<typeof applyPatchArguments>;

function structuredChanges(changes: PatchChanges): Record<string, unknown> {
  return { added: changes.added, modified: changes.modified, deleted: changes.deleted, moved: changes.moved };
}

function failureResult(error: ApplyPatchError): ToolResult {
  const applied = error.applied ?? emptyChanges();
  const kept = listChanges(applied);
  const output =
    kept.length === 0
      ? `apply_patch: ${error.message}`
      : `apply_patch: ${error.message}\nThese changes from earlier sections of the patch were applied and kept:\n${kept.join('\n')}`;
  return {
    output,
    isError: true,
    structured: { error: error.message, line: error.lineNumber ?? null, ...structuredChanges(applied) },
    details: { kind: 'fileChange', changes: error.appliedFileChanges ?? [] },
  };
}

/**
 * The `apply_patch` tool (Codex `apply_patch` format). Takes `{ patch }`, applies it to the
 * call's workspace and answers with Codex's summary
 * (`Success. Updated the following files:\nA path\nM path\nD path`) and, in `structured`,
 * the `added`, `modified`, `deleted` and `moved` lists. A rejected patch gives an error
 * result whose text says where the patch went wrong and which earlier changes were kept.
 */
export const applyPatchTool: Tool<ApplyPatchArguments> = defineTool({
  name: 'apply_patch',
  action: 'apply the patch',
  description: loadToolDescription('apply_patch'),
  parameters: applyPatchArguments,
  declaredDetails: { kind: 'fileChange' },
  async describe({ patch }, { workspace, clientFiles }) {
    return { kind: 'fileChange', changes: await previewPatch(patch, workspace, clientFiles) };
  },
  async execute({ patch }, { workspace, clientFiles }) {
    // The diffs are those of the text each section read and wrote, made by the applier itself
    // (a preview here would read and patch every file once more).
    try {
      const result = await applyPatch(patch, workspace, clientFiles);
      return { output: result.summary, isError: false, structured: structuredChanges(result), details: { kind: 'fileChange', changes: result.fileChanges } };
    } catch (error) {
      if (error instanceof ApplyPatchError) return failureResult(error);
      throw error;
    }
  },
});
