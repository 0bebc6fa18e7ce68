/**
 * Threat model: a sandboxed command, even with `network: true`, cannot read the server's
 * configuration, data or state directories nor the user's home, so it cannot find the
 * server's token and cannot drive the server (e.g. create a conversation on the unsandboxed
 * `local` executor). The installation is laid out as usual, everything under one home
 * outside /tmp (the sandbox's /tmp is private anyway), with the workspace in that home.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/executors/executor.js';
import { createLogger } from '../../src/logger.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { requireExecutable } from '../helpers/required-commands.js';

let root: string;
let home: string;
let workspaceRoot: string;
let paths: { configDir: string; dataDir: string; stateDir: string };
let server: RunningServer;
let sandboxed: Executor;
const previousHome = process.env.HOME;
/** A provider key under a name that looks like no credential: known only through providers.yaml. */
const PROVIDER_KEY = 'provider-key-9b8a7c';

beforeAll(async () => {
  requireExecutable('bwrap', 'bubblewrap');
  requireExecutable('curl', 'curl');
  root = await realpath(await mkdtemp(path.join(existsSync('/var/tmp') ? '/var/tmp' : os.homedir(), 'openvaala-isolation-')));
  home = path.join(root, 'home');
  paths = { configDir: path.join(home, '.config', 'openvaala'), dataDir: path.join(home, '.local', 'share', 'openvaala'), stateDir: path.join(home, '.local', 'state', 'openvaala') };
  workspaceRoot = path.join(home, 'project');
  for (const directory of [...Object.values(paths), workspaceRoot]) await mkdir(directory, { recursive: true });
  await writeFile(path.join(home, '.netrc'), 'machine example.org password home-secret\n');
  await writeFile(path.join(paths.configDir, 'providers.yaml'), 'providers:\n  mock: { kind: openai, baseURL: http://127.0.0.1:9/v1, apiKey: env:OPENVAALA_ISOLATION_AUTH }\ndefaultModel: mock/model\n');
  await writeFile(path.join(paths.configDir, 'executors.yaml'), 'executors:\n  sandboxed: { kind: local, sandbox: bwrap, network: true }\n');
  // The server takes the home to empty from the environment, as `openvaala serve` does.
  process.env.HOME = home;
  process.env.OPENVAALA_ISOLATION_AUTH = PROVIDER_KEY;
  server = await startRuntimeServer({ paths, port: 0, logger: createLogger('silent') });
  sandboxed = server.runtime.findExecutor('sandboxed') as Executor;
});

afterAll(async () => {
  await server?.stop();
  process.env.HOME = previousHome;
  delete process.env.OPENVAALA_ISOLATION_AUTH;
  if (root) await rm(root, { recursive: true, force: true });
});

async function runSandboxed(command: string): Promise<string> {
  const result = await sandboxed.run({ command, cwd: workspaceRoot, workspaceRoot, timeoutMs: 20_000, maxOutputBytes: 64 * 1024 });
  return result.output;
}

describe('a sandboxed command with network: true', () => {
  it('sees none of the server state, data and configuration directories, and an empty home', async () => {
    const files = [path.join(paths.stateDir, 'runtime-server.yaml'), path.join(paths.dataDir, 'runtime-server.yaml'), path.join(paths.configDir, 'providers.yaml'), path.join(home, '.netrc')];
    for (const file of files) expect(existsSync(file)).toBe(true);
    const output = await runSandboxed(`for f in ${files.join(' ')}; do cat "$f" >/dev/null 2>&1 && echo "READ $f"; done; echo "files in home: $(find ${home} -path ${workspaceRoot} -prune -o -type f -print | tr '\\n' ' ')"; grep -rl -e secret -e token: ${home} 2>/dev/null | grep -v '^${workspaceRoot}' ; echo done`);
    expect(output).not.toContain('READ');
    expect(output).not.toMatch(/openvaala|\.netrc|OPENVAALA_ISOLATION_AUTH/);
    // Nothing but the workspace is left in the emptied home (and the empty mount points of the hidden directories).
    expect(output).toContain('files in home: \n');
    expect(output).toContain('done');
  });

  it('reaches the server over the network but cannot authenticate, so it cannot create a conversation', async () => {
    const url = `http://127.0.0.1:${server.port}`;
    const output = await runSandboxed(
      [
        `token=$(sed -n 's/^token: *//p' ${paths.stateDir}/runtime-server.yaml ${paths.dataDir}/runtime-server.yaml 2>/dev/null | head -1)`,
        'echo "token=[$token]"',
        `curl -s -o /dev/null -m 5 -w 'health=%{http_code}\\n' ${url}/healthz`,
        `curl -s -o /dev/null -m 3 -w 'api=%{http_code}\\n' -H "Authorization: Bearer $token" -H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' ${url}/api/v1/openvaala`,
        `env | grep -c '${server.token}'`,
      ].join('\n'),
    );
    expect(output).toContain('token=[]');
    // The network is really open: only the missing token stops it.
    expect(output).toContain('health=200');
    expect(output).toContain('api=401');
    expect(output).not.toContain(server.token);
  });
});

describe('commands of the server', () => {
  it('never get a variable the configuration reads a secret from, sandboxed or not', async () => {
    for (const name of ['sandboxed', 'local']) {
      const executor = server.runtime.findExecutor(name) as Executor;
      const result = await executor.run({ command: 'env', cwd: workspaceRoot, workspaceRoot, timeoutMs: 20_000, maxOutputBytes: 256 * 1024 });
      expect(result.output).toMatch(/^PATH=/m);
      expect(result.output, name).not.toContain(PROVIDER_KEY);
    }
  });
});
