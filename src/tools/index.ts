import { applyPatchTool } from './apply-patch/index.js';
import { killCommandTool, listCommandsTool, writeStdinTool } from './background-commands.js';
import { execCommandTool } from './exec-command.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { listDirTool } from './list-dir.js';
import { readFileTool } from './read-file.js';
import type { Tool } from './tool.js';

export { applyPatchTool, execCommandTool, globTool, grepTool, killCommandTool, listCommandsTool, listDirTool, readFileTool, writeStdinTool };

/**
 * The tools that act on a conversation's workspace (SPEC §6, §7), in the order they are
 * offered to the model: read_file, list_dir, glob, grep, exec_command, write_stdin,
 * list_commands, kill_command, apply_patch. Each runs
 * on whichever executor the workspace belongs to.
 */
export function environmentTools(): Tool[] {
  return [readFileTool, listDirTool, globTool, grepTool, execCommandTool, writeStdinTool, listCommandsTool, killCommandTool, applyPatchTool];
}
