/**
 * Configuration files whose text YAML would misread or silently keep: encodings, byte order
 * marks, line endings, tabs, and `${VAR}` / `$VAR` / `%VAR%` written where nothing expands them.
 * Each problem names the file, the line and what to do.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, loadConfiguration } from '../../src/config/configuration.js';

// A test may load several sets of files; every directory it made is removed after it.
const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** Writes the files into a new directory and returns the load's error text ('' when it loads). */
async function problemsOf(files: Record<string, string | Buffer>): Promise<string> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-config-text-'));
  directories.push(directory);
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(directory, name), content);
  try {
    await loadConfiguration(directory);
    return '';
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    return error.message;
  }
}

const at = (name: string, line: number) => `${path.join(directories.at(-1) ?? '', name)}:${line}: `;

describe('the text of configuration files', () => {
  it('names lone-CR line endings with the line', async () => {
    const message = await problemsOf({ 'mcp.yaml': 'servers:\r  a:\r    transport: http\r    url: http://127.0.0.1:1/mcp\r' });
    expect(message).toContain(`${at('mcp.yaml', 1)}(line endings): the line ends with a lone carriage return`);
    expect(message).toContain('save the file with LF (or CRLF) line endings');
    // The line is counted as an editor showing the CRs as breaks counts it.
    expect(await problemsOf({ 'server.yaml': 'limits:\r\n  maxStepsPerTurn: 5\r\n# a\r# b\n' })).toContain(`${at('server.yaml', 3)}(line endings)`);
  });

  it('accepts CRLF line endings', async () => {
    expect(await problemsOf({ 'server.yaml': 'limits:\r\n  maxStepsPerTurn: 5\r\n' })).toBe('');
  });

  it('names a byte order mark, UTF-8 or UTF-16', async () => {
    expect(await problemsOf({ 'server.yaml': Buffer.from('\ufefflimits: {}\n', 'utf8') })).toContain(`${at('server.yaml', 1)}(encoding): the file starts with a byte order mark (BOM); save it as UTF-8 without a BOM`);
    expect(await problemsOf({ 'server.yaml': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('limits: {}\n', 'utf16le')]) })).toContain('the file is UTF-16 (little endian)');
  });

  it('names every line holding bytes that are not UTF-8', async () => {
    const latin1 = Buffer.from('agents:\n  default:\n    instructions: "caf\u00e9"\n    model: "na\u00efve/x"\n', 'latin1');
    const message = await problemsOf({ 'agents.yaml': latin1 });
    expect(message).toContain(`${at('agents.yaml', 3)}(encoding): byte 0xe9 is not UTF-8 text; save the file as UTF-8`);
    expect(message).toContain(`${at('agents.yaml', 4)}(encoding): byte 0xef is not UTF-8 text`);
  });

  it('says tabs are used for indentation, with the line', async () => {
    expect(await problemsOf({ 'mcp.yaml': 'servers:\n\ta: { transport: http, url: "http://127.0.0.1:1/" }\n' })).toContain(`${at('mcp.yaml', 2)}(YAML syntax): a tab is used for indentation; YAML indents with spaces only`);
  });

  it('rejects ${VAR}, $VAR and %VAR% where nothing expands them, pointing at env:NAME', async () => {
    const message = await problemsOf({
      'mcp.yaml': [
        'servers:',
        '  tracker:',
        '    transport: http',
        '    url: https://mcp.example.org/mcp',
        '    headers: { Authorization: "Bearer ${TRACKER_TOKEN}" }',
        '  files:',
        '    transport: stdio',
        '    command: npx',
        '    args: [-y, server, "$HOME/project"]',
        '    env: { TOKEN: "%FILES_TOKEN%" }',
        '  shell:',
        '    transport: stdio',
        '    command: sh',
        '    args: [-c, "exec server --token $TOKEN"]',
        '',
      ].join('\n'),
      'providers.yaml': 'providers:\n  openai: { kind: openai, apiKey: "${OPENAI_API_KEY}" }\n',
      'executors.yaml': 'executors:\n  box: { kind: ssh, host: "${BOX_HOST}", user: me, agent: true }\n',
      'server.yaml': 'allowedOrigins: ["http://${HOST}:5173"]\n',
    });
    expect(message).toContain(`${at('mcp.yaml', 5)}servers.tracker.headers.Authorization: "\${TRACKER_TOKEN}" is not expanded: to read the environment variable, write the whole value as env:TRACKER_TOKEN`);
    expect(message).toContain(`${at('mcp.yaml', 9)}servers.files.args[2]: "$HOME" is not expanded`);
    expect(message).toContain(`${at('mcp.yaml', 10)}servers.files.env.TOKEN: "%FILES_TOKEN%" is not expanded: to read the environment variable, write the whole value as env:FILES_TOKEN`);
    // A script given to a shell with -c is expanded by the shell.
    expect(message).not.toContain('servers.shell');
    expect(message).toContain(`${at('providers.yaml', 2)}providers.openai.apiKey: "\${OPENAI_API_KEY}" is not expanded: to read the environment variable, write the whole value as env:OPENAI_API_KEY`);
    expect(message).toContain(`${at('executors.yaml', 2)}executors.box.host: "\${BOX_HOST}" is not expanded: configuration values are taken literally`);
    expect(message).toMatch(/server\.yaml:1: allowedOrigins\[0\]: "\$\{HOST\}" is not expanded/);
  });

  it('leaves shell commands, regular expressions, instructions and file contents alone', async () => {
    expect(
      await problemsOf({
        'hooks.yaml': 'hooks:\n  pre_tool_use:\n    - { matcher: "exec_command$", command: "test -n \\"$CI\\" || echo ${HOME}" }\n',
        'agents.yaml': 'agents:\n  default:\n    instructions: "Use $HOME and %APPDATA% as they are."\n    approvals: { rules: [{ tool: exec_command, match: { command: "echo $PATH*" }, decision: ask }] }\n',
        'executors.yaml': 'executors:\n  scratch: { kind: virtual, files: { run.sh: "echo $USER\\n" } }\n',
        'mcp.yaml': 'servers:\n  web: { transport: http, url: "https://example.org/a%20b%E2%82%AC/mcp" }\n',
      }),
    ).toBe('');
  });
});
