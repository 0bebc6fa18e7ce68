import { applyPatchTool } from './apply-patch/index.js';
import { execCommandTool } from './exec-command.js';
import { listDirTool } from './list-dir.js';
import { readFileTool } from './read-file.js';
import type { Tool } from './tool.js';

export { applyPatchTool, execCommandTool, listDirTool, readFileTool };

/**
 * The tools that act on a conversation's workspace (SPEC §7), in the order they are offered
 * to the model: read_file, list_dir, exec_command, apply_patch. Each runs on whichever
 * executor the workspace belongs to.
 */
export function environmentTools(): Tool[] {
  return [readFileTool, listDirTool, execCommandTool, applyPatchTool];
}
