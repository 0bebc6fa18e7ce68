/**
 * Gap "provider processes surviving a restart with no way to find or stop them", for every
 * kind of process the server starts besides commands: an external agent's process (the test's
 * ACP agent, `kind: acp`) and a stdio MCP server are recorded in
 * the journal `<data-dir>/processes/journal.jsonl` while they run; after `openvaala serve` is killed with
 * SIGKILL they are still running, and the next server start finds and stops them.
 * Runs the built CLI as a real process (`npm run build` first).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { recordedProcessGroups } from '../../src/server/process-records.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { ACP_AGENT } from '../runtime/external-agents/acp-harness.js';
import { packageBin } from '../mcp/mcp-helpers.js';
import { processGone } from '../helpers/processes.js';

/** Preload that keeps a child running after its standard input closes (see the file). */
const OUTLIVE_STDIN = path.resolve('test/fixtures/outlive-stdin.mjs');

let environment: TestEnvironment | undefined;
const servers: ServeProcess[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  await environment?.dispose();
  environment = undefined;
});

/** Running, not merely unreaped: an orphan's zombie waits for whoever adopted it to reap it. */
function alive(pid: number): boolean {
  return !processGone(pid);
}

/** Pids of recorded processes whose command line contains `marker` (default: the test's ACP agent). */
function recordedAgents(dataDir: string, marker = 'acp-agent.mjs'): number[] {
  return recordedProcessGroups(dataDir).records.flatMap(({ pgid }) => {
    if (!existsSync(`/proc/${pgid}/cmdline`)) return [];
    return readFileSync(`/proc/${pgid}/cmdline`, 'utf8').includes(marker) ? [pgid] : [];
  });
}

it('an external agent left running by a killed server is recorded, and stopped by the next start', async () => {
  environment = await createTestEnvironment('responses: []\n');
  writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), `agents:\n  tester:\n    default: true\n    kind: acp\n    command: [${JSON.stringify(process.execPath)}, --import, ${JSON.stringify(OUTLIVE_STDIN)}, ${JSON.stringify(ACP_AGENT)}]\n`);
  const first = await startServe(environment);
  servers.push(first);
  const client = await RuntimeClient.connect({ url: first.info.url, token: first.info.token, clientName: 'test' });
  const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
  await client.request('session/input', { conversationId: conversation.id, input: 'start the agent' });
  const dataDir = environment.paths.dataDir;
  await expect.poll(() => recordedAgents(dataDir).length, { timeout: 15_000 }).toBe(1);
  const [agent] = recordedAgents(dataDir);
  await client.close().catch(() => undefined);

  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));
  // The gap: nothing of the server is left, yet its agent still runs.
  expect(alive(agent!)).toBe(true);

  const second = await startServe(environment);
  servers.push(second);
  await expect.poll(() => alive(agent!), { timeout: 10_000 }).toBe(false);
  expect(recordedAgents(dataDir)).toEqual([]);
});

it('a stdio MCP server left running by a killed server is recorded, and stopped by the next start', async () => {
  environment = await createTestEnvironment('responses:\n  - text: "listed"\n');
  const serverBin = packageBin('@modelcontextprotocol/server-filesystem');
  writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), `servers:\n  files:\n    transport: stdio\n    command: ${JSON.stringify(process.execPath)}\n    args: [--import, ${JSON.stringify(OUTLIVE_STDIN)}, ${JSON.stringify(serverBin)}, ${JSON.stringify(environment.workDir)}]\n`);
  const first = await startServe(environment);
  servers.push(first);
  const client = await RuntimeClient.connect({ url: first.info.url, token: first.info.token, clientName: 'test' });
  const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
  await client.request('session/input', { conversationId: conversation.id, input: 'start the MCP server' });
  const dataDir = environment.paths.dataDir;
  const marker = 'server-filesystem';
  await expect.poll(() => recordedAgents(dataDir, marker).length, { timeout: 15_000 }).toBe(1);
  const [mcpServer] = recordedAgents(dataDir, marker);
  await client.close().catch(() => undefined);

  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));
  expect(alive(mcpServer!)).toBe(true);

  const second = await startServe(environment);
  servers.push(second);
  await expect.poll(() => alive(mcpServer!), { timeout: 10_000 }).toBe(false);
  expect(recordedAgents(dataDir, marker)).toEqual([]);
});
