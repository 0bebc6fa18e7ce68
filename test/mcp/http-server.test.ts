/**
 * An MCP server over Streamable HTTP, started by the test on 127.0.0.1 with the SDK's
 * `McpServer` and `StreamableHTTPServerTransport` (stateless: one server per request), with a
 * header read from the environment (`env:NAME`). Also: a server that goes away is reported in
 * the tool result and connected to again on a later turn.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { toolCalls, writeConfig } from './mcp-helpers.js';

const TOKEN_VARIABLE = 'OPENVAALA_TEST_MCP_AUTHORIZATION';

/** A stock-level MCP server on 127.0.0.1 that demands `Authorization: Bearer s3cret`. */
class StockServer {
  private server: Server | undefined;
  readonly authorizations: (string | undefined)[] = [];
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        // A test server that fails answers 500 instead of leaving the request hanging.
        if (!response.headersSent) response.writeHead(500);
        response.end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  private async handle(request: IncomingMessage, response: import('node:http').ServerResponse): Promise<void> {
    this.authorizations.push(request.headers.authorization);
    if (request.headers.authorization !== 'Bearer s3cret') {
      response.writeHead(401).end('unauthorized');
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const mcp = new McpServer({ name: 'stock', version: '1.0.0' });
    mcp.registerTool('stock_level', { description: 'How many of an article are in stock.', inputSchema: { article: z.string() } }, async ({ article }) => ({
      content: [{ type: 'text', text: `${article}: 42 in stock` }],
      structuredContent: { article, count: 42 },
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      transport.close().catch(() => undefined);
      mcp.close().catch(() => undefined);
    });
    await mcp.connect(transport);
    await transport.handleRequest(request, response, JSON.parse(Buffer.concat(chunks).toString('utf8')));
  }
}

let harness: InProcessServer | undefined;
let stock: StockServer | undefined;
afterEach(async () => {
  await harness?.stop();
  await stock?.stop();
  harness = undefined;
  stock = undefined;
  delete process.env[TOKEN_VARIABLE];
});

describe('an MCP server over Streamable HTTP', () => {
  it('is called with the configured headers; a server that went away is reported and reconnected later', async () => {
    stock = new StockServer();
    await stock.start();
    process.env[TOKEN_VARIABLE] = 'Bearer s3cret';
    const url = `http://127.0.0.1:${stock.port}/mcp`;
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__stock__stock_level, arguments: { article: "bolts" } }]
  - text: "42 bolts"
  - toolCalls: [{ name: mcp__stock__stock_level, arguments: { article: "nuts" } }]
  - text: "the stock server is down"
  - toolCalls: [{ name: mcp__stock__stock_level, arguments: { article: "washers" } }]
  - text: "42 washers"
`,
      {
        beforeStart: writeConfig({
          mcp: `
servers:
  stock:
    transport: http
    url: ${url}
    headers: { Authorization: "env:${TOKEN_VARIABLE}" }
`,
        }),
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'how many bolts?' });
    await harness.turnsCompleted(1);
    const [bolts] = toolCalls(harness.completedItems());
    expect(bolts).toMatchObject({ status: 'completed', isError: false, output: 'bolts: 42 in stock', structured: { structuredContent: { article: 'bolts', count: 42 } } });
    expect(stock.authorizations.length).toBeGreaterThan(0);
    expect(stock.authorizations.every((value) => value === 'Bearer s3cret')).toBe(true);
    expect(JSON.stringify(harness.environment.mock.requests[1]?.body)).toContain('bolts: 42 in stock');

    const port = stock.port;
    await stock.stop();
    await harness.client.request('session/input', { conversationId, input: 'and nuts?' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status).toBe('completed');
    const nuts = toolCalls(harness.completedItems())[1];
    expect(nuts).toMatchObject({ status: 'failed', isError: true });
    expect(nuts?.output).toMatch(/^mcp__stock__stock_level: MCP server "stock" could not be reached: fetch failed \(.*ECONNREFUSED.*\) \(it is connected again on next use\)$/);

    await stock.start(port);
    await harness.client.request('session/input', { conversationId, input: 'and washers?' });
    const after = await harness.turnsCompleted(3);
    expect(after[2]?.status).toBe('completed');
    expect(toolCalls(harness.completedItems())[2]).toMatchObject({ status: 'completed', output: 'washers: 42 in stock' });
  });

  it('reports an unset header variable as the reason, naming the server and the variable', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__stock__stock_level, arguments: { article: "bolts" } }]
  - text: "cannot reach it"
`,
      {
        beforeStart: writeConfig({
          mcp: `
servers:
  stock: { transport: http, url: "http://127.0.0.1:9/mcp", headers: { Authorization: "env:${TOKEN_VARIABLE}" } }
`,
        }),
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'how many bolts?' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    const [call] = toolCalls(harness.completedItems());
    expect(call).toMatchObject({ status: 'failed', isError: true });
    expect(call?.output).toBe(
      `mcp__stock__stock_level: MCP server "stock" is not available: headers.Authorization: environment variable ${TOKEN_VARIABLE} is not set (it is tried again at the start of the next turn)`,
    );
  });

  it('that answers with a web page (a proxy, a login page) is reported on one line, naming the page, not with its markup', async () => {
    const page = createServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'text/html' });
      response.end(`<!DOCTYPE html>\n<html><head><title>Not Found - Example Proxy</title><style>${'body{}'.repeat(500)}</style></head><body><h1>Not Found</h1>${'<p>filler</p>'.repeat(200)}</body></html>`);
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const port = (page.address() as { port: number }).port;
    try {
      harness = await startInProcessServer('responses:\n  - toolCalls: [{ name: mcp__stock__stock_level, arguments: { article: "bolts" } }]\n  - text: "no stock server"\n', {
        beforeStart: writeConfig({ mcp: `\nservers:\n  stock: { transport: http, url: "http://127.0.0.1:${port}/mcp" }\n` }),
      });
      const conversationId = await harness.conversation();
      await harness.client.request('session/input', { conversationId, input: 'how many bolts?' });
      await harness.turnsCompleted(1);
      const [call] = toolCalls(harness.completedItems());
      expect(call?.output).toContain('(an HTML page: "Not Found - Example Proxy")');
      expect(call?.output).not.toContain('<p>');
      expect(call?.output.length).toBeLessThan(700);
    } finally {
      await new Promise((resolve) => page.close(resolve));
    }
  });
});
