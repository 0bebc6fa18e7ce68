/**
 * Background and terminal commands over SSH (`SshExecutor.spawn`) against a real OpenSSH
 * server on 127.0.0.1, driven through the tools. The server runs on this machine, so the
 * remote pids can be checked directly.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshExecutor } from '../../src/executors/ssh/ssh-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { BackgroundCommandRegistry } from '../../src/runtime/background-commands.js';
import { killCommandTool, listCommandsTool, writeStdinTool } from '../../src/tools/background-commands.js';
import { execCommandTool } from '../../src/tools/exec-command.js';
import type { ToolContext } from '../../src/tools/tool.js';
import { startSshServer, type TestSshServer } from '../helpers/ssh-server.js';
import { commandIdOf, processGone, until } from '../helpers/processes.js';

let server: TestSshServer;
let executor: SshExecutor;
let directory: string;
let commands: BackgroundCommandRegistry;
let context: ToolContext;

beforeAll(async () => {
  server = await startSshServer();
  executor = new SshExecutor({ name: 'box', host: server.host, port: server.port, user: server.user, identityFile: server.identityFile, knownHostsFile: server.knownHostsFile, connectTimeoutMs: 5000 });
  directory = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ssh-spawn-')));
  commands = new BackgroundCommandRegistry();
  context = { workspace: new Workspace(executor, directory), signal: new AbortController().signal, commands };
}, 30_000);

afterAll(async () => {
  await commands?.closeAll();
  await executor?.close();
  await server?.dispose();
  await rm(directory, { recursive: true, force: true });
});

describe('ssh background commands', () => {
  it('keep running, take stdin, are listed, and die with their group on kill_command', async () => {
    const started = await execCommandTool.invoke({ command: 'sleep 300 & echo "child $!"; echo "in $(pwd)"; while read line; do echo "got: $line"; done', yield_after_ms: 1500 }, context);
    expect(started.output).toContain(`in ${directory}`);
    expect(started.output).not.toContain('openvaala-');
    const id = commandIdOf(started.output);
    const leader = started.structured?.pid as number;
    const child = Number(/child (\d+)/.exec(started.output)?.[1]);
    expect(leader).toBeGreaterThan(0);
    expect(processGone(leader)).toBe(false);
    expect(processGone(child)).toBe(false);

    const answered = await writeStdinTool.invoke({ command_id: id, input: 'over ssh\n', yield_after_ms: 1500 }, context);
    expect(answered.output).toContain('got: over ssh');
    const listed = await listCommandsTool.invoke({}, context);
    expect(listed.output).toMatch(new RegExp(`${id}\\s+running.*on box:`));

    const killed = await killCommandTool.invoke({ command_id: id }, context);
    expect(killed.isError).toBe(false);
    await until(() => processGone(leader) && processGone(child), 5000, 'the remote group to die');
  });

  it('drives python in a remote pseudo-terminal', async () => {
    const started = await execCommandTool.invoke({ command: 'python3 -i -q', tty: true, yield_after_ms: 3000 }, context);
    expect(started.output).toContain('>>>');
    const id = commandIdOf(started.output);
    const answer = await writeStdinTool.invoke({ command_id: id, input: 'print(6*7)\n', yield_after_ms: 2000 }, context);
    expect(answer.output).toMatch(/^42\r?$/m);
    const ended = await writeStdinTool.invoke({ command_id: id, input: 'exit()\n', yield_after_ms: 5000 }, context);
    expect(ended.output).toContain('[exit code 0]');
  });

  it('kills spawned commands when the executor closes', async () => {
    const own = new SshExecutor({ name: 'own', host: server.host, port: server.port, user: server.user, identityFile: server.identityFile, knownHostsFile: server.knownHostsFile, connectTimeoutMs: 5000 });
    const running = own.spawn({ command: 'sleep 300', cwd: directory });
    await until(() => running.pid !== undefined, 10_000, 'the remote pid');
    const pid = running.pid as number;
    expect(processGone(pid)).toBe(false);
    await own.close();
    await until(() => processGone(pid), 5000, 'the remote process to die');
  });
});
