/**
 * A project's resource limits (docs/platform.md, "Projects") hold for its commands on a
 * sandboxed executor (`sandbox: bwrap`): a turn's command sees the `ulimit` values; the same
 * project's limits do not touch commands on a plain executor. Real bubblewrap, real server.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { resourceLimitPrefix } from '../../src/platform/projects/resource-limits.js';
import { createTestEnvironment } from '../helpers/environment.js';
import { startPlatformServer, type PlatformHarness } from './two-users.js';

const SCRIPT = `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo limits $(ulimit -t) $(ulimit -v) $(ulimit -u)" } }]
  - text: "sandboxed done"
  - toolCalls: [{ name: exec_command, arguments: { command: "echo limits $(ulimit -t) $(ulimit -v)" } }]
  - text: "plain done"
`;

let harness: PlatformHarness | undefined;
afterEach(async () => {
  const environment = harness?.environment;
  await harness?.stop();
  await environment?.dispose();
  harness = undefined;
});

it('makes ulimit calls of the set limits only', () => {
  expect(resourceLimitPrefix(undefined)).toBe('');
  expect(resourceLimitPrefix({})).toBe('');
  expect(resourceLimitPrefix({ cpuSeconds: 30, memoryMiB: 256, processes: 50 })).toBe('ulimit -t 30 && ulimit -v 262144 && ulimit -u 50 && ');
  expect(resourceLimitPrefix({ memoryMiB: 64 })).toBe('ulimit -v 65536 && ');
});

it('a sandboxed project\'s commands run under its limits; a plain executor\'s do not', async () => {
  const environment = await createTestEnvironment(SCRIPT);
  writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  boxed:\n    kind: local\n    sandbox: bwrap\n');
  harness = await startPlatformServer(SCRIPT, { environment });
  const owner = await harness.connect();
  const workspace = harness.directory('limited');
  const resources = { cpuSeconds: 77, memoryMiB: 512, processes: 4096 };
  const { project } = await owner.client.request('projects/create', { name: 'Limited', workspace: { executor: 'boxed', directory: workspace }, resources });
  const outputs = async (conversationId: string, turns: number): Promise<string[]> => {
    await owner.client.request('conversation/subscribe', { conversationId });
    await owner.client.request('session/input', { conversationId, input: 'show limits' });
    await expect.poll(() => owner.events.filter((event) => event.method === 'turn/completed').length, { timeout: 20_000 }).toBe(turns);
    return owner.events.flatMap((event) => (event.method === 'item/completed' && event.params.conversationId === conversationId && event.params.item.kind === 'tool_call' ? [String((event.params.item as { output?: unknown }).output)] : []));
  };
  const boxed = (await owner.client.request('conversation/create', { projectId: project.id })).conversation.id;
  expect((await outputs(boxed, 1)).join('\n')).toContain('limits 77 524288 4096');
  const plain = (await owner.client.request('conversation/create', { projectId: project.id, cwd: workspace, executor: 'local' })).conversation.id;
  const plainOutput = (await outputs(plain, 2)).join('\n');
  expect(plainOutput).toContain('limits ');
  expect(plainOutput).not.toContain('limits 77 524288');
});
