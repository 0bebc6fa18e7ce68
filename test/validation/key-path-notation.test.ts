/**
 * Every surface that refuses input names the place by one notation, JSON-path-like: a list's
 * index in brackets, a key after a dot (`rules[0].decision`). One input that fails in a
 * configuration file, as protocol params, as tool arguments (built-in or MCP), in a hook's
 * answer or in a plugin's file is named the same way in each, never `rules.0.decision`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfiguration } from '../../src/config/configuration.js';
import { formatKeyPath, jsonPointerPath } from '../../src/key-path.js';
import { McpArgumentCheck } from '../../src/mcp/argument-check.js';
import { loadPlugin } from '../../src/plugins/plugin-loader.js';
import { ProtocolSchema } from '../../src/protocol/message-validator.js';
import { buildProtocolJsonSchema } from '../../src/protocol/generate-schema.js';
import { interpretHookResult } from '../../src/runtime/hooks/hook-runner.js';
import { updatePlanTool } from '../../src/tools/update-plan.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let root: string;
let harness: InProcessServer | undefined;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-key-paths-'));
});
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  rmSync(root, { recursive: true, force: true });
});

/** A message that names an index the other way (`rules.0.` or `rules.0:`) fails the notation. */
const DOTTED_INDEX = /[A-Za-z_]\.\d+(?:[.:"\s]|$)/;

/** The message of what `run` rejects or throws. */
async function failure(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('it was accepted');
}

describe('key path notation', () => {
  it('formats indexes in brackets, keys after dots, and keys that would read as several quoted', () => {
    expect(formatKeyPath(['agents', 'default', 'approvals', 'rules', 0, 'decision'])).toBe('agents.default.approvals.rules[0].decision');
    expect(formatKeyPath([0, 'name'])).toBe('[0].name');
    expect(formatKeyPath(['rules', 0], 'params')).toBe('params.rules[0]');
    expect(formatKeyPath([], 'params')).toBe('params');
    expect(formatKeyPath(['models', 'gpt-4.1', 'contextWindow'])).toBe('models["gpt-4.1"].contextWindow');
    expect(formatKeyPath(['my-server', 'a/b', ''])).toBe('my-server.a/b[""]');
    expect(jsonPointerPath('/tags/1/a~1b', { tags: [0, { 'a/b': 1 }] })).toEqual(['tags', 1, 'a/b']);
    // A record key of digits stays a key when the value shows a mapping there.
    expect(jsonPointerPath('/env/0', { env: { 0: 'x' } })).toEqual(['env', '0']);
    expect(jsonPointerPath('')).toEqual([]);
  });

  it('configuration files', async () => {
    const configDir = path.join(root, 'config');
    mkdirSync(configDir);
    writeFileSync(path.join(configDir, 'agents.yaml'), 'agents:\n  default:\n    approvals:\n      rules:\n        - { tool: exec_command, decision: maybe }\n');
    writeFileSync(path.join(configDir, 'hooks.yaml'), 'hooks:\n  pre_tool_use:\n    - { command: "true", timeout: 5 }\n');
    const message = await failure(() => loadConfiguration(configDir));
    expect(message).toContain('agents.default.approvals.rules[0].decision: ');
    expect(message).toContain('hooks.pre_tool_use[0].timeout: Unrecognized key: "timeout" (did you mean "timeoutMs"?)');
    expect(message).not.toMatch(DOTTED_INDEX);
  });

  it('protocol params, checked by schema and by the handlers, through a real server', async () => {
    // The params are invalid on purpose: the server's refusal is what is checked.
    allowInvalidSentMessages();
    harness = await startInProcessServer('responses:\n  - text: "unused"\n');
    const { client } = harness;
    const policy = await failure(() => client.request('conversation/create', { cwd: harness!.environment.workDir, approvalPolicy: { rules: [{ tool: 'exec_command', decision: 'maybe' }] } } as never));
    expect(policy).toContain('conversation/create: params.approvalPolicy.rules[0].decision: ');
    const servers = await failure(() => client.request('conversation/create', { cwd: harness!.environment.workDir, mcpServers: { files: { transport: 'stdio', command: 'x', arg: ['a'] } } } as never));
    expect(servers).toContain('conversation/create: params.mcpServers.files.arg: Unrecognized key: "arg" (did you mean "args"?)');
    const conversationId = await harness.conversation();
    const attachment = await failure(() => client.request('session/input', { conversationId, input: [{ type: 'text', text: 'see' }, { type: 'file', attachmentId: 'upl_missing' }] }));
    expect(attachment).toContain('session/input: params.input[1].attachmentId: no attachment');
    for (const message of [policy, servers, attachment]) expect(message).not.toMatch(DOTTED_INDEX);
  });

  it('the protocol message validator', () => {
    const schema = new ProtocolSchema(buildProtocolJsonSchema() as Record<string, unknown>);
    const problems = schema.check('SessionInputParams', { conversationId: 'conv_1', input: [{ type: 'text', text: 'a' }, { type: 'text', text: 5 }] });
    expect(problems.join('\n')).toContain('input[1].text must be string');
    expect(problems.join('\n')).not.toMatch(DOTTED_INDEX);
  });

  it('built-in tool arguments', async () => {
    const tool = updatePlanTool({ setPlan: async () => undefined });
    const result = await tool.invoke({ plan: [{ step: 'a', status: 'pending' }, { step: 'b', status: 'done' }] }, { workspace: undefined as never, signal: new AbortController().signal });
    expect(result.output).toContain('update_plan: argument "plan[1].status": ');
    expect(result.output).not.toMatch(DOTTED_INDEX);
  });

  it('MCP tool arguments', async () => {
    const check = new McpArgumentCheck();
    const tool = { name: 'probe', inputSchema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false } } } } } as Parameters<McpArgumentCheck['problems']>[1];
    const problems = await check.problems('s', tool, { tags: [{ name: 'a' }, { name: 3, nmae: 'b' }, {}] });
    expect(problems).toEqual(['argument "tags[1].nmae": unknown argument (did you mean "name"?)', 'argument "tags[1].name": must be a string (got 3)', 'argument "tags[2].name": required, but missing']);
  });

  it('hook answers', () => {
    const verdict = interpretHookResult('pre_tool_use', 'check', 1000, { exitCode: 0, stdout: '{"decision":"dney"}', stderr: '', timedOut: false, aborted: false } as never);
    expect(verdict.notes.join('\n')).toContain('stdout JSON: decision: "dney" is not one of "allow", "ask", "deny", "block" (did you mean "deny"?)');
  });

  it('plugin files', async () => {
    const plugin = path.join(root, 'kit');
    mkdirSync(path.join(plugin, '.claude-plugin'), { recursive: true });
    mkdirSync(path.join(plugin, 'hooks'));
    writeFileSync(path.join(plugin, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'kit' }));
    writeFileSync(path.join(plugin, 'hooks', 'hooks.json'), JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'true' }] }, { hooks: [{ command: 'true' }] }] } }));
    const { problem } = await loadPlugin(plugin);
    expect(problem?.keyPath).toBe('hooks.PreToolUse[1].hooks[0].type');
  });
});
