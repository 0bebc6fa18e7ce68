/**
 * The tool wrapper's refusal of bad arguments names the tool and every problem at its key path:
 * an argument the tool does not take (with the argument it most likely meant, or the ones it
 * takes), a missing one, a value of the wrong type or not one of the allowed values (with those
 * values and the nearest). Checked for every built-in tool, since they all share the wrapper.
 */
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { collaborationTools, type CollaborationHost } from '../../src/runtime/collaboration-tools.js';
import { createLoadSkillTool } from '../../src/runtime/skills/skill-tool.js';
import { environmentTools } from '../../src/tools/index.js';
import { readFileTool } from '../../src/tools/read-file.js';
import { requestUserInputTool } from '../../src/tools/request-user-input.js';
import { scheduleTaskTool, type ScheduleTaskHost } from '../../src/tools/schedule-task.js';
import type { Tool, ToolContext } from '../../src/tools/tool.js';
import { updatePlanTool } from '../../src/tools/update-plan.js';

let root: string;
let context: ToolContext;

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'tool-argument-errors-')));
  context = { workspace: new Workspace(new LocalExecutor({ name: 'local' }), root), signal: new AbortController().signal };
  await writeFile(path.join(root, 'three.txt'), 'alpha\nbeta\ngamma\n');
});

afterAll(async () => {
  await context.workspace.executor.close();
  await rm(root, { recursive: true, force: true });
});

/** Every built-in tool; hosts are stand-ins that fail if a refused call ever reached them. */
function builtInTools(plans: unknown[] = []): Tool[] {
  const refuse = () => {
    throw new Error('the call was not refused');
  };
  return [
    ...environmentTools(),
    requestUserInputTool as Tool,
    ...collaborationTools(new Proxy({}, { get: () => refuse }) as CollaborationHost),
    createLoadSkillTool(new Map(), async () => true) as Tool,
    updatePlanTool({ setPlan: async (plan) => void plans.push(plan) }),
    scheduleTaskTool(new Proxy({}, { get: () => refuse }) as ScheduleTaskHost),
  ];
}

/** The top-level arguments a tool declares to the model (its JSON Schema's properties). */
function declaredArguments(tool: Tool): string[] {
  const schema = z.toJSONSchema(tool.parameters, { unrepresentable: 'any' }) as { properties?: Record<string, unknown> };
  return Object.keys(schema.properties ?? {});
}

/** `name` with two of its inner letters swapped: the commonest slip. */
function misspelt(name: string): string {
  return `${name.slice(0, 1)}${name.slice(2, 3)}${name.slice(1, 2)}${name.slice(3)}`;
}

describe('tool argument errors', () => {
  it.each(builtInTools().map((tool) => [tool.name, tool] as const))('%s refuses an argument it does not take, naming it and the ones it takes', async (name, tool) => {
    const result = await tool.invoke({ zqxj_unknown: 1 }, context);
    expect(result.isError).toBe(true);
    const known = declaredArguments(tool);
    const hint = known.length > 0 ? ` (known: ${known.join(', ')})` : ' (it takes no arguments)';
    expect(result.output.split('\n')).toContain(`${name}: argument "zqxj_unknown": unknown argument${hint}`);
  });

  it.each(builtInTools().flatMap((tool) => declaredArguments(tool).filter((key) => key.length >= 4).slice(0, 1).map((key) => [tool.name, key, tool] as const)))(
    '%s suggests "%s" for a misspelt argument, besides the other problems',
    async (name, key, tool) => {
      const result = await tool.invoke({ [misspelt(key)]: 1 }, context);
      expect(result.isError).toBe(true);
      expect(result.output.split('\n')).toContain(`${name}: argument "${misspelt(key)}": unknown argument (did you mean "${key}"?)`);
    },
  );

  it('refuses a misspelt optional argument of an otherwise valid call instead of ignoring it', async () => {
    const result = await readFileTool.invoke({ path: 'three.txt', strat_line: 2 }, context);
    expect(result).toEqual({ output: 'read_file: argument "strat_line": unknown argument (did you mean "start_line"?)', isError: true });
    expect((await readFileTool.invoke({ path: 'three.txt', lenght: 5 }, context)).output).toBe('read_file: argument "lenght": unknown argument (known: path, start_line, end_line)');
    // Nothing was read: a retry with the argument spelt right reads the lines asked for.
    expect((await readFileTool.invoke({ path: 'three.txt', start_line: 2 }, context)).output).toBe('     2\tbeta\n     3\tgamma');
  });

  it('names a missing argument, a wrong type and every unknown one together, one line each', async () => {
    const result = await readFileTool.invoke({ pth: 'three.txt', start_line: 'two' }, context);
    expect(result.isError).toBe(true);
    expect(result.output.split('\n').sort()).toEqual([
      'read_file: argument "path": required, but missing (a string expected)',
      'read_file: argument "pth": unknown argument (did you mean "path"?)',
      'read_file: argument "start_line": Invalid input: expected number, received string',
    ]);
  });

  it('names nested arguments by their JSON path, with the allowed values and the nearest for a misspelt one', async () => {
    const plans: unknown[] = [];
    const tool = builtInTools(plans).find((candidate) => candidate.name === 'update_plan') as Tool;
    expect((await tool.invoke({ plan: [{ step: 'a', status: 'pending' }, { step: 'b', status: 'in_progres' }] }, context)).output).toBe(
      'update_plan: argument "plan[1].status": "in_progres" is not one of "pending", "in_progress", "completed" (did you mean "in_progress"?)',
    );
    expect((await tool.invoke({ plan: [{ step: 'a', stauts: 'pending' }] }, context)).output.split('\n').sort()).toEqual([
      'update_plan: argument "plan[0].status": required, but missing (one of "pending", "in_progress", "completed")',
      'update_plan: argument "plan[0].stauts": unknown argument (did you mean "status"?)',
    ]);
    expect((await tool.invoke({ plan: [{ step: 'a', status: 'pending', note: 'x' }] }, context)).output).toBe('update_plan: argument "plan[0].note": unknown argument (known: step, status)');
    expect(plans).toEqual([]);
  });

  it('gives no details before a call whose arguments it will refuse', async () => {
    expect(await readFileTool.describe?.({ path: 'three.txt' }, context)).toMatchObject({ kind: 'read' });
    expect(await readFileTool.describe?.({ path: 'three.txt', lenght: 5 }, context)).toBeUndefined();
  });
});
