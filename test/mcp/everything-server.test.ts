/**
 * MCP results and tool-list changes: structured output and an image from the reference server
 * `@modelcontextprotocol/server-everything` (stdio), and a tool added at run time by the
 * fixture server (the everything server only changes its list once, right after the
 * handshake, so it cannot show a change picked up mid-turn).
 */
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { GROWING_SERVER, offeredTools, packageBin, toolCalls, writeConfig, yamlString } from './mcp-helpers.js';

const EVERYTHING_BIN = packageBin('@modelcontextprotocol/server-everything');

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('the everything MCP server', () => {
  it('keeps structured content and images as structured data, with text for the model', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls:
      - { name: mcp__everything__get-structured-content, arguments: { location: "Chicago" } }
      - { name: mcp__everything__get-tiny-image, arguments: {} }
      - { name: mcp__everything__get-structured-content, arguments: { location: "Atlantis" } }
  - text: "It drizzles in Chicago."
`,
      {
        beforeStart: writeConfig({
          mcp: `
servers:
  everything:
    transport: stdio
    command: ${yamlString(process.execPath)}
    args: [${yamlString(EVERYTHING_BIN)}, stdio]
`,
        }),
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'weather and a picture' });
    const [turn] = await harness.turnsCompleted(1, 30_000);
    expect(turn?.status).toBe('completed');
    const [weather, image, invalid] = toolCalls(harness.completedItems());

    expect(weather).toMatchObject({ status: 'completed', isError: false });
    expect(weather?.structured).toEqual({ structuredContent: { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 } });
    expect(JSON.parse(weather?.output ?? '')).toEqual({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });

    expect(image).toMatchObject({ status: 'completed', isError: false });
    const images = image?.structured?.images as { mediaType: string; data: string }[];
    expect(images).toHaveLength(1);
    expect(images[0]?.mediaType).toBe('image/png');
    // A real PNG: the signature survives the trip.
    expect(Buffer.from(images[0]?.data ?? '', 'base64').subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(image?.output).toMatch(/^Here's the image you requested:\n\[image image\/png, \d+ bytes\]\nThe image above is the MCP logo\.$/);

    // Arguments outside the tool's input schema are refused before the server sees them.
    expect(invalid).toMatchObject({ status: 'failed', isError: true });
    expect(invalid?.output).toBe('mcp__everything__get-structured-content: argument "location": must be one of "New York", "Chicago", "Los Angeles" (got "Atlantis")');

    // The model saw the placeholder, not the image bytes.
    const second = JSON.stringify(harness.environment.mock.requests[1]?.body);
    expect(second).toContain('[image image/png,');
    expect(second).not.toContain(images[0]?.data.slice(0, 40));
    // A tool that can only run as an MCP task is not offered.
    const offered = offeredTools(harness.environment.mock.requests[0]?.body);
    expect(offered.has('mcp__everything__echo')).toBe(true);
    expect([...offered.keys()].some((name) => name.includes('simulate-research-query'))).toBe(false);
  });
});

describe('the everything server after the handshake', () => {
  it('offers the tools it adds once it knows the client supports roots, and gets the workspace root', async () => {
    // The everything server registers get-roots-list only after initialization, for clients that
    // declare roots, and announces it with notifications/tools/list_changed.
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__everything__get-roots-list, arguments: {} }]
  - text: "listed the roots"
`,
      {
        beforeStart: writeConfig({
          mcp: `
servers:
  everything:
    transport: stdio
    command: ${yamlString(process.execPath)}
    args: [${yamlString(EVERYTHING_BIN)}, stdio]
`,
        }),
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'what are my roots?' });
    const [turn] = await harness.turnsCompleted(1, 30_000);
    expect(turn?.status).toBe('completed');
    expect(offeredTools(harness.environment.mock.requests[0]?.body).has('mcp__everything__get-roots-list')).toBe(true);
    const [call] = toolCalls(harness.completedItems());
    expect(call?.status).toBe('completed');
    expect(call?.output).toContain(pathToFileURL(harness.environment.workDir).href);
  });
});

describe('a tool-list change', () => {
  it('is offered in the next model request of the same turn', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__growing__add_tool, arguments: {} }]
  - toolCalls: [{ name: mcp__growing__extra_1, arguments: { word: "hi" } }]
  - text: "done"
`,
      {
        beforeStart: writeConfig({
          mcp: `
servers:
  growing: { transport: stdio, command: ${yamlString(process.execPath)}, args: [${yamlString(GROWING_SERVER)}] }
`,
        }),
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'grow' });
    const [turn] = await harness.turnsCompleted(1, 30_000);
    expect(turn?.status).toBe('completed');
    const requests = harness.environment.mock.requests;
    expect(offeredTools(requests[0]?.body).has('mcp__growing__extra_1')).toBe(false);
    const extra = offeredTools(requests[1]?.body).get('mcp__growing__extra_1');
    expect(extra?.description).toBe('Tool number 1, added at run time.');
    expect(extra?.parameters).toMatchObject({ properties: { word: { type: 'string' } }, required: ['word'] });
    const [added, used] = toolCalls(harness.completedItems());
    expect(added?.output).toBe('added extra_1');
    expect(used).toMatchObject({ status: 'completed', output: 'extra_1 says hi' });
  });
});
