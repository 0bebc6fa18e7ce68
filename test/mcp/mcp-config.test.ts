/**
 * `mcp.yaml`: the schema, and errors that name the file, the line and the key path.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMcpFile, MCP_FILE, parseMcpFile } from '../../src/config/mcp.js';
import { createLogger } from '../../src/logger.js';
import { startRuntimeServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { writeConfig } from './mcp-helpers.js';

const directories: string[] = [];
let environment: TestEnvironment | undefined;
let harness: InProcessServer | undefined;
afterEach(async () => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  await environment?.dispose();
  await harness?.stop();
  environment = undefined;
  harness = undefined;
});

function configDir(mcpYaml?: string): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-mcp-config-'));
  directories.push(directory);
  if (mcpYaml !== undefined) writeFileSync(path.join(directory, MCP_FILE), mcpYaml);
  return directory;
}

/** The message of the error `parseMcpFile` throws for `text`. */
function problem(text: string): string {
  try {
    parseMcpFile('mcp.yaml', text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the file to be refused');
}

describe('mcp.yaml', () => {
  it('is optional: a missing file means no servers', async () => {
    expect(await loadMcpFile(configDir())).toEqual({ servers: {} });
    expect(await loadMcpFile(configDir(''))).toEqual({ servers: {} });
  });

  it('reads stdio and http servers', async () => {
    const file = await loadMcpFile(
      configDir(`
servers:
  filesystem:
    transport: stdio
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", /srv/project]
    env: { LOG_LEVEL: warn, API_TOKEN: env:FILESYSTEM_TOKEN }
    cwd: tools
    executor: local
    startupTimeoutMs: 20000
    toolTimeoutMs: 30000
  tracker:
    transport: http
    url: https://mcp.example.org/mcp
    headers: { Authorization: env:TRACKER_AUTHORIZATION }
    enabled: false
`),
    );
    expect(file.servers.filesystem).toEqual({
      transport: 'stdio',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/project'],
      env: { LOG_LEVEL: 'warn', API_TOKEN: 'env:FILESYSTEM_TOKEN' },
      cwd: 'tools',
      executor: 'local',
      startupTimeoutMs: 20000,
      toolTimeoutMs: 30000,
    });
    expect(file.servers.tracker).toEqual({ transport: 'http', url: 'https://mcp.example.org/mcp', headers: { Authorization: 'env:TRACKER_AUTHORIZATION' }, enabled: false });
  });

  it('names an unknown or missing transport', () => {
    expect(problem('servers:\n  a:\n    transport: sse\n    url: http://127.0.0.1:1/\n')).toBe('mcp.yaml:3: servers.a.transport: expected transport: stdio or transport: http');
    expect(problem('servers:\n  a: { command: x }\n')).toBe('mcp.yaml:2: servers.a.transport: expected transport: stdio or transport: http');
  });

  it('names a missing command and a URL that is not http(s)', () => {
    expect(problem('servers:\n  a:\n    transport: stdio\n    args: [x]\n')).toBe('mcp.yaml:3: servers.a.command: required: the program that starts the server');
    expect(problem('servers:\n  a:\n    transport: http\n')).toBe("mcp.yaml:3: servers.a.url: required: the server's MCP endpoint");
    expect(problem('servers:\n  a:\n    transport: http\n    url: ftp://127.0.0.1/mcp\n')).toBe('mcp.yaml:4: servers.a.url: expected an http:// or https:// URL');
  });

  it('names an unknown key and a value of the wrong type', () => {
    expect(problem('servers:\n  a:\n    transport: stdio\n    command: x\n    headers: { A: b }\n')).toBe('mcp.yaml:5: servers.a.headers: Unrecognized key: "headers"');
    expect(problem('servers:\n  a:\n    transport: stdio\n    command: x\n    enabled: "sure"\n')).toBe('mcp.yaml:5: servers.a.enabled: Invalid input: expected boolean, received string');
    expect(problem('servers:\n  a:\n    transport: stdio\n    command: x\n    toolTimeoutMs: 10\n')).toBe('mcp.yaml:5: servers.a.toolTimeoutMs: Too small: expected number to be >=100');
  });

  it('names server names that cannot be part of a tool name', () => {
    expect(problem('servers:\n  git__hub: { transport: stdio, command: x }\n')).toBe(
      'mcp.yaml:2: servers.git__hub: server names use letters, digits, "-" and single "_" ("__" separates server and tool in tool names)',
    );
    expect(problem('servers:\n  my.server: { transport: stdio, command: x }\n')).toMatch(/^mcp\.yaml:2: servers\["my\.server"\]: server names use/);
    expect(problem(`servers:\n  ${'s'.repeat(33)}: { transport: stdio, command: x }\n`)).toBe(`mcp.yaml:2: servers.${'s'.repeat(33)}: server names are at most 32 characters (tool names are limited to 64)`);
  });

  it('names bad environment variable names, header names and env: references', () => {
    expect(problem('servers:\n  a:\n    transport: stdio\n    command: x\n    env:\n      9LIVES: x\n')).toBe(
      'mcp.yaml:6: servers.a.env.9LIVES: environment variable names use letters, digits and "_" and do not start with a digit',
    );
    expect(problem('servers:\n  a:\n    transport: stdio\n    command: x\n    env: { TOKEN: "env:" }\n')).toBe(
      'mcp.yaml:5: servers.a.env.TOKEN: an env: reference needs a variable name of letters, digits and "_" (env:NAME)',
    );
    expect(problem('servers:\n  a:\n    transport: http\n    url: http://127.0.0.1:1/\n    headers:\n      "X Token": y\n')).toBe(
      'mcp.yaml:6: servers.a.headers["X Token"]: not a valid HTTP header name (an RFC 9110 token)',
    );
  });

  it('names the line of a YAML syntax error', () => {
    expect(problem('servers:\n  a: { transport: stdio, command: x\n')).toMatch(/^mcp\.yaml:2: \(YAML syntax\): .*"\{" opened at column 6 is never closed with "\}"$/);
  });

  it('stops the server from starting, naming file, line and key path', async () => {
    environment = await createTestEnvironment('responses: []');
    const file = path.join(environment.paths.configDir, MCP_FILE);
    writeFileSync(file, 'servers:\n  broken:\n    transport: stdio\n    command: ""\n');
    const error = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') }).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain(`${file}:4: servers.broken.command: must not be empty`);
  });

  it('shows env: references but hides literal values in config/get', async () => {
    harness = await startInProcessServer('responses: []', {
      beforeStart: writeConfig({
        mcp: `
servers:
  local-tool: { transport: stdio, command: x, env: { TOKEN: literal-secret, OTHER: env:OTHER_TOKEN } }
  remote: { transport: http, url: "https://mcp.example.org/mcp", headers: { Authorization: Bearer-literal, X-Key: env:X_KEY } }
`,
      }),
    });
    const { configuration } = await harness.client.request('config/get', {});
    expect(configuration.mcp).toEqual({
      servers: {
        'local-tool': { transport: 'stdio', command: 'x', env: { TOKEN: '***', OTHER: 'env:OTHER_TOKEN' } },
        remote: { transport: 'http', url: 'https://mcp.example.org/mcp', headers: { Authorization: '***', 'X-Key': 'env:X_KEY' } },
      },
    });
  });
});
