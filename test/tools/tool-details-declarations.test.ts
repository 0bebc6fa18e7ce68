/**
 * Every built-in tool declares the typed details its results carry, or why it has none: a
 * new tool without that decision fails here. The names checked are the ones a real session
 * offers the model, so a tool added to sessions but not to this list fails too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { collaborationTools, type CollaborationHost } from '../../src/runtime/collaboration-tools.js';
import { createLoadSkillTool } from '../../src/runtime/skills/skill-tool.js';
import { ToolDetailsSchema } from '../../src/protocol/index.js';
import { environmentTools } from '../../src/tools/index.js';
import { requestUserInputTool } from '../../src/tools/request-user-input.js';
import { updatePlanTool } from '../../src/tools/update-plan.js';
import { scheduleTaskTool, type ScheduleTaskHost } from '../../src/tools/schedule-task.js';
import type { Tool } from '../../src/tools/tool.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** The built-in tools; the collaboration tools, load_skill and schedule_task are built over stand-ins (never called). */
function builtInTools(): Tool[] {
  return [...environmentTools(), requestUserInputTool as Tool, ...collaborationTools({} as CollaborationHost), createLoadSkillTool(new Map(), async () => true) as Tool, updatePlanTool({ setPlan: async () => undefined }), scheduleTaskTool({} as ScheduleTaskHost)];
}

const KINDS = new Set(ToolDetailsSchema.options.map((option) => option.shape.kind.value));

describe('tool details declarations', () => {
  it('every built-in tool names its details kind or says why it has none', () => {
    const undecided = builtInTools().filter((tool) => tool.declaredDetails === undefined).map((tool) => tool.name);
    expect(undecided).toEqual([]);
    for (const tool of builtInTools()) {
      const declared = tool.declaredDetails;
      if (declared && 'kind' in declared) expect(KINDS.has(declared.kind), `${tool.name}: unknown details kind ${declared.kind}`).toBe(true);
      else expect((declared as { none: string }).none.length, `${tool.name}: a reason is required`).toBeGreaterThan(10);
    }
    expect(Object.fromEntries(builtInTools().map((tool) => [tool.name, tool.declaredDetails && 'kind' in tool.declaredDetails ? tool.declaredDetails.kind : 'none']))).toEqual({
      read_file: 'read',
      list_dir: 'list',
      glob: 'search',
      grep: 'search',
      exec_command: 'command',
      write_stdin: 'command',
      list_commands: 'none',
      kill_command: 'command',
      apply_patch: 'fileChange',
      request_user_input: 'none',
      spawn_agent: 'subagent',
      send_input: 'subagent',
      wait_agent: 'subagent',
      close_agent: 'subagent',
      load_skill: 'none',
      update_plan: 'none',
      schedule_task: 'none',
    });
  });

  it('covers every tool a session offers the model', async () => {
    harness = await startInProcessServer(`
responses:
  - text: "hello"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'hi' });
    await harness.turnsCompleted(1);
    const body = harness.environment.mock.requests[0]?.body as { tools?: { name?: string; function?: { name?: string } }[] };
    const offered = (body.tools ?? []).map((tool) => tool.name ?? tool.function?.name ?? '');
    expect(offered.length).toBeGreaterThan(5);
    const known = new Set(builtInTools().map((tool) => tool.name));
    expect(offered.filter((name) => !known.has(name))).toEqual([]);
  });
});
