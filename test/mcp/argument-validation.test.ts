/**
 * Arguments of MCP tools are checked against the tool's `inputSchema` before the call reaches
 * the server, with a server that never checks them itself: wrong or missing arguments come back
 * as an error result naming each, and schemas that cannot be compiled leave the tool usable.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../../src/config/mcp.js';
import type { Executor } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { McpArgumentCheck } from '../../src/mcp/argument-check.js';
import { McpClientManager } from '../../src/mcp/client-manager.js';
import type { ToolContext } from '../../src/tools/tool.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { LAX_SERVER, toolCalls, writeConfig, yamlString } from './mcp-helpers.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import type { Logger } from '../../src/logger.js';

let root: string;
let managers: McpClientManager[] = [];
let harness: InProcessServer | undefined;
const executors = new Map<string, Executor>([['local', new LocalExecutor({ name: 'local' })]]);

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-mcp-arguments-'));
});
afterEach(async () => {
  await Promise.all(managers.map((manager) => manager.close()));
  managers = [];
  await harness?.stop();
  harness = undefined;
  rmSync(root, { recursive: true, force: true });
});

const callsFile = () => path.join(root, 'calls');

/** The calls that reached the server, as `<tool> <arguments as JSON>`. */
const serverCalls = (): string[] => (existsSync(callsFile()) ? readFileSync(callsFile(), 'utf8').split('\n').filter(Boolean) : []);

async function laxManager(logger?: Logger): Promise<McpClientManager> {
  const config = { transport: 'stdio', command: process.execPath, args: [LAX_SERVER], env: { CALLS_FILE: callsFile() } } as McpServerConfig;
  const created = new McpClientManager({ servers: { lax: config }, ...(logger ? { logger } : {}) }, { workDirectory: root, workExecutor: 'local', findExecutor: (name) => executors.get(name) });
  managers.push(created);
  await created.prepare();
  expect(created.servers[0]?.state).toBe('running');
  return created;
}

function context(): ToolContext {
  return { workspace: new Workspace(executors.get('local')!, root), signal: new AbortController().signal };
}

async function invoke(tools: McpClientManager, name: string, args: unknown) {
  const tool = tools.tools().find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}; have ${tools.tools().map((candidate) => candidate.name).join(', ')}`);
  return tool.invoke(args, context());
}

describe('arguments of MCP tools', () => {
  it('refuses a wrong type and a missing required argument, naming tool and argument, without calling the server', async () => {
    const tools = await laxManager();
    expect(await invoke(tools, 'mcp__lax__echo', { text: 5 })).toEqual({ output: 'mcp__lax__echo: argument "text": must be a string (got 5)', isError: true });
    expect(await invoke(tools, 'mcp__lax__echo', {})).toEqual({ output: 'mcp__lax__echo: argument "text": required, but missing', isError: true });
    // A model that encoded its arguments twice is read once more, and checked all the same.
    expect(await invoke(tools, 'mcp__lax__echo', '{"text":false}')).toEqual({ output: 'mcp__lax__echo: argument "text": must be a string (got false)', isError: true });
    expect(serverCalls()).toEqual([]);
    expect(await invoke(tools, 'mcp__lax__echo', { text: 'hello' })).toMatchObject({ output: 'echo: hello', isError: false });
    expect(serverCalls()).toEqual(['echo {"text":"hello"}']);
  });

  it('refuses arguments that are not an object at all', async () => {
    const tools = await laxManager();
    for (const args of [5, [{ text: 'x' }], null, true]) {
      const result = await invoke(tools, 'mcp__lax__echo', args);
      expect(result.isError).toBe(true);
      expect(result.output).toMatch(/^mcp__lax__echo: arguments: .*expected object/);
    }
    expect(serverCalls()).toEqual([]);
  });

  it('names every failing argument by its path, one line each, under a JSON Schema 2020-12 schema with vendor keywords', async () => {
    const tools = await laxManager();
    const result = await invoke(tools, 'mcp__lax__configure', { mode: 'slow', retries: -1, target: { url: 'x', extra: true }, tags: ['a', 3], label: 7 });
    expect(result.isError).toBe(true);
    expect(result.output.split('\n')).toEqual([
      'mcp__lax__configure: argument "mode": must be one of "fast", "safe" (got "slow")',
      'mcp__lax__configure: argument "retries": must be >= 0 (got -1)',
      'mcp__lax__configure: argument "target.extra": unknown argument (known: url)',
      'mcp__lax__configure: argument "tags[1]": must be a string (got 3)',
      'mcp__lax__configure: argument "label": must be a string or null (got 7)',
    ]);
    // A misspelt value or argument is told the one it most likely meant.
    expect((await invoke(tools, 'mcp__lax__configure', { mode: 'fats', target: { url: 'x', utl: 'y' } })).output.split('\n')).toEqual([
      'mcp__lax__configure: argument "mode": must be one of "fast", "safe" (got "fats"; did you mean "fast"?)',
      'mcp__lax__configure: argument "target.utl": unknown argument (did you mean "url"?)',
    ]);
    expect(await invoke(tools, 'mcp__lax__configure', { target: { url: 'x' } })).toEqual({ output: 'mcp__lax__configure: argument "mode": required, but missing', isError: true });
    expect(await invoke(tools, 'mcp__lax__configure', { mode: 'fast', target: {} })).toEqual({ output: 'mcp__lax__configure: argument "target.url": required, but missing', isError: true });
    expect(serverCalls()).toEqual([]);
    // Formats are left to the server: a URL that is not one still goes through.
    const valid = { mode: 'safe', retries: 2, target: { url: 'not a URL' }, tags: ['a'], label: null };
    expect(await invoke(tools, 'mcp__lax__configure', valid)).toMatchObject({ output: `configure got ${JSON.stringify(valid)}`, isError: false });
    expect(serverCalls()).toHaveLength(1);
  });

  it('lets calls through when the schema cannot be compiled, warning once per tool', async () => {
    const { logger, warnings } = recordingLogger();
    const tools = await laxManager(logger);
    expect(await invoke(tools, 'mcp__lax__misspelt', { value: 1 })).toMatchObject({ output: 'misspelt got {"value":1}', isError: false });
    expect(await invoke(tools, 'mcp__lax__misspelt', { value: 'two' })).toMatchObject({ output: 'misspelt got {"value":"two"}', isError: false });
    expect(await invoke(tools, 'mcp__lax__remote', { value: [] })).toMatchObject({ output: 'remote got {"value":[]}', isError: false });
    expect(await invoke(tools, 'mcp__lax__remote', {})).toMatchObject({ output: 'remote got {}', isError: false });
    const schemaWarnings = warnings.filter((warning) => warning.message.includes('input schema'));
    expect(schemaWarnings.map((warning) => [warning.fields.mcpServer, warning.fields.tool])).toEqual([
      ['lax', 'misspelt'],
      ['lax', 'remote'],
    ]);
    expect(String(schemaWarnings[0]?.fields.problem)).toContain('strnig');
    // The other tools of the server are still checked.
    expect(await invoke(tools, 'mcp__lax__echo', { text: 5 })).toMatchObject({ isError: true });
    expect(serverCalls()).toHaveLength(4);
  });
});

describe('McpArgumentCheck on its own', () => {
  const tool = (inputSchema: Record<string, unknown>) => ({ name: 'probe', inputSchema }) as Parameters<McpArgumentCheck['problems']>[1];

  it('reads a schema without $schema as 2020-12, and as draft 7 when only that compiles', async () => {
    const check = new McpArgumentCheck();
    const modern = tool({ type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] }, size: { $ref: '#/$defs/size' } }, $defs: { size: { type: 'integer' } } });
    expect(await check.problems('s', modern, { pair: ['a', 'b'], size: 'big' })).toEqual(['argument "pair[1]": must be an integer (got "b")', 'argument "size": must be an integer (got "big")']);
    // Draft 7's array form of `items` is not 2020-12.
    const tuple = tool({ type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] }, size: { $ref: '#/definitions/size' } }, definitions: { size: { type: 'integer' } } });
    expect(await check.problems('s', tuple, { pair: ['a', 'b'], size: 2 })).toEqual(['argument "pair[1]": must be an integer (got "b")']);
    const declared = tool({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { flag: { type: 'boolean' } } });
    expect(await check.problems('s', declared, { flag: 'yes' })).toEqual(['argument "flag": must be a boolean (got "yes")']);
  });

  it('words the other keywords with ajv\'s message, the path and the value', async () => {
    const check = new McpArgumentCheck();
    const schema = tool({
      type: 'object',
      minProperties: 2,
      properties: {
        name: { type: 'string', minLength: 3, pattern: '^[a-z]+$' },
        shape: { oneOf: [{ type: 'object', required: ['radius'] }, { type: 'object', required: ['side'] }] },
        'a/b': { const: 'fixed' },
      },
      dependentRequired: { start: ['end'] },
    });
    expect(await check.problems('s', schema, { name: 'X' })).toEqual([
      'arguments: must NOT have fewer than 2 properties',
      'argument "name": must NOT have fewer than 3 characters (got "X")',
      'argument "name": must match pattern "^[a-z]+$" (got "X")',
    ]);
    expect(await check.problems('s', schema, { shape: { colour: 'red' }, 'a/b': 'other', start: 1 })).toEqual([
      'argument "shape": must match exactly one schema in oneOf (got {"colour":"red"})',
      'argument "a/b": must be "fixed" (got "other")',
      'argument "end": required when "start" is given, but missing',
    ]);
  });

  it('names at most 20 problems', async () => {
    const check = new McpArgumentCheck();
    const problems = await check.problems('s', tool({ type: 'object', properties: { list: { type: 'array', items: { type: 'string' } } } }), { list: Array.from({ length: 30 }, (_, index) => index) });
    expect(problems).toHaveLength(21);
    expect(problems[0]).toBe('argument "list[0]": must be a string (got 0)');
    expect(problems[20]).toBe('… and 10 more problems');
  });
});

describe('arguments of MCP tools, through a real runtime server', () => {
  it('the model reads the refusal as the tool result and can call again with fixed arguments', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls:
      - { name: mcp__lax__echo, arguments: { text: 5 } }
      - { name: mcp__lax__echo, arguments: {} }
  - toolCalls: [{ name: mcp__lax__echo, arguments: { text: "five" } }]
  - text: "done"
`,
      {
        beforeStart: writeConfig({
          mcp: `
servers:
  lax:
    transport: stdio
    command: ${yamlString(process.execPath)}
    args: [${yamlString(LAX_SERVER)}]
    env: { CALLS_FILE: ${yamlString(callsFile())} }
`,
        }),
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'echo five' });
    const [turn] = await harness.turnsCompleted(1, 30_000);
    expect(turn?.status).toBe('completed');
    const [wrongType, missing, fixed] = toolCalls(harness.completedItems());
    expect(wrongType).toMatchObject({ status: 'failed', isError: true, output: 'mcp__lax__echo: argument "text": must be a string (got 5)' });
    expect(missing).toMatchObject({ status: 'failed', isError: true, output: 'mcp__lax__echo: argument "text": required, but missing' });
    expect(fixed).toMatchObject({ status: 'completed', isError: false, output: 'echo: five' });
    expect(JSON.stringify(harness.environment.mock.requests[1]?.body)).toContain('argument \\"text\\": required, but missing');
    expect(serverCalls()).toEqual(['echo {"text":"five"}']);
  });
});
