/**
 * `agents.yaml` agents run by external processes (`kind: acp`, `kind: codex-app-server`): the
 * keys each kind takes, and errors naming the file, line and key path of each mistake.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isExternalAgent, loadAgentsFile } from '../../src/config/agents.js';
import { ConfigError } from '../../src/config/yaml-file.js';
import { agentArgv } from '../../src/runtime/external-agents/pool.js';

const directories: string[] = [];
afterEach(() => directories.splice(0).forEach((directory) => rmSync(directory, { recursive: true, force: true })));

function configDir(text: string): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-agents-'));
  directories.push(directory);
  writeFileSync(path.join(directory, 'agents.yaml'), text);
  return directory;
}

/** The message of the ConfigError loading `text` throws. */
async function problems(text: string): Promise<{ message: string; file: string }> {
  const directory = configDir(text);
  const error = await loadAgentsFile(directory).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ConfigError);
  return { message: (error as ConfigError).message, file: path.join(directory, 'agents.yaml') };
}

describe('agents.yaml: external agents', () => {
  it('reads both kinds with their command, args, env, idle timeout and Codex settings', async () => {
    const file = await loadAgentsFile(
      configDir(`agents:
  editor:
    kind: acp
    command: [openvaala, acp]
    env: { OPENVAALA_PROFILE: work }
    idleTimeoutMs: 60000
  codex:
    kind: codex-app-server
    command: [codex]
    args: ["-c", "model=\\"o3\\""]
    codex: { approvalPolicy: on-request, sandbox: workspace-write }
  loop: {}
`),
    );
    const editor = file.agents.editor!;
    const codex = file.agents.codex!;
    expect(isExternalAgent(editor) && agentArgv(editor)).toEqual(['openvaala', 'acp']);
    expect(editor).toMatchObject({ env: { OPENVAALA_PROFILE: 'work' }, idleTimeoutMs: 60000 });
    expect(isExternalAgent(codex) && agentArgv(codex)).toEqual(['codex', 'app-server', '-c', 'model="o3"']);
    expect(isExternalAgent(file.agents.loop!)).toBe(false);
  });

  it('needs a command for an external kind', async () => {
    const { message, file } = await problems('agents:\n  editor:\n    kind: acp\n');
    expect(message).toContain(`${file}:3: agents.editor.command: kind acp needs the command that starts the agent (e.g. ["openvaala", "acp"])`);
  });

  it('refuses an unknown kind, an empty command and a bad idle timeout, naming each key path', async () => {
    const { message, file } = await problems(`agents:
  a:
    kind: claude
  b:
    kind: acp
    command: []
  c:
    kind: codex-app-server
    command: [codex]
    idleTimeoutMs: 0
`);
    expect(message).toContain(`${file}:3: agents.a.kind:`);
    expect(message).toContain(`${file}:6: agents.b.command:`);
    expect(message).toContain(`${file}:10: agents.c.idleTimeoutMs:`);
  });

  it("refuses the loop's keys with an external kind, and the process keys without one", async () => {
    const { message, file } = await problems(`agents:
  a:
    kind: acp
    command: [my-agent]
    maxSteps: 10
  b:
    command: [my-agent]
    idleTimeoutMs: 1000
`);
    expect(message).toContain(`${file}:5: agents.a.maxSteps: not used with kind acp: the external agent runs its own loop`);
    expect(message).toContain(`${file}:7: agents.b.command: only for an agent run by an external process (kind: acp or codex-app-server)`);
    expect(message).toContain(`${file}:8: agents.b.idleTimeoutMs: only for an agent run by an external process`);
  });

  it('refuses Codex settings on another kind, and a bad Codex approval policy or env name', async () => {
    const { message, file } = await problems(`agents:
  a:
    kind: acp
    command: [my-agent]
    codex: { sandbox: read-only }
  b:
    kind: codex-app-server
    command: [codex]
    codex: { approvalPolicy: sometimes }
    env: { "BAD NAME": x }
`);
    expect(message).toContain(`${file}:5: agents.a.codex: only for kind: codex-app-server`);
    expect(message).toContain(`${file}:9: agents.b.codex.approvalPolicy:`);
    expect(message).toContain(`agents.b.env["BAD NAME"]:`);
  });

  it('takes the example of docs/editors.md', async () => {
    const doc = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'editors.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Other agents as OpenVaala agents'));
    const example = /```yaml file=agents.yaml\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBeDefined();
    const file = await loadAgentsFile(configDir(example!));
    expect(Object.entries(file.agents).map(([name, agent]) => [name, agent.kind])).toEqual([
      ['default', undefined],
      ['editor-agent', 'acp'],
      ['codex', 'codex-app-server'],
    ]);
  });
});
