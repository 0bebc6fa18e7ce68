/**
 * Routing of environment tools across executors (SPEC §6): when a conversation's work
 * location names several executors, the model sees each tool once, with an `executor`
 * argument (an enum of the names, default the first), and the call runs in that executor's
 * workspace.
 */
import { z } from 'zod';
import type { Workspace } from '../executors/workspace.js';
import { similarNames } from '../similar-names.js';
import type { Tool, ToolContext } from '../tools/tool.js';

/** The workspaces of each tool wrapped by `routeTool`, for `workspaceForCall`. */
const routes = new WeakMap<Tool, Workspace[]>();

/**
 * The workspace a call runs on: for a tool wrapped by `routeTool`, the one its `executor`
 * argument names (the first when the argument is absent); for any other tool, `fallback`.
 * Undefined when the argument names no configured executor (the call then fails without
 * running anywhere). Items, approval requests and hook inputs name this workspace's executor.
 */
export function workspaceForCall(tool: Tool | undefined, rawArguments: unknown, fallback: Workspace): Workspace | undefined {
  const workspaces = tool ? routes.get(tool) : undefined;
  if (!workspaces) return fallback;
  const requested = rawArguments && typeof rawArguments === 'object' ? (rawArguments as Record<string, unknown>).executor : undefined;
  if (requested === undefined) return workspaces[0];
  return workspaces.find((candidate) => candidate.executor.name === requested);
}

/**
 * Wraps a tool so calls are routed by their `executor` argument.
 * With one workspace the tool is returned unchanged. A tool whose parameters are not an
 * object schema cannot take the extra argument and always runs on the first workspace.
 */
export function routeTool(tool: Tool, workspaces: Workspace[]): Tool {
  const first = workspaces[0];
  if (!first || workspaces.length < 2 || !(tool.parameters instanceof z.ZodObject)) return tool;
  const names = workspaces.map((workspace) => workspace.executor.name) as [string, ...string[]];
  const parameters = (tool.parameters as z.ZodObject).extend({
    executor: z.enum(names).optional().describe(`where to run: ${names.join(', ')} (default ${names[0]})`),
  });
  const routed: Tool = {
    name: tool.name,
    ...(tool.sideEffects !== undefined ? { sideEffects: tool.sideEffects } : {}),
    ...(tool.declaredDetails ? { declaredDetails: tool.declaredDetails } : {}),
    description: `${tool.description}\n\nThis tool can run on several executors: ${names.join(', ')}. Choose one with the "executor" argument (default: ${names[0]}).`,
    parameters,
    async invoke(rawArguments: unknown, context: ToolContext) {
      const record = rawArguments && typeof rawArguments === 'object' ? { ...(rawArguments as Record<string, unknown>) } : {};
      const requested = record.executor;
      delete record.executor;
      const workspace = workspaceForCall(routed, rawArguments, first);
      if (!workspace) {
        // Said as the tool wrapper says a value that is not one of the allowed ones.
        const near = typeof requested === 'string' ? similarNames(requested, names)[0] : undefined;
        return { output: `${tool.name}: argument "executor": ${JSON.stringify(requested) ?? String(requested)} is not one of ${names.map((name) => JSON.stringify(name)).join(', ')}${near !== undefined ? ` (did you mean "${near}"?)` : ''}`, isError: true };
      }
      return tool.invoke(record, { ...context, workspace });
    },
    ...(tool.describe
      ? {
          describe: async (rawArguments: unknown) => {
            const record = rawArguments && typeof rawArguments === 'object' ? { ...(rawArguments as Record<string, unknown>) } : {};
            delete record.executor;
            const workspace = workspaceForCall(routed, rawArguments, first);
            return workspace ? tool.describe?.(record, { workspace }) : undefined;
          },
        }
      : {}),
  };
  routes.set(routed, workspaces);
  return routed;
}
