/**
 * Plugin folders made by the tests, in the Claude Code plugin format: a manifest, a skill, an
 * agent, a prompt command, a PostToolUse hook and an MCP server (the filesystem server from the
 * npm registry, given the plugin's own folder through `${CLAUDE_PLUGIN_ROOT}`; it serves the
 * conversation's working directory, which the client offers as its MCP root).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageBin } from '../mcp/mcp-helpers.js';

const FILESYSTEM_BIN = packageBin('@modelcontextprotocol/server-filesystem');

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/**
 * Writes a plugin named `name` into `directory` (created). Its parts carry `MARK` (the name in
 * capitals) so a test can find them in model requests.
 */
export function writePlugin(directory: string, name: string, options: { packageJson?: boolean } = {}): string {
  const mark = name.toUpperCase();
  write(path.join(directory, '.claude-plugin', 'plugin.json'), JSON.stringify({ name, version: '1.0.0', description: `The ${name} plugin`, author: { name: 'Test Author', email: 'author@example.org' }, keywords: ['test'] }, null, 2));
  write(path.join(directory, 'skills', 'summarize', 'SKILL.md'), `---\nname: summarize\ndescription: Summarize things the ${name} way.\n---\nSKILL-BODY-${mark}: use three bullet points.\n`);
  write(path.join(directory, 'agents', 'critic.md'), `---\nname: critic\ndescription: Reviews changes for ${name}.\ntools: Read, Grep\nmodel: sonnet\n---\nYou are the critic of ${name}. AGENT-${mark}\n`);
  write(path.join(directory, 'commands', 'hello.md'), `---\ndescription: Greets someone\nargument-hint: <who>\n---\nGreet $ARGUMENTS warmly. COMMAND-${mark}\n`);
  write(
    path.join(directory, 'hooks', 'hooks.json'),
    JSON.stringify(
      {
        description: 'checks the plugin server calls',
        hooks: {
          PostToolUse: [{ matcher: `mcp__${name}_files__*`, hooks: [{ type: 'command', command: `cat "\${CLAUDE_PLUGIN_ROOT}/hook-note.json"`, timeout: 10 }] }],
          Notification: [{ hooks: [{ type: 'command', command: 'true' }] }],
        },
      },
      null,
      2,
    ),
  );
  write(path.join(directory, 'hook-note.json'), JSON.stringify({ additionalContext: `HOOK-${mark} saw the call` }));
  write(path.join(directory, '.mcp.json'), JSON.stringify({ mcpServers: { files: { command: process.execPath, args: [FILESYSTEM_BIN, '${CLAUDE_PLUGIN_ROOT}'] } } }, null, 2));
  if (options.packageJson) write(path.join(directory, 'package.json'), JSON.stringify({ name, version: '1.0.0', files: ['.claude-plugin', 'skills', 'agents', 'commands', 'hooks', 'hook-note.json', '.mcp.json'] }, null, 2));
  return directory;
}
