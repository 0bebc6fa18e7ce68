/**
 * Plugins end to end through a real runtime server: one installed from a folder and one from a
 * tarball made by `npm pack`, each bringing a skill, an agent, a prompt command, a hook and an
 * MCP server (the filesystem server from the npm registry); a scripted turn uses every part,
 * disabling a plugin removes its parts from the next turn, a plugin with a broken manifest is
 * reported with its file and key while the others keep working, and the project scope turns a
 * plugin off for one working directory.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { offeredTools, toolCalls } from '../mcp/mcp-helpers.js';
import { writePlugin } from './plugin-fixtures.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const requestText = (index: number): string => JSON.stringify(harness?.environment.mock.requests[index]?.body);
const toolNames = (index: number): string[] => [...offeredTools(harness?.environment.mock.requests[index]?.body).keys()];
/** The system message of a recorded request (the skill catalog and the agent's instructions are there). */
const systemText = (index: number): string => String((harness?.environment.mock.requests[index]?.body as { input: { content: unknown }[] }).input[0]?.content);
/** What a request carries after its last item that mentions `marker` (the current turn's part). */
const textAfter = (index: number, marker: string): string => {
  const input = (harness?.environment.mock.requests[index]?.body as { input: unknown[] }).input.map((entry) => JSON.stringify(entry));
  const last = input.findLastIndex((entry) => entry.includes(marker));
  return input.slice(last + 1).join('\n');
};
const hookRuns = (items: Item[]) => items.filter((item): item is Extract<Item, { kind: 'hook_run' }> => item.kind === 'hook_run');

/** Packs a folder with `npm pack` (no network: the folder is local) and returns the tarball. */
function npmPack(folder: string, destination: string): string {
  mkdirSync(destination, { recursive: true });
  const output = execFileSync('npm', ['pack', folder, '--pack-destination', destination, '--silent'], { cwd: destination, encoding: 'utf8' });
  return path.join(destination, output.trim().split('\n').pop() as string);
}

describe('plugins', () => {
  it('installs from a folder and an npm tarball, uses every part in a turn, and drops a disabled plugin from the next turn', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls:
      - { name: load_skill, arguments: { name: "folder-kit:summarize" } }
      - { name: mcp__folder-kit_files__list_directory, arguments: { path: "." } }
  - text: "done one"
  - toolCalls: [{ name: mcp__tar-kit_files__list_directory, arguments: { path: "." } }]
  - text: "done two"
  - text: "done three"
`);
    const { root, paths, workDir } = harness.environment;
    const pluginsFolder = path.join(paths.configDir, 'plugins');
    writeFileSync(path.join(workDir, 'notes.txt'), 'notes\n');
    const folderSource = writePlugin(path.join(root, 'sources', 'folder-kit'), 'folder-kit');
    const tarball = npmPack(writePlugin(path.join(root, 'sources', 'tar-kit'), 'tar-kit', { packageJson: true }), path.join(root, 'packed'));
    const { client } = harness;

    const added = await client.request('plugins/add', { source: folderSource });
    expect(added.plugin).toMatchObject({
      name: 'folder-kit',
      enabled: true,
      active: true,
      source: folderSource,
      version: '1.0.0',
      skills: ['folder-kit:summarize'],
      agents: ['folder-kit:critic'],
      commands: ['folder-kit:hello'],
      mcpServers: ['folder-kit_files'],
      hooks: [`post_tool_use: cat "${path.join(pluginsFolder, 'folder-kit')}/hook-note.json"`],
    });
    // Parts this runtime has no use for are named, not silently dropped.
    expect(added.plugin.notes).toEqual([expect.stringContaining('Notification hooks are not run')]);
    const fromTarball = await client.request('plugins/add', { source: tarball });
    expect(fromTarball.plugin).toMatchObject({ name: 'tar-kit', active: true, source: tarball, skills: ['tar-kit:summarize'], mcpServers: ['tar-kit_files'] });
    expect(existsSync(path.join(pluginsFolder, 'tar-kit', '.claude-plugin', 'plugin.json'))).toBe(true);
    expect(readFileSync(path.join(paths.configDir, 'plugins.yaml'), 'utf8')).toContain('tar-kit:');
    const agents = await client.request('agents/list', {});
    expect(agents.agents.map((agent) => agent.name)).toEqual(expect.arrayContaining(['folder-kit:critic', 'tar-kit:critic']));

    // Turn 1 as the folder plugin's agent, started by its prompt command: its skill, MCP server and hook.
    const conversationId = await harness.conversation();
    await client.request('session/setAgent', { conversationId, agent: 'folder-kit:critic' });
    await client.request('session/input', { conversationId, input: '/folder-kit:hello Ada' });
    const [first] = await harness.turnsCompleted(1, 30_000);
    expect(first?.status, first?.error).toBe('completed');
    expect(requestText(0)).toContain('AGENT-FOLDER-KIT');
    expect(requestText(0)).toContain('Greet Ada warmly. COMMAND-FOLDER-KIT');
    expect(requestText(0)).toContain('folder-kit:summarize');
    expect(toolNames(0)).toEqual(expect.arrayContaining(['load_skill', 'mcp__folder-kit_files__list_directory', 'mcp__tar-kit_files__list_directory']));
    expect(requestText(1)).toContain('SKILL-BODY-FOLDER-KIT');
    const [listing] = toolCalls(harness.completedItems()).filter((call) => call.toolName.startsWith('mcp__'));
    expect(listing).toMatchObject({ toolName: 'mcp__folder-kit_files__list_directory', status: 'completed' });
    expect(listing?.output).toContain('[FILE] notes.txt');
    expect(listing?.output).toContain('HOOK-FOLDER-KIT saw the call');

    // Turn 2 as the tarball plugin's agent: its command, its skill by mention, its server and hook.
    await client.request('session/setAgent', { conversationId, agent: 'tar-kit:critic' });
    await client.request('session/input', { conversationId, input: '/tar-kit:hello Bob and use $tar-kit:summarize' });
    const second = (await harness.turnsCompleted(2, 30_000))[1];
    expect(second?.status, second?.error).toBe('completed');
    expect(requestText(2)).toContain('AGENT-TAR-KIT');
    expect(requestText(2)).toContain('Greet Bob and use $tar-kit:summarize warmly. COMMAND-TAR-KIT');
    expect(requestText(2)).toContain('SKILL-BODY-TAR-KIT');
    const tarListing = toolCalls(harness.completedItems()).filter((call) => call.toolName.startsWith('mcp__'))[1];
    expect(tarListing).toMatchObject({ toolName: 'mcp__tar-kit_files__list_directory', status: 'completed' });
    expect(tarListing?.output).toContain('HOOK-TAR-KIT saw the call');
    const hooksSoFar = hookRuns(harness.completedItems()).length;
    expect(hooksSoFar).toBe(2);

    // Disabling the folder plugin: the next turn has none of its parts.
    const disabled = await client.request('plugins/setEnabled', { name: 'folder-kit', enabled: false });
    expect(disabled.plugin).toMatchObject({ enabled: false, active: false });
    expect(parseYaml(readFileSync(path.join(paths.configDir, 'plugins.yaml'), 'utf8'))).toEqual({ plugins: { 'folder-kit': { enabled: false, source: folderSource }, 'tar-kit': { enabled: true, source: tarball } } });
    await client.request('session/input', { conversationId, input: '/folder-kit:hello Eve' });
    const third = (await harness.turnsCompleted(3, 30_000))[2];
    expect(third?.status, third?.error).toBe('completed');
    expect(toolNames(4).filter((name) => name.startsWith('mcp__folder-kit'))).toEqual([]);
    expect(toolNames(4)).toContain('mcp__tar-kit_files__list_directory');
    expect(systemText(4)).not.toContain('folder-kit:summarize');
    expect(systemText(4)).toContain('tar-kit:summarize');
    expect(systemText(4)).toContain('AGENT-TAR-KIT');
    // The prompt command of the disabled plugin is left as the text the user typed.
    expect(requestText(4)).toContain('/folder-kit:hello Eve');
    expect(textAfter(4, '/folder-kit:hello Eve')).toBe('');
    // Its hook no longer runs (only the two runs of the earlier turns).
    expect(hookRuns(harness.completedItems())).toHaveLength(2);
    expect((await client.request('agents/list', {})).agents.map((agent) => agent.name)).not.toContain('folder-kit:critic');
  }, 90_000);

  it('reports a plugin with a broken manifest by file and key, and keeps the others working', async () => {
    harness = await startInProcessServer(`
responses:
  - text: "still fine"
`);
    const { root, paths } = harness.environment;
    const { client } = harness;
    // Refused at install, naming the file and key; nothing is left behind.
    const badSource = writePlugin(path.join(root, 'sources', 'bad'), 'bad-kit');
    writeFileSync(path.join(badSource, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'Bad Kit' }));
    await expect(client.request('plugins/add', { source: badSource })).rejects.toThrow(
      `plugins/add: the plugin was not installed: plugin "bad": ${path.join(badSource, '.claude-plugin', 'plugin.json')}: name: plugin names are`,
    );
    expect(existsSync(path.join(paths.configDir, 'plugins', 'bad-kit'))).toBe(false);

    await client.request('plugins/add', { source: writePlugin(path.join(root, 'sources', 'good-kit'), 'good-kit') });
    await client.request('plugins/add', { source: writePlugin(path.join(root, 'sources', 'later-kit'), 'later-kit') });
    // The installed copy breaks afterwards (edited by hand): a hook entry without its type.
    const hooksFile = path.join(paths.configDir, 'plugins', 'later-kit', 'hooks', 'hooks.json');
    writeFileSync(hooksFile, JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ command: 'true' }] }] } }));
    const reload = await client.request('config/reload', {});
    expect(reload.ok).toBe(true);
    const { plugins } = await client.request('plugins/list', {});
    expect(plugins.map((plugin) => [plugin.name, plugin.active])).toEqual([
      ['good-kit', true],
      ['later-kit', false],
    ]);
    expect(plugins[1]?.problem).toEqual({ file: 'plugins/later-kit/hooks/hooks.json', keyPath: 'hooks.PreToolUse[0].hooks[0].type', message: 'required: "command"' });

    const conversationId = await harness.conversation();
    await client.request('session/input', { conversationId, input: 'anything' });
    const [turn] = await harness.turnsCompleted(1, 30_000);
    expect(turn?.status, turn?.error).toBe('completed');
    expect(toolNames(0)).toContain('mcp__good-kit_files__list_directory');
    expect(toolNames(0).filter((name) => name.startsWith('mcp__later-kit'))).toEqual([]);
    expect(systemText(0)).toContain('good-kit:summarize');
    expect(systemText(0)).not.toContain('later-kit:summarize');
  }, 60_000);

  it('turns a plugin off for one project, and removes a plugin with its folder', async () => {
    harness = await startInProcessServer(`
responses:
  - text: "one"
  - text: "two"
`);
    const { root, paths, workDir } = harness.environment;
    const { client } = harness;
    await client.request('plugins/add', { source: writePlugin(path.join(root, 'sources', 'kit'), 'kit') });
    await client.request('plugins/setEnabled', { name: 'kit', enabled: false, projectDirectory: workDir });
    expect(parseYaml(readFileSync(path.join(workDir, '.openvaala', 'plugins.yaml'), 'utf8'))).toEqual({ plugins: { kit: { enabled: false } } });
    const conversationId = await harness.conversation();
    await client.request('session/input', { conversationId, input: '/kit:hello Zoe' });
    await harness.turnsCompleted(1, 30_000);
    // Still enabled for the user, off in this project: no skill, command or hook of it here.
    expect((await client.request('plugins/list', {})).plugins[0]).toMatchObject({ name: 'kit', enabled: true });
    expect(systemText(0)).not.toContain('kit:summarize');
    expect(requestText(0)).not.toContain('COMMAND-KIT');

    await client.request('plugins/remove', { name: 'kit' });
    expect(existsSync(path.join(paths.configDir, 'plugins', 'kit'))).toBe(false);
    expect((await client.request('plugins/list', {})).plugins).toEqual([]);
    await expect(client.request('plugins/remove', { name: 'kit' })).rejects.toThrow('plugins/remove: no plugin named "kit" is installed (installed: none)');
    await client.request('session/input', { conversationId, input: 'again' });
    await harness.turnsCompleted(2, 30_000);
    expect(toolNames(1).filter((name) => name.startsWith('mcp__kit'))).toEqual([]);
  }, 60_000);

  it("tells the user, at each turn, that a project's plugin settings that do not validate were ignored", async () => {
    harness = await startInProcessServer(`
responses:
  - text: "one"
`);
    const { root, workDir } = harness.environment;
    await harness.client.request('plugins/add', { source: writePlugin(path.join(root, 'sources', 'kit'), 'kit') });
    const projectFile = path.join(workDir, '.openvaala', 'plugins.yaml');
    mkdirSync(path.dirname(projectFile), { recursive: true });
    writeFileSync(projectFile, 'plugins:\n  kit: { enabled: "no" }\n');
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'hello' });
    await harness.turnsCompleted(1, 30_000);
    const warnings = harness.events.flatMap((event) => (event.method === 'turn/warning' ? [event.params] : []));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ source: 'plugin', name: projectFile });
    expect(warnings[0]?.message).toMatch(new RegExp(`^${projectFile.replace(/[.]/g, '\\.')}:2: plugins\\.kit\\.enabled: .*the project's plugin settings were ignored`));
  }, 60_000);
});
