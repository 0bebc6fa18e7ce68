/**
 * A project conversation's own HTTP MCP servers are checked at use, not only when given
 * (docs/platform.md, "Where members work"): on a platform server, a project conversation whose
 * server reaches the server's machine connects nothing there, even one an administrator made
 * (members of the project use it too); the turn is told why. Servers of `mcp.yaml` and conversations
 * outside projects are not checked. A real server, a real HTTP listener that counts requests.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyNotification } from '../../src/protocol/index.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { startPlatformServer, type PlatformHarness, type RecordingClient } from './two-users.js';

const SCRIPT = 'responses:\n  - text: "first"\n  - text: "second"\n  - text: "third"\n';

let environment: TestEnvironment;
let harness: PlatformHarness;
let owner: RecordingClient;
let listener: Server;
let requests: string[];
let listenerUrl: string;

beforeAll(async () => {
  requests = [];
  // Not an MCP server: any request reaching it is the failure this test looks for.
  listener = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  environment = await createTestEnvironment(SCRIPT);
  writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), `servers:\n  configured:\n    transport: http\n    url: ${listenerUrl}/configured\n`);
  harness = await startPlatformServer(SCRIPT, { environment, platform: true });
  owner = await harness.connect();
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await environment?.dispose();
  await new Promise((resolve) => listener?.close(resolve));
});

/** Runs one turn in the conversation and returns the warnings it was told. */
async function turnWarnings(client: RecordingClient, conversationId: string): Promise<string[]> {
  const { conversation } = await client.client.request('conversation/subscribe', { conversationId, afterSeq: 'head' });
  const from = client.events.length;
  await client.client.request('session/input', { conversationId, sessionId: conversation.rootSessionId, input: [{ type: 'text', text: 'go' }] });
  await expect.poll(() => client.events.slice(from).some((event) => event.method === 'turn/completed'), { timeout: 20_000 }).toBe(true);
  return client.events.slice(from).filter((event): event is Extract<AnyNotification, { method: 'turn/warning' }> => event.method === 'turn/warning').map((event) => event.params.message);
}

describe('own HTTP MCP servers of a project conversation', () => {
  it('never reach the server machine, even given by an administrator', async () => {
    const { project } = await owner.client.request('projects/create', { name: 'app', workspace: { executor: 'local', directory: harness.directory('app') } });
    const { conversation } = await owner.client.request('conversation/create', { projectId: project.id, mcpServers: { own: { transport: 'http', url: `${listenerUrl}/own` } } });

    const warnings = await turnWarnings(owner, conversation.id);
    expect(warnings.find((message) => message.includes('"own"'))).toMatch(new RegExp(`MCP server "own" could not be started: .*${listenerUrl.replace(/[.]/g, '\\.')} reaches 127\\.0\\.0\\.1, a loopback address of the server's machine`));
    // The administrator's own server of mcp.yaml is theirs to place: it was asked (and is no MCP server).
    expect(requests.some((request) => request.endsWith(' /own'))).toBe(false);
    expect(requests.some((request) => request.endsWith(' /configured'))).toBe(true);

    // Outside every project, the owner's conversations are not checked.
    const { conversation: outside } = await owner.client.request('conversation/create', { cwd: harness.directory('outside'), mcpServers: { mine: { transport: 'http', url: `${listenerUrl}/mine` } } });
    await turnWarnings(owner, outside.id);
    expect(requests.some((request) => request.endsWith(' /mine'))).toBe(true);
  });
});
