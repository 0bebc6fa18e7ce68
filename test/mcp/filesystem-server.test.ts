/**
 * MCP tools end to end with a real third-party server: `@modelcontextprotocol/server-filesystem`
 * started as a stdio process, driven by the scripted mock model through a real runtime server.
 * Also: the model sees the server's own JSON Schema, and MCP tools go through the approval policy.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalPolicyYaml } from '../helpers/approval-policy.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { offeredTools, packageBin, toolCalls, writeConfig, yamlString } from './mcp-helpers.js';

const FILESYSTEM_BIN = packageBin('@modelcontextprotocol/server-filesystem');

/** `mcp.yaml` with the filesystem server rooted at the conversation's working directory. */
function filesystemServer(workDir: string): string {
  return `
servers:
  filesystem:
    transport: stdio
    command: ${yamlString(process.execPath)}
    args: [${yamlString(FILESYSTEM_BIN)}, ${yamlString(workDir)}]
`;
}

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('the filesystem MCP server', () => {
  it('lists a directory and reads a file; the content reaches the next model request', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__filesystem__list_directory, arguments: { path: "." } }]
  - toolCalls: [{ name: mcp__filesystem__read_text_file, arguments: { path: "notes.txt" } }]
  - text: "The notes say hello."
`,
      {
        beforeStart: (environment) => {
          writeFileSync(path.join(environment.workDir, 'notes.txt'), 'remember the milk 4711\n');
          writeConfig({ mcp: filesystemServer(environment.workDir) })(environment);
        },
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'what do the notes say?' });
    const [turn] = await harness.turnsCompleted(1, 30_000);
    expect(turn?.status).toBe('completed');

    const [listing, reading] = toolCalls(harness.completedItems());
    expect(listing).toMatchObject({ toolName: 'mcp__filesystem__list_directory', status: 'completed', isError: false });
    expect(listing?.output).toContain('[FILE] notes.txt');
    expect(reading).toMatchObject({ toolName: 'mcp__filesystem__read_text_file', status: 'completed', isError: false });
    expect(reading?.output).toBe('remember the milk 4711\n');
    // The server's structuredContent is kept for clients.
    expect(reading?.structured).toMatchObject({ structuredContent: { content: 'remember the milk 4711\n' } });

    const requests = harness.environment.mock.requests;
    expect(requests).toHaveLength(3);
    expect(JSON.stringify(requests[1]?.body)).toContain('[FILE] notes.txt');
    expect(JSON.stringify(requests[2]?.body)).toContain('remember the milk 4711');

    // The model sees the server's schema, next to the environment tools.
    const offered = offeredTools(requests[0]?.body);
    expect(offered.has('read_file')).toBe(true);
    const readText = offered.get('mcp__filesystem__read_text_file');
    expect(readText?.description).toMatch(/contents of a file/i);
    expect(readText?.parameters).toMatchObject({
      type: 'object',
      required: ['path'],
      properties: { path: { type: 'string' }, head: { type: 'number', description: 'If provided, returns only the first N lines of the file' } },
    });
  });

  it('asks before an MCP tool runs when a rule on mcp__* says ask, and a denial stops it', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__filesystem__write_file, arguments: { path: "created.txt", content: "x" } }]
  - text: "not written"
`,
      {
        beforeStart: (environment) =>
          writeConfig({
            mcp: filesystemServer(environment.workDir),
            agents: approvalPolicyYaml(['{ tool: "mcp__*", decision: ask }']),
          })(environment),
      },
    );
    const asked: string[] = [];
    harness.client.handleServerRequest('approval/request', async (request) => {
      asked.push(request.toolName);
      return { decision: 'deny', message: 'no writes today' };
    });
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'write a file' });
    const [turn] = await harness.turnsCompleted(1, 30_000);
    expect(turn?.status).toBe('completed');
    expect(asked).toEqual(['mcp__filesystem__write_file']);
    const [call] = toolCalls(harness.completedItems());
    expect(call).toMatchObject({ status: 'failed', isError: true });
    expect(call?.output).toContain('the user denied this call: no writes today');
    expect(existsSync(path.join(harness.environment.workDir, 'created.txt'))).toBe(false);
  });
});
