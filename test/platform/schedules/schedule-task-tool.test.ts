/**
 * `schedule_task` in a real agent turn against the mock model: the call waits for approval like
 * any tool with side effects; a denied call creates nothing; an allowed one creates a task
 * that is disabled until a person enables it with `schedules/resume`. Bad input over the
 * protocol is refused naming the method and the parameter.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyNotification } from '../../../src/protocol/index.js';
import { writeApprovalPolicy } from '../../helpers/approval-policy.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

type Requested = Extract<AnyNotification, { method: 'approval/requested' }>;

const SCRIPT = `
responses:
  - toolCalls: [{ name: schedule_task, arguments: { name: "first", prompt: "check the build", schedule: { kind: "cron", expression: "0 9 * * 1", timeZone: "Europe/Helsinki" } } }]
  - toolCalls: [{ name: schedule_task, arguments: { name: "second", prompt: "check the build", schedule: { kind: "cron", expression: "0 9 * * 1", timeZone: "Europe/Helsinki" } } }]
  - text: "scheduled"
`;

/** A policy that lets everything else run and asks a person before the agent schedules anything. */
const ASK_BEFORE_SCHEDULING = writeApprovalPolicy(['{ tool: schedule_task, decision: ask }']);

describe('schedule_task', () => {
  it('is gated by approval and creates a disabled task that a person enables', async () => {
    harness = await startInProcessServer(SCRIPT, { beforeStart: ASK_BEFORE_SCHEDULING });
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'check the build every Monday at 9' });
    const first = (await harness.waitFor((event) => event.method === 'approval/requested')) as Requested;
    expect(first.params.approval.toolName).toBe('schedule_task');
    await harness.client.request('approval/respond', { conversationId, approvalId: first.params.approval.approvalId, decision: 'deny' });
    expect((await harness.client.request('schedules/list', { conversationId })).tasks).toEqual([]);
    const second = (await harness.waitFor((event) => event.method === 'approval/requested' && event.params.approval.approvalId !== first.params.approval.approvalId)) as Requested;
    await harness.client.request('approval/respond', { conversationId, approvalId: second.params.approval.approvalId, decision: 'allow_once' });
    await harness.turnsCompleted(1);
    const { tasks } = await harness.client.request('schedules/list', { conversationId });
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ name: 'second', enabled: false, createdByAgent: true });
    expect(tasks[0]?.nextRunAt).toBeUndefined();
    const { task } = await harness.client.request('schedules/resume', { taskId: tasks[0]!.id });
    expect(task).toMatchObject({ enabled: true, nextRunAt: expect.any(Number) });
    // Monday 09:00 in Helsinki is 06:00 or 07:00 UTC depending on the season.
    expect([6, 7]).toContain(new Date(task.nextRunAt!).getUTCHours());
  });

  it('bad schedules over the protocol are refused naming the method and the parameter; stored tasks are untouched', async () => {
    harness = await startInProcessServer('responses: []\n');
    const conversationId = await harness.conversation();
    await expect(harness.client.request('schedules/create', { conversationId, name: 'x', prompt: 'p', schedule: { kind: 'cron', expression: '0 9 * * *', timeZone: 'Mars/Olympus' } })).rejects.toThrow(/schedules\/create: params\.schedule\.timeZone: "Mars\/Olympus" is not an IANA time zone name/);
    const { task } = await harness.client.request('schedules/create', { conversationId, name: 'x', prompt: 'p', schedule: { kind: 'cron', expression: '0 9 * * *', timeZone: 'UTC' } });
    await expect(harness.client.request('schedules/update', { taskId: task.id, schedule: { kind: 'cron', expression: '0 9 * *', timeZone: 'UTC' } })).rejects.toThrow(/schedules\/update: params\.schedule\.expression: "0 9 \* \*" has 4 fields; expected 5/);
    expect((await harness.client.request('schedules/list', { conversationId })).tasks).toEqual([expect.objectContaining({ id: task.id, schedule: { kind: 'cron', expression: '0 9 * * *', timeZone: 'UTC' } })]);
    await expect(harness.client.request('schedules/pause', { taskId: 'task_unknown1' })).rejects.toThrow(/schedules\/pause: params\.taskId: scheduled task "task_unknown1" does not exist/);
  });
});
