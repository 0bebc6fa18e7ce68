/**
 * The paths and programs the configuration names, checked against the machine: each one it
 * lacks (or cannot use as the entry needs) is a warning naming the file, the key path, the
 * path and what fails because of it; what is present is never warned about.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configuredPathWarnings, type PathWarning } from '../../src/config/configured-paths.js';
import { formatKeyPath } from '../../src/key-path.js';

let directory: string;
let bin: string;
beforeEach(() => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-configured-paths-'));
  bin = path.join(directory, 'bin');
  mkdirSync(bin);
  for (const program of ['bwrap', 'my-mcp-server', 'my-agent']) {
    writeFileSync(path.join(bin, program), '#!/bin/sh\n');
    chmodSync(path.join(bin, program), 0o755);
  }
  mkdirSync(path.join(directory, 'home', '.ssh'), { recursive: true });
  writeFileSync(path.join(directory, 'home', '.ssh', 'id_ed25519'), 'key\n');
  writeFileSync(path.join(directory, 'home', '.gitconfig'), '[user]\n');
  mkdirSync(path.join(directory, 'cache'));
  mkdirSync(path.join(directory, 'project'));
  writeFileSync(path.join(directory, 'check.sh'), '#!/bin/sh\n');
  chmodSync(path.join(directory, 'check.sh'), 0o755);
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

/** The warnings for these files' values, with `bin` alone on PATH and `home` as the home directory. */
function warnings(values: Parameters<typeof configuredPathWarnings>[0], searchPath = bin): string[] {
  const found = configuredPathWarnings(values, { configDir: directory, homeDirectory: path.join(directory, 'home'), environment: { PATH: searchPath } });
  return found.map((warning: PathWarning) => `${warning.file}: ${formatKeyPath(warning.keyPath)}: ${warning.message}`);
}

describe('configured paths', () => {
  it('warns about nothing when every path is there', () => {
    const values = {
      executors: {
        executors: {
          sandboxed: { kind: 'local', sandbox: 'bwrap', writablePaths: ['cache'], readablePaths: ['~/.gitconfig'] },
          build: { kind: 'ssh', host: 'h', user: 'u', identityFile: '~/.ssh/id_ed25519', knownHostsFile: path.join(directory, 'check.sh') },
        },
      },
      mcp: { servers: { files: { transport: 'stdio', command: 'my-mcp-server', cwd: path.join(directory, 'project') }, web: { transport: 'http', url: 'http://127.0.0.1:9/mcp' } } },
      agents: { agents: { codex: { kind: 'acp', command: ['my-agent', 'acp'] } } },
      hooks: { hooks: { pre_tool_use: [{ command: `${path.join(directory, 'check.sh')} --strict` }, { command: `bash ${path.join(directory, 'check.sh')}` }, { command: './relative.sh' }, { command: 'true' }] } },
      server: { browser: { enabled: true, executablePath: path.join(bin, 'my-agent') } },
    };
    expect(warnings(values)).toEqual([]);
  });

  it("warns about an ssh executor's identityFile and knownHostsFile that are missing or not files", () => {
    const values = { executors: { executors: { build: { kind: 'ssh', host: 'h', user: 'u', identityFile: '~/.ssh/id_missing', knownHostsFile: 'cache' } } } };
    expect(warnings(values)).toEqual([
      `executors.yaml: executors.build.identityFile: ${path.join(directory, 'home', '.ssh', 'id_missing')} does not exist; the executor cannot connect (the key is read at each connection)`,
      `executors.yaml: executors.build.knownHostsFile: ${path.join(directory, 'cache')} is a directory, not a file; the executor cannot connect (the host's key must be listed in it)`,
    ]);
  });

  it("warns about a sandbox's writable and readable paths that are missing, not directories, and a bwrap not on PATH", () => {
    const values = { executors: { executors: { sandboxed: { kind: 'local', sandbox: 'bwrap', writablePaths: ['cache', 'nowhere', 'check.sh'], readablePaths: ['~/.gitconfig', '~/.npmrc'] } } } };
    expect(warnings(values, path.join(directory, 'project'))).toEqual([
      'executors.yaml: executors.sandboxed.sandbox: bubblewrap (the bwrap command) is not found in any directory of PATH; every command of this executor fails until it is installed (Debian/Ubuntu: apt-get install bubblewrap)',
      `executors.yaml: executors.sandboxed.writablePaths[1]: ${path.join(directory, 'nowhere')} does not exist; every command of this executor fails (the sandbox makes each writable path writable)`,
      `executors.yaml: executors.sandboxed.writablePaths[2]: ${path.join(directory, 'check.sh')} is not a directory; every command of this executor fails (the sandbox makes each writable path writable)`,
      `executors.yaml: executors.sandboxed.readablePaths[1]: ${path.join(directory, 'home', '.npmrc')} does not exist; every command of this executor fails (the sandbox shows each readable path)`,
    ]);
    // Without the sandbox, the paths are not used (the schema refuses them).
    expect(warnings({ executors: { executors: { plain: { kind: 'local', writablePaths: ['nowhere'] } } } }, '')).toEqual([]);
  });

  it("warns about a local MCP server's program and working directory, not a remote one's", () => {
    const values = {
      executors: { executors: { remote: { kind: 'ssh', host: 'h', user: 'u', agent: true }, box: { kind: 'local', sandbox: 'bwrap' } } },
      mcp: {
        servers: {
          files: { transport: 'stdio', command: 'mcp-server-filez', cwd: path.join(directory, 'gone') },
          boxed: { transport: 'stdio', command: path.join(directory, 'missing-server'), executor: 'box' },
          own: { transport: 'stdio', command: 'my-mcp-server', env: { PATH: path.join(directory, 'project') } },
          remote: { transport: 'stdio', command: '/opt/elsewhere/server', executor: 'remote' },
          off: { transport: 'stdio', command: 'absent', enabled: false },
        },
      },
    };
    expect(warnings(values)).toEqual([
      `mcp.yaml: servers.files.cwd: ${path.join(directory, 'gone')} does not exist; the server cannot be started (its tools are missing from every conversation)`,
      'mcp.yaml: servers.files.command: "mcp-server-filez" is not found in any directory of PATH; the server cannot be started (its tools are missing from every conversation)',
      `mcp.yaml: servers.boxed.command: ${path.join(directory, 'missing-server')} does not exist; the server cannot be started (its tools are missing from every conversation)`,
      'mcp.yaml: servers.own.command: "my-mcp-server" is not found in any directory of PATH; the server cannot be started (its tools are missing from every conversation)',
    ]);
  });

  it("warns about an external agent's program, a hook's script and the browser", () => {
    writeFileSync(path.join(directory, 'not-executable'), '');
    chmodSync(path.join(directory, 'not-executable'), 0o644);
    const values = {
      agents: { agents: { codex: { kind: 'codex-app-server', command: ['codx'] }, loop: { command: ['ignored'] } } },
      hooks: {
        hooks: {
          stop: [{ command: 'LOG=1 /opt/openvaala-hooks/stop.sh --now' }, { command: 'python3 -u ~/hooks/notify.py' }, { command: '"$HOME/hook.sh"' }],
        },
      },
      server: { browser: { enabled: true, executablePath: path.join(directory, 'chrome') } },
    };
    expect(warnings(values)).toEqual([
      `agents.yaml: agents.codex.command[0]: "codx" is not found in any directory of PATH; the agent's turns cannot start`,
      'hooks.yaml: hooks.stop[0].command: /opt/openvaala-hooks/stop.sh does not exist; the hook fails when it runs on this machine (a conversation on a local executor)',
      `hooks.yaml: hooks.stop[1].command: ${path.join(directory, 'home', 'hooks', 'notify.py')} does not exist; the hook fails when it runs on this machine (a conversation on a local executor)`,
      `server.yaml: browser.executablePath: ${path.join(directory, 'chrome')} does not exist; the agent's browser cannot start`,
    ]);
    // A browser that is not enabled is not started, whatever its path.
    expect(warnings({ server: { browser: { enabled: false, executablePath: '/nowhere/chrome' } } })).toEqual([]);
    // A file without an execute bit runs for nobody, root included.
    expect(warnings({ server: { browser: { enabled: true, executablePath: path.join(directory, 'not-executable') } } })).toEqual([
      `server.yaml: browser.executablePath: ${path.join(directory, 'not-executable')} is not executable by this user; the agent's browser cannot start`,
    ]);
  });

  it('checks the values of a file with other problems, skipping entries that are not mappings', () => {
    const values = { executors: { executors: { broken: 'ssh', build: { kind: 'ssh', host: 7, identityFile: 'id_missing' } } }, mcp: { servers: [] }, hooks: { hooks: { stop: 'x' } } };
    expect(warnings(values)).toEqual([`executors.yaml: executors.build.identityFile: ${path.join(directory, 'id_missing')} does not exist; the executor cannot connect (the key is read at each connection)`]);
  });
});
