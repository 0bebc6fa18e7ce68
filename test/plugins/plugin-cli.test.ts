/**
 * A plugin folder laid out as the Claude Code plugin documentation shows it loads unchanged,
 * and `openvaala plugin add | list | enable | disable | remove` run as real processes on a
 * configuration directory.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadPlugin } from '../../src/plugins/plugin-loader.js';
import { runCli } from '../helpers/environment.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-plugin-cli-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** A plugin as Claude Code's documentation lays one out, with keys and parts this runtime does not use. */
function claudeCodePlugin(directory: string): string {
  write(
    path.join(directory, '.claude-plugin', 'plugin.json'),
    JSON.stringify({
      name: 'code-tools',
      version: '2.1.0',
      description: 'Review and formatting helpers',
      author: { name: 'Dev Team', email: 'dev@example.org', url: 'https://example.org' },
      homepage: 'https://example.org/docs',
      repository: 'https://example.org/code-tools',
      license: 'MIT',
      keywords: ['review'],
      commands: ['./custom/commands/special.md'],
      outputStyles: './styles/',
    }),
  );
  write(path.join(directory, 'commands', 'review.md'), '---\ndescription: Review the current change\nargument-hint: [file]\nallowed-tools: Read, Grep\n---\nReview $ARGUMENTS for bugs.\n');
  write(path.join(directory, 'custom', 'commands', 'special.md'), 'Do the special thing.\n');
  write(path.join(directory, 'agents', 'security-reviewer.md'), '---\nname: security-reviewer\ndescription: Looks for security problems\ntools: Read, Grep, Glob\nmodel: inherit\n---\nYou review code for security problems.\n');
  write(path.join(directory, 'skills', 'code-review', 'SKILL.md'), '---\nname: code-review\ndescription: Reviews code for style and bugs.\n---\nRead the diff, then comment.\n');
  write(path.join(directory, 'skills', 'code-review', 'scripts', 'lint.sh'), '#!/bin/sh\nexit 0\n');
  write(
    path.join(directory, 'hooks', 'hooks.json'),
    JSON.stringify({
      hooks: {
        PostToolUse: [{ matcher: 'Write|Edit', hooks: [{ type: 'command', command: '${CLAUDE_PLUGIN_ROOT}/scripts/format.sh', timeout: 30 }] }],
        SessionStart: [{ hooks: [{ type: 'command', command: 'echo "session started"' }] }],
        UserPromptSubmit: [{ hooks: [{ type: 'prompt', prompt: 'Is this prompt safe?' }] }],
        SubagentStop: [{ hooks: [{ type: 'command', command: 'true' }] }],
      },
    }),
  );
  write(path.join(directory, 'scripts', 'format.sh'), '#!/bin/sh\nexit 0\n');
  chmodSync(path.join(directory, 'scripts', 'format.sh'), 0o755);
  write(
    path.join(directory, '.mcp.json'),
    JSON.stringify({
      mcpServers: {
        'plugin-db': { command: '${CLAUDE_PLUGIN_ROOT}/servers/db-server', args: ['--config', '${CLAUDE_PLUGIN_ROOT}/config.json'], env: { DB_PATH: '${CLAUDE_PLUGIN_ROOT}/data' } },
        tracker: { type: 'http', url: 'https://mcp.example.org/mcp', headers: { Authorization: 'env:TRACKER_TOKEN' } },
      },
    }),
  );
  return directory;
}

describe('the Claude Code plugin format', () => {
  it('loads a plugin folder as Claude Code lays it out, unchanged', async () => {
    const directory = claudeCodePlugin(path.join(root, 'code-tools'));
    const { plugin, problem } = await loadPlugin(directory);
    expect(problem).toBeUndefined();
    expect(plugin).toMatchObject({ name: 'code-tools', version: '2.1.0', description: 'Review and formatting helpers', skillDirectories: [path.join(directory, 'skills')] });
    expect(plugin?.agents).toEqual({ 'code-tools:security-reviewer': { description: 'Looks for security problems', instructions: 'You review code for security problems.' } });
    expect(Object.keys(plugin?.commands ?? {})).toEqual(['code-tools:review', 'code-tools:special']);
    expect(plugin?.commands['code-tools:review']).toMatchObject({ description: 'Review the current change', body: 'Review $ARGUMENTS for bugs.' });
    expect(plugin?.hooks).toEqual({
      post_tool_use: [{ matcher: 'Write|Edit', command: `${directory}/scripts/format.sh`, timeoutMs: 30_000 }],
      session_start: [{ command: 'echo "session started"', timeoutMs: 60_000 }],
    });
    expect(plugin?.mcpServers).toEqual({
      'code-tools_plugin-db': { transport: 'stdio', command: `${directory}/servers/db-server`, args: ['--config', `${directory}/config.json`], env: { DB_PATH: `${directory}/data` } },
      'code-tools_tracker': { transport: 'http', url: 'https://mcp.example.org/mcp', headers: { Authorization: 'env:TRACKER_TOKEN' } },
    });
    // What is not used is said, not dropped silently.
    expect(plugin?.notes).toEqual([
      '.claude-plugin/plugin.json: outputStyles is not used here',
      'hooks/hooks.json: hooks.UserPromptSubmit[0].hooks[0]: hooks of type "prompt" are not run (only "command")',
      'hooks/hooks.json: SubagentStop hooks are not run (events run here: PreToolUse, PostToolUse, UserPromptSubmit, SessionStart, Stop, PreCompact)',
    ]);
  });

  it('names the file and key of each kind of mistake', async () => {
    const cases: [string, (directory: string) => void, string, string][] = [
      ['a manifest that is not JSON', (directory) => write(path.join(directory, '.claude-plugin', 'plugin.json'), '{ "name": '), '.claude-plugin/plugin.json', ''],
      ['a component path leading outside the folder', (directory) => write(path.join(directory, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'code-tools', agents: '../elsewhere' })), '.claude-plugin/plugin.json', 'agents'],
      ['an SSE server', (directory) => write(path.join(directory, '.mcp.json'), JSON.stringify({ mcpServers: { old: { type: 'sse', url: 'https://example.org/sse' } } })), '.mcp.json', 'mcpServers.old.type'],
      ['a matcher on an event without tools', (directory) => write(path.join(directory, 'hooks', 'hooks.json'), JSON.stringify({ hooks: { Stop: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }] }] } })), 'hooks/hooks.json', 'hooks.Stop[0].matcher'],
      ['agent front matter that is not YAML', (directory) => write(path.join(directory, 'agents', 'broken.md'), '---\nname: [unclosed\n---\nbody\n'), 'agents/broken.md', '(front matter)'],
    ];
    for (const [what, breakIt, file, keyPath] of cases) {
      const directory = claudeCodePlugin(path.join(root, what.replaceAll(' ', '-')));
      breakIt(directory);
      const { plugin, problem } = await loadPlugin(directory);
      expect(plugin, what).toBeUndefined();
      expect(problem, what).toMatchObject({ file: path.join(directory, file), keyPath });
    }
  });

  it('counts the line of a front matter YAML mistake in the whole file', async () => {
    const directory = claudeCodePlugin(path.join(root, 'front-matter-line'));
    write(path.join(directory, 'agents', 'broken.md'), '---\ndescription: fine\nname: [unclosed\n---\nbody\n');
    const { problem } = await loadPlugin(directory);
    expect(problem?.message).toMatch(/^is not valid YAML \(line [34]\): /);
    expect(problem?.message).not.toMatch(/at line \d+, column/);
  });
});

describe('openvaala plugin', () => {
  it('adds, lists, disables per project and for the user, and removes, editing plugins.yaml', async () => {
    const configDir = path.join(root, 'config');
    mkdirSync(configDir);
    const env = { ...process.env, XDG_CONFIG_HOME: path.join(root, 'xdg-config'), XDG_DATA_HOME: path.join(root, 'data'), XDG_STATE_HOME: path.join(root, 'state') };
    const cli = (...args: string[]) => runCli([...args, '--config-dir', configDir], { env, cwd: root });
    const source = claudeCodePlugin(path.join(root, 'code-tools'));

    const added = await cli('plugin', 'add', source);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toContain(`installed code-tools 2.1.0 in ${path.join(configDir, 'plugins', 'code-tools')}`);
    expect(added.stdout).toContain('MCP servers: code-tools_plugin-db, code-tools_tracker');
    expect(existsSync(path.join(configDir, 'plugins', 'code-tools', 'skills', 'code-review', 'scripts', 'lint.sh'))).toBe(true);
    expect(parseYaml(readFileSync(path.join(configDir, 'plugins.yaml'), 'utf8'))).toEqual({ plugins: { 'code-tools': { enabled: true, source } } });

    const again = await cli('plugin', 'add', source);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('plugin add: a plugin named "code-tools" is already installed');

    const project = path.join(root, 'project');
    mkdirSync(project);
    expect((await cli('plugin', 'disable', 'code-tools', '--project', project)).stdout).toBe(`disabled code-tools for ${project}\n`);
    expect(parseYaml(readFileSync(path.join(project, '.openvaala', 'plugins.yaml'), 'utf8'))).toEqual({ plugins: { 'code-tools': { enabled: false } } });
    expect((await cli('plugin', 'disable', 'code-tools')).code).toBe(0);
    const listed = await cli('plugin', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`code-tools\tdisabled\t2.1.0\t${source}`);
    expect(listed.stdout).toContain('  command /code-tools:review');

    // A plugin broken by hand is listed with its file and key, and the list exits 1.
    writeFileSync(path.join(configDir, 'plugins', 'code-tools', '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'code-tools', skills: 7 }));
    const broken = await cli('plugin', 'list');
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`plugin "code-tools": ${path.join(configDir, 'plugins', 'code-tools', '.claude-plugin', 'plugin.json')}: skills: expected a path relative to the plugin folder, or a list of such paths`);
    // Enabled, it is what config check warns about: the server would start without it.
    expect((await cli('plugin', 'enable', 'code-tools')).code).toBe(0);
    const checked = await cli('config', 'check');
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stderr).toContain(`warning: plugin "code-tools" is not loaded (the server runs without it): ${path.join(configDir, 'plugins', 'code-tools', '.claude-plugin', 'plugin.json')}: skills: expected a path relative to the plugin folder`);

    expect((await cli('plugin', 'enable', 'nope')).stderr).toContain('plugin enable: no plugin named "nope" is installed (installed: code-tools)');
    expect((await cli('plugin', 'remove', 'code-tools')).stdout).toBe('removed code-tools\n');
    expect(existsSync(path.join(configDir, 'plugins', 'code-tools'))).toBe(false);
    expect(parseYaml(readFileSync(path.join(configDir, 'plugins.yaml'), 'utf8'))).toEqual({ plugins: {} });
  }, 60_000);
});

describe('a mistyped --config-dir or --project', () => {
  it('is refused naming the option and the path, exit 64, and nothing is created or installed', async () => {
    const env = { ...process.env, XDG_CONFIG_HOME: path.join(root, 'xdg-config'), XDG_DATA_HOME: path.join(root, 'data'), XDG_STATE_HOME: path.join(root, 'state') };
    const missing = path.join(root, 'cnofig');
    const source = claudeCodePlugin(path.join(root, 'code-tools'));
    for (const args of [['plugin', 'add', source], ['plugin', 'list'], ['plugin', 'remove', 'code-tools'], ['plugin', 'enable', 'code-tools'], ['auth', 'list'], ['auth', 'remove', 'openai']]) {
      const result = await runCli([...args, '--config-dir', missing], { env, cwd: root });
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.stderr, args.join(' ')).toContain(`--config-dir ${missing}: no such directory; give an existing configuration directory`);
    }
    const keyed = await runCli(['auth', 'set', 'openai', '--config-dir', missing], { env, cwd: root, input: 'sk-test-key\n' });
    expect(keyed.code).toBe(64);
    expect(keyed.stderr).toContain(`--config-dir ${missing}: no such directory`);
    expect(existsSync(missing)).toBe(false);

    const configDir = path.join(root, 'config');
    mkdirSync(configDir);
    expect((await runCli(['plugin', 'add', source, '--config-dir', configDir], { env, cwd: root })).code).toBe(0);
    const project = path.join(root, 'projcets', 'app');
    const disabled = await runCli(['plugin', 'disable', 'code-tools', '--project', project, '--config-dir', configDir], { env, cwd: root });
    expect(disabled.code).toBe(64);
    expect(disabled.stderr).toContain(`--project ${project}: no such directory; give the directory of an existing project`);
    expect(existsSync(path.join(root, 'projcets'))).toBe(false);
  });

  it('prints what the files of a plugin say (its version, notes) without their escape sequences', async () => {
    const configDir = path.join(root, 'config-escapes');
    mkdirSync(configDir);
    const env = { ...process.env, XDG_CONFIG_HOME: path.join(root, 'xdg-config'), XDG_DATA_HOME: path.join(root, 'data'), XDG_STATE_HOME: path.join(root, 'state') };
    const source = path.join(root, 'escapes');
    write(path.join(source, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'escapes', version: '1.0\u001b]0;pwned\u0007\u001b[2J' }));
    const added = await runCli(['plugin', 'add', source, '--config-dir', configDir], { env, cwd: root });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('installed escapes 1.0');
    const listed = await runCli(['plugin', 'list', '--config-dir', configDir], { env, cwd: root });
    expect(listed.stdout).toContain('escapes');
    // Control characters are what this pattern looks for.
    // eslint-disable-next-line no-control-regex
    for (const output of [added.stdout, listed.stdout]) expect(output).not.toMatch(/[\u001b\u0007]/);
  });
});
