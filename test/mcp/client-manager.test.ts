/**
 * The MCP client manager on its own (no model): restarts on next use, timeouts, cancellation,
 * executors that cannot host a stdio server, disabled servers, bad arguments, shutdown.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { McpServerConfig } from '../../src/config/mcp.js';
import type { Executor } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { McpClientManager } from '../../src/mcp/client-manager.js';
import { toolOutputForModel } from '../../src/tools/terminal-text.js';
import { DEFAULT_TOOL_OUTPUT_LIMIT_BYTES, TOOL_OUTPUT_RETAINED_BYTES, type ToolContext } from '../../src/tools/tool.js';
import { GROWING_SERVER } from './mcp-helpers.js';

let root: string;
let managers: McpClientManager[] = [];
const executors = new Map<string, Executor>([['local', new LocalExecutor({ name: 'local' })]]);

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-mcp-'));
});
afterEach(async () => {
  await Promise.all(managers.map((manager) => manager.close()));
  managers = [];
  rmSync(root, { recursive: true, force: true });
});

function manager(servers: Record<string, McpServerConfig>): McpClientManager {
  const created = new McpClientManager({ servers }, { workDirectory: root, workExecutor: 'local', findExecutor: (name) => executors.get(name) });
  managers.push(created);
  return created;
}

const fixture = (extra: Partial<McpServerConfig> = {}): McpServerConfig =>
  ({ transport: 'stdio', command: process.execPath, args: [GROWING_SERVER], env: { PID_FILE: path.join(root, 'pids') }, ...extra }) as McpServerConfig;

function context(signal = new AbortController().signal): ToolContext {
  return { workspace: new Workspace(executors.get('local')!, root), signal };
}

async function invoke(tools: McpClientManager, name: string, args: unknown, signal?: AbortSignal) {
  const tool = tools.tools().find((candidate) => candidate.name === name) ?? tools.resolveTool(name);
  if (!tool) throw new Error(`no tool ${name}; have ${tools.tools().map((candidate) => candidate.name).join(', ')}`);
  return tool.invoke(args, context(signal));
}

describe('McpClientManager', () => {
  it('starts nothing before prepare, then offers the tools under mcp__<server>__<tool>', async () => {
    const tools = manager({ fixture: fixture() });
    expect(tools.tools()).toEqual([]);
    expect(tools.servers[0]?.state).toBe('stopped');
    await tools.prepare();
    expect(tools.servers[0]?.state).toBe('running');
    expect(tools.tools().map((tool) => tool.name)).toEqual(['mcp__fixture__add_tool', 'mcp__fixture__crash', 'mcp__fixture__echo', 'mcp__fixture__sleep']);
    // Same array until the list changes, so the agent loop can tell by identity.
    expect(tools.tools()).toBe(tools.tools());
    const base = [tools.tools()[0]!];
    expect(tools.withTools(base)).toBe(tools.withTools(base));
    expect(await invoke(tools, 'mcp__fixture__add_tool', {})).toMatchObject({ output: 'added extra_1', isError: false });
    expect(tools.tools().map((tool) => tool.name)).toContain('mcp__fixture__extra_1');
  });

  it('starts a stdio server with the environment of its executor\'s commands: credentials removed, its own env added', async () => {
    const environmentFile = path.join(root, 'environment');
    process.env.MCP_TEST_PLAIN_VARIABLE = 'plain';
    process.env.MCP_TEST_API_KEY = 'must-not-reach-the-server';
    onTestFinished(() => {
      delete process.env.MCP_TEST_PLAIN_VARIABLE;
      delete process.env.MCP_TEST_API_KEY;
    });
    const tools = manager({
      fixture: fixture({ command: '/bin/sh', args: ['-c', 'env > "$ENVIRONMENT_FILE"; exec "$0" "$1"', process.execPath, GROWING_SERVER], env: { PID_FILE: path.join(root, 'pids'), ENVIRONMENT_FILE: environmentFile } }),
    });
    await tools.prepare();
    expect(tools.servers[0]?.state).toBe('running');
    const names = readFileSync(environmentFile, 'utf8').split('\n').map((line) => line.slice(0, line.indexOf('=')));
    expect(names).toContain('MCP_TEST_PLAIN_VARIABLE');
    expect(names).toContain('ENVIRONMENT_FILE');
    expect(names).not.toContain('MCP_TEST_API_KEY');
  });

  it('starts a server that died again when one of its tools is called', async () => {
    const tools = manager({ fixture: fixture() });
    await tools.prepare();
    expect(await invoke(tools, 'mcp__fixture__crash', {})).toMatchObject({ output: 'exiting now', isError: false });
    const deadline = Date.now() + 5_000;
    while (tools.servers[0]?.state !== 'exited' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(tools.servers[0]?.failure).toBe('the server stopped');
    // Its tools stay offered, so the model can go on calling them.
    expect(tools.tools().map((tool) => tool.name)).toContain('mcp__fixture__echo');
    expect(await invoke(tools, 'mcp__fixture__echo', { text: 'again' })).toMatchObject({ output: 'echo: again', isError: false });
    expect(readFileSync(path.join(root, 'pids'), 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('gives up on a call after toolTimeoutMs and names the setting', async () => {
    const tools = manager({ fixture: fixture({ toolTimeoutMs: 300 }) });
    await tools.prepare();
    const result = await invoke(tools, 'mcp__fixture__sleep', { ms: 5_000 });
    expect(result).toEqual({ output: 'mcp__fixture__sleep: MCP server "fixture" did not answer within 300 ms (toolTimeoutMs)', isError: true });
    // The server itself is fine.
    expect(await invoke(tools, 'mcp__fixture__echo', { text: 'still here' })).toMatchObject({ output: 'echo: still here' });
  });

  it('cancels a call when the turn is interrupted', async () => {
    const tools = manager({ fixture: fixture() });
    await tools.prepare();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('interrupted: user')), 200);
    const started = Date.now();
    const result = await invoke(tools, 'mcp__fixture__sleep', { ms: 5_000 }, controller.signal);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(result).toEqual({ output: 'mcp__fixture__sleep: the call to MCP server "fixture" was cancelled (interrupted: user)', isError: true });
  });

  it('reports a server that does not answer within startupTimeoutMs, and leaves no process of it running', async () => {
    // The server ignores its stdin closing, as a hung one would; it writes its pid first. The
    // limit leaves a loaded machine time to start Node.js and write the pid before the kill.
    const pidFile = path.join(root, 'silent.pid');
    const script = "require('fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000)";
    const tools = manager({ silent: { transport: 'stdio', command: process.execPath, args: ['-e', script, pidFile], startupTimeoutMs: 2_000 } });
    await tools.prepare();
    expect(tools.servers[0]?.state).toBe('failed');
    expect(tools.servers[0]?.failure).toBe('no answer within 2000 ms (startupTimeoutMs)');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 1_000;
    while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive()).toBe(false);
  });

  it('refuses executors that cannot start a process with open pipes, naming kind and executor', async () => {
    executors.set('build-box', { name: 'build-box', kind: 'virtual' } as Executor);
    executors.set('boxed', new LocalExecutor({ name: 'boxed', sandbox: 'bwrap' }));
    try {
      const tools = manager({
        remote: { transport: 'stdio', command: 'true', executor: 'build-box' },
        boxed: { transport: 'stdio', command: 'true', executor: 'boxed' },
        nowhere: { transport: 'stdio', command: 'true', executor: 'nowhere' },
      });
      await tools.prepare();
      expect(tools.servers.map((server) => [server.name, server.state, server.failure])).toEqual([
        ['remote', 'failed', 'stdio MCP servers cannot run on executor "build-box" (kind virtual): it cannot start a process with open pipes'],
        ['boxed', 'failed', 'the server runs in the sandbox of executor "boxed", which needs a workspace: give an absolute cwd, or use it from a conversation working on that executor'],
        ['nowhere', 'failed', 'executor "nowhere" is not configured'],
      ]);
      expect(await invoke(tools, 'mcp__remote__anything', {})).toEqual({
        output: 'mcp__remote__anything: MCP server "remote" is not available: stdio MCP servers cannot run on executor "build-box" (kind virtual): it cannot start a process with open pipes (it is tried again at the start of the next turn)',
        isError: true,
      });
    } finally {
      executors.delete('build-box');
      executors.delete('boxed');
    }
  });

  it('names a working directory that does not exist', async () => {
    const tools = manager({ fixture: fixture({ cwd: 'no/such/dir' }) });
    await tools.prepare();
    expect(tools.servers[0]?.failure).toBe(`working directory ${path.join(root, 'no/such/dir')} does not exist`);
  });

  it('leaves disabled servers alone', async () => {
    const tools = manager({ off: fixture({ enabled: false }) });
    await tools.prepare();
    expect(tools.servers).toEqual([]);
    expect(tools.tools()).toEqual([]);
    expect(tools.resolveTool('mcp__off__echo')).toBeUndefined();
  });

  it('refuses arguments that are not an object before calling the server', async () => {
    const tools = manager({ fixture: fixture() });
    await tools.prepare();
    const result = await invoke(tools, 'mcp__fixture__echo', 'just a string');
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^mcp__fixture__echo: arguments: not valid JSON \(.+\); they were: just a string$/);
    const jsonString = await invoke(tools, 'mcp__fixture__echo', '"a JSON string"');
    expect(jsonString.output).toMatch(/^mcp__fixture__echo: arguments: .*expected object/);
  });

  it('names the tools of a server when a tool it does not have is called after a restart', async () => {
    const tools = manager({ fixture: fixture() });
    await tools.prepare();
    await invoke(tools, 'mcp__fixture__crash', {});
    const deadline = Date.now() + 5_000;
    while (tools.servers[0]?.state !== 'exited' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const result = await invoke(tools, 'mcp__fixture__missing', {});
    expect(result).toEqual({
      output: 'mcp__fixture__missing: MCP server "fixture" has no tool "mcp__fixture__missing" (its tools: mcp__fixture__add_tool, mcp__fixture__crash, mcp__fixture__echo, mcp__fixture__sleep)',
      isError: true,
    });
  });

  it('stops its servers on close and refuses calls afterwards', async () => {
    const tools = manager({ fixture: fixture() });
    await tools.prepare();
    const pid = Number(readFileSync(path.join(root, 'pids'), 'utf8').trim());
    await tools.close();
    expect(() => process.kill(pid, 0)).toThrow();
    expect(await invoke(tools, 'mcp__fixture__echo', { text: 'x' })).toEqual({ output: 'mcp__fixture__echo: MCP server "fixture" is closed: the conversation was shut down', isError: true });
  });

  it('keeps the head and the end of a long result, and the model reads it within its cap with one marker', async () => {
    const tools = manager({ fixture: fixture() });
    await tools.prepare();
    const text = `${Array.from({ length: 12_000 }, (_, index) => `result row ${index + 1} of 12000\n`).join('')}MCP-END`;
    const result = await invoke(tools, 'mcp__fixture__echo', { text });
    const original = `echo: ${text}`;
    expect(Buffer.byteLength(original)).toBeGreaterThan(TOOL_OUTPUT_RETAINED_BYTES);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(TOOL_OUTPUT_RETAINED_BYTES);
    expect(result.output.startsWith('echo: result row 1 of 12000\n')).toBe(true);
    expect(result.output.endsWith('result row 12000 of 12000\nMCP-END')).toBe(true);
    const forModel = toolOutputForModel(result.output, DEFAULT_TOOL_OUTPUT_LIMIT_BYTES);
    expect(Buffer.byteLength(forModel)).toBeLessThanOrEqual(DEFAULT_TOOL_OUTPUT_LIMIT_BYTES);
    expect(forModel.match(/bytes omitted/g)).toHaveLength(1);
    const marker = /\[… \d+ bytes omitted \(bytes (\d+)–(\d+) of (\d+), lines (\d+)–(\d+) of 12001\) …\]\n/.exec(forModel);
    expect(marker?.[3]).toBe(String(Buffer.byteLength(original)));
    const after = forModel.slice((marker?.index ?? 0) + (marker?.[0].length ?? 0)).split('\n')[0];
    expect(after).toBe(`result row ${Number(marker?.[5]) + 1} of 12000`);
    expect(forModel.endsWith('MCP-END')).toBe(true);
  });
});
