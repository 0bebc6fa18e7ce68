/**
 * `kind: codex-app-server` with the real Codex binary (scripts/install-codex.sh), pointed at
 * the mock provider over HTTP on 127.0.0.1 through a CODEX_HOME of the test's own: Codex asks
 * approval for a shell command (`approval_policy = untrusted`), the request reaches a
 * RuntimeClient as `approval/request`, the answer goes back, and the command, the approval and
 * the answer are stored as OpenVaala items.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient, type ServerRequestParams } from '../../../src/client/runtime-client.js';
import type { Item } from '../../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';

/** The Codex executable, installed (once, into a cache folder) by the project's script; undefined with the reason when it cannot be. */
function installCodex(): { codex?: string; reason?: string } {
  try {
    const output = execFileSync('bash', ['scripts/install-codex.sh'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    return { codex: output.trim().split('\n').at(-1) };
  } catch (error) {
    return { reason: `the Codex CLI could not be installed by scripts/install-codex.sh: ${(error as Error).message}` };
  }
}

const installed = installCodex();
if (installed.reason) console.warn(`skipping the codex-app-server tests: ${installed.reason}`);

let harness: InProcessServer | undefined;
const clients: RuntimeClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await harness?.stop();
  harness = undefined;
});

/** A CODEX_HOME whose config points Codex at the mock and turns off everything that would reach further (checked with strace: no DNS lookup is left). */
function codexHome(root: string, baseURL: string): string {
  const home = path.join(root, 'codex-home');
  mkdirSync(home, { recursive: true });
  writeFileSync(
    path.join(home, 'config.toml'),
    [
      'model = "mock-model"',
      'model_provider = "mock"',
      'check_for_update_on_startup = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[feedback]',
      'enabled = false',
      '',
      // Plugins, apps, in-app updates and model discovery look up github.com and chatgpt.com.
      '[features]',
      'plugins = false',
      'remote_plugin = false',
      'apps = false',
      'plugin_sharing = false',
      'in_app_updates = false',
      'api_key_model_discovery = false',
      '',
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = "${baseURL}"`,
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  return home;
}

async function startWithCodex(script: string): Promise<InProcessServer> {
  let baseURL = '';
  return startInProcessServer(script, {
    providersYaml: (url) => {
      baseURL = url;
      return `providers:\n  mock: { kind: openai, baseURL: ${url}, apiKey: none }\ndefaultModel: mock/mock-model\n`;
    },
    beforeStart: (environment) => {
      const home = codexHome(path.dirname(environment.workDir), baseURL);
      // danger-full-access: Codex's own sandbox needs helper programs it refuses to create under a
      // temporary CODEX_HOME ("bwrap: execvp codex-linux-sandbox"); sandboxing is Codex's concern here.
      const agents = `agents:\n  codex:\n    default: true\n    kind: codex-app-server\n    command: [${JSON.stringify(installed.codex)}]\n    env: { CODEX_HOME: ${JSON.stringify(home)} }\n    codex: { approvalPolicy: untrusted, sandbox: danger-full-access }\n`;
      writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), agents);
    },
  });
}

describe.skipIf(installed.codex === undefined)('kind: codex-app-server (real Codex)', () => {
  it('runs a turn: the shell command Codex asks about is relayed, allowed and stored with its approval', async () => {
    harness = await startWithCodex(`
responses:
  - toolCalls:
      - name: exec_command
        arguments: { cmd: "echo made-by-codex > codex.txt && cat codex.txt" }
        id: call_1
  - text: "The file is written."
`);
    const conversationId = await harness.conversation();
    const reviewer = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'reviewer', capabilities: { approvals: true } });
    clients.push(reviewer);
    const asked: ServerRequestParams<'approval/request'>[] = [];
    reviewer.handleServerRequest('approval/request', async (request) => {
      asked.push(request);
      return { decision: 'allow_once' };
    });
    await reviewer.request('conversation/subscribe', { conversationId });
    const { turnId } = await harness.client.request('session/input', { conversationId, input: 'write the file' });
    const [turn] = await harness.turnsCompleted(1, 60_000);
    expect(turn).toMatchObject({ id: turnId, status: 'completed', stopReason: 'end_turn' });
    expect(turn!.usage.totalTokens).toBeGreaterThan(0);

    expect(asked).toHaveLength(1);
    expect(asked[0]!.details).toMatchObject({ kind: 'command', cwd: harness.environment.workDir });
    expect((asked[0]!.details as { command: string }).command).toContain('echo made-by-codex > codex.txt');
    // Codex 0.171 offers no "for the session" on this request: it is not offered to the clients either.
    expect(asked[0]!.options.map((option) => option.decision)).toEqual(['allow_once', 'deny', 'deny_interrupt']);

    const { items: stored } = await harness.client.request('items/list', { conversationId });
    const items = stored.map((entry) => entry.item).filter((item) => item.turnId === turnId);
    expect(items.map((item) => item.kind)).toEqual(['user_message', 'approval', 'tool_call', 'assistant_message']);
    const call = items[2] as Extract<Item, { kind: 'tool_call' }>;
    expect(call.id).toBe(asked[0]!.itemId);
    expect(call).toMatchObject({ toolName: 'exec_command', status: 'completed', exitCode: 0, isError: false, details: { kind: 'command', exitCode: 0 } });
    // Codex runs the command in a login shell, which sources the machine's own profile: whatever
    // that prints (a version manager's warning when two shells start at once) comes before it.
    expect(call.output).toMatch(/(^|\n)made-by-codex\n$/);
    expect((call.details as { output: string }).output).toBe(call.output);
    expect(items[1]).toMatchObject({ kind: 'approval', callId: call.callId, decision: 'allow_once', decidedBy: 'client:reviewer' });
    expect(items[3]).toMatchObject({ kind: 'assistant_message', text: 'The file is written.', model: 'codex/codex' });

    expect(readFileSync(path.join(harness.environment.workDir, 'codex.txt'), 'utf8')).toBe('made-by-codex\n');
    // Codex talked to the mock only (its two model calls), over the Responses API.
    expect(harness.environment.mock.requests.map((request) => request.api)).toEqual(['responses', 'responses']);
  });

  it('stores reasoning, and interrupts a turn with turn/interrupt', async () => {
    harness = await startWithCodex(`
responses:
  - reasoningDeltas: ["Planning the work."]
    deltas: ["Working ", "on ", "it"]
    holds: [{ afterDeltas: 2, gate: mid-answer }]
`);
    const conversationId = await harness.conversation();
    const { turnId } = await harness.client.request('session/input', { conversationId, input: 'plan it' });
    await harness.environment.mock.waitForHold('mid-answer', 60_000);
    await harness.waitFor((event) => event.method === 'item/delta' && event.params.delta.text === 'Working ', 20_000);
    await harness.client.request('session/interrupt', { conversationId, turnId });
    const [turn] = await harness.turnsCompleted(1, 60_000);
    expect(turn).toMatchObject({ id: turnId, status: 'interrupted', stopReason: 'user_interrupt' });
    const items = harness.completedItems();
    expect(items.map((item) => [item.kind, item.status])).toEqual([
      ['user_message', 'completed'],
      ['reasoning', 'completed'],
      ['assistant_message', 'interrupted'],
      ['interruption', 'completed'],
    ]);
    expect(items[1]).toMatchObject({ summary: 'Planning the work.' });
    expect(items[2]).toMatchObject({ text: 'Working ' });
  });
});
