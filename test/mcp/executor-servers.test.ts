/**
 * Stdio MCP servers on the executor they are configured for: the filesystem server from the
 * npm registry (`@modelcontextprotocol/server-filesystem`, its installed copy run with `node`)
 * started over the SSH connection of an `ssh` executor against a real sshd, and inside the
 * bubblewrap sandbox of a sandboxed local executor. Each is driven by the scripted mock model
 * through a real runtime server; where the process runs is checked from /proc.
 */
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { requireExecutable } from '../helpers/required-commands.js';
import { descendantsOf, startSshServer, type TestSshServer } from '../helpers/ssh-server.js';
import { SshExecutor } from '../../src/executors/ssh/ssh-executor.js';
import { McpClientManager } from '../../src/mcp/client-manager.js';
import { packageBin, toolCalls, yamlString } from './mcp-helpers.js';

const FILESYSTEM_BIN = packageBin('@modelcontextprotocol/server-filesystem');
/** Far enough in the future that every idle conversation counts as unused (closes them). */
const LONG_AFTER_MS = 365 * 24 * 3600 * 1000;

/** Pids of running processes whose command line holds every one of `words`. */
function processesWith(...words: string[]): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        return words.every((word) => commandLine.includes(word)) ? [Number(entry)] : [];
      } catch {
        return [];
      }
    });
}

function environmentOf(pid: number): Record<string, string> {
  const pairs = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter((pair) => pair.includes('='));
  return Object.fromEntries(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

let ssh: TestSshServer;
let harness: InProcessServer | undefined;
beforeAll(async () => {
  ssh = await startSshServer();
}, 30_000);
afterAll(async () => {
  await ssh?.dispose();
});
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('stdio MCP servers on their executor', () => {
  it('starts the server on the SSH executor over the SSH connection, restarts it after a crash and stops it with the conversation', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__files__list_directory, arguments: { path: "." } }]
  - text: "listed"
  - toolCalls: [{ name: mcp__files__read_text_file, arguments: { path: "remote-note.txt" } }]
  - text: "read"
`,
      {
        beforeStart: (environment) => {
          writeFileSync(path.join(environment.workDir, 'remote-note.txt'), 'written on the remote side\n');
          writeFileSync(
            path.join(environment.paths.configDir, 'executors.yaml'),
            `executors:\n  box: { kind: ssh, host: 127.0.0.1, port: ${ssh.port}, user: ${ssh.user}, identityFile: ${ssh.identityFile}, knownHostsFile: ${ssh.knownHostsFile} }\n`,
          );
          writeFileSync(
            path.join(environment.paths.configDir, 'mcp.yaml'),
            `servers:\n  files:\n    transport: stdio\n    executor: box\n    command: ${yamlString(process.execPath)}\n    args: [${yamlString(FILESYSTEM_BIN)}, ${yamlString(environment.workDir)}]\n    env: { MARKER: through-ssh }\n`,
          );
        },
      },
    );
    const workDir = harness.environment.workDir;
    // The conversation works locally: the server still runs where its entry says.
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'list the files' });
    const [first] = await harness.turnsCompleted(1, 30_000);
    expect(first?.status).toBe('completed');
    const [listing] = toolCalls(harness.completedItems());
    expect(listing).toMatchObject({ toolName: 'mcp__files__list_directory', status: 'completed', isError: false });
    expect(listing?.output).toContain('[FILE] remote-note.txt');

    // The process is a child of sshd, with the SSH session's environment and the entry's own variables.
    const [pid, ...others] = processesWith(FILESYSTEM_BIN, workDir);
    expect(others).toEqual([]);
    expect(pid).toBeDefined();
    const environment = environmentOf(pid as number);
    expect(environment.SSH_CONNECTION).toMatch(new RegExp(`^127\\.0\\.0\\.1 \\d+ 127\\.0\\.0\\.1 ${ssh.port}$`));
    expect(environment.MARKER).toBe('through-ssh');
    const sshdPid = Number(readFileSync(path.join(ssh.directory, 'sshd.pid'), 'utf8'));
    expect(descendantsOf(sshdPid)).toContain(pid);

    // A crash: the next call starts it again, on the remote side again.
    process.kill(pid as number, 'SIGKILL');
    await expect.poll(() => processesWith(FILESYSTEM_BIN, workDir), { timeout: 10_000 }).toEqual([]);
    // The exit reaches the server as the SSH channel's exit status, after the process is gone
    // from /proc: a call made before it arrives goes to the dead server and fails (under load
    // that took long enough to fail this test). The restart is what is tested here.
    const live = await harness.server.runtime.getConversation(conversationId);
    await expect.poll(() => live.mcp.servers.find((server) => server.name === 'files')?.state, { timeout: 10_000 }).toBe('exited');
    await harness.client.request('session/input', { conversationId, input: 'read the note' });
    const turns = await harness.turnsCompleted(2, 30_000);
    expect(turns[1]?.status).toBe('completed');
    const reading = toolCalls(harness.completedItems())[1];
    expect(reading).toMatchObject({ toolName: 'mcp__files__read_text_file', status: 'completed', isError: false, output: 'written on the remote side\n' });
    const [restarted] = processesWith(FILESYSTEM_BIN, workDir);
    expect(restarted).toBeDefined();
    expect(restarted).not.toBe(pid);
    expect(environmentOf(restarted as number).SSH_CONNECTION).toBeDefined();

    // Closing the conversation stops the remote process.
    await harness.client.request('conversation/unsubscribe', { conversationId });
    const closed = await harness.server.runtime.evictIdleConversations(Date.now() + LONG_AFTER_MS);
    expect(closed).toContain(conversationId);
    await expect.poll(() => processesWith(FILESYSTEM_BIN, workDir), { timeout: 10_000 }).toEqual([]);
  }, 60_000);

  it('names why a server on the SSH executor did not start: a missing program, a program that cannot run, a missing directory', async () => {
    const box = new SshExecutor({ name: 'box', host: ssh.host, port: ssh.port, user: ssh.user, identityFile: ssh.identityFile, knownHostsFile: ssh.knownHostsFile });
    onTestFinished(() => box.close());
    const manager = new McpClientManager(
      {
        servers: {
          missing: { transport: 'stdio', executor: 'box', command: 'no-such-mcp-server', startupTimeoutMs: 10_000 },
          nowhere: { transport: 'stdio', executor: 'box', command: process.execPath, args: [FILESYSTEM_BIN, '/tmp'], cwd: '/no/such/directory', startupTimeoutMs: 10_000 },
          notProgram: { transport: 'stdio', executor: 'box', command: '/etc', startupTimeoutMs: 10_000 },
        },
      },
      { workDirectory: '/tmp', workExecutor: 'local', findExecutor: (name) => (name === 'box' ? box : undefined) },
    );
    onTestFinished(() => manager.close());
    await manager.prepare();
    const [missing, nowhere, notProgram] = manager.servers;
    expect(missing?.state).toBe('failed');
    expect(missing?.failure).toBe('command "no-such-mcp-server" was not found');
    expect(notProgram?.state).toBe('failed');
    expect(notProgram?.failure).toBe('command "/etc" is not executable');
    expect(nowhere?.state).toBe('failed');
    expect(nowhere?.failure).toBe('the server exited before completing the MCP handshake; its stderr ended with: cannot change to directory /no/such/directory');
  }, 30_000);

  it('runs the server of a sandboxed local executor inside the bubblewrap sandbox', async () => {
    requireExecutable('bwrap', 'bubblewrap');
    // The sandbox has a private /tmp: its workspace must live elsewhere to be seen at all.
    const previousTmpdir = process.env.TMPDIR;
    process.env.TMPDIR = '/var/tmp';
    onTestFinished(() => {
      if (previousTmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previousTmpdir;
    });
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__boxed__write_file, arguments: { path: "made-in-sandbox.txt", content: "inside" } }]
  - text: "written"
`,
      {
        beforeStart: (environment) => {
          // The server's program lives in this checkout, which may itself be under /tmp (a
          // fresh clone in a temporary directory): the sandbox is shown it read-only.
          const packages = path.resolve(FILESYSTEM_BIN.slice(0, FILESYSTEM_BIN.lastIndexOf(`${path.sep}node_modules${path.sep}`)), 'node_modules');
          writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), `executors:\n  sandboxed: { kind: local, sandbox: bwrap, readablePaths: [${yamlString(packages)}] }\n`);
          writeFileSync(
            path.join(environment.paths.configDir, 'mcp.yaml'),
            `servers:\n  boxed:\n    transport: stdio\n    executor: sandboxed\n    command: ${yamlString(process.execPath)}\n    args: [${yamlString(FILESYSTEM_BIN)}, ${yamlString(environment.workDir)}]\n`,
          );
        },
      },
    );
    const workDir = harness.environment.workDir;
    const { conversation } = await harness.client.request('conversation/create', { cwd: workDir, executor: 'sandboxed' });
    await harness.client.request('conversation/subscribe', { conversationId: conversation.id });
    await harness.client.request('session/input', { conversationId: conversation.id, input: 'write a file' });
    const [turn] = await harness.turnsCompleted(1, 30_000);
    expect(turn?.status).toBe('completed');
    const [call] = toolCalls(harness.completedItems());
    expect(call).toMatchObject({ toolName: 'mcp__boxed__write_file', status: 'completed', isError: false });
    expect(readFileSync(path.join(workDir, 'made-in-sandbox.txt'), 'utf8')).toBe('inside');
    // Inside the sandbox's own PID namespace, unlike this process.
    const [pid] = processesWith(FILESYSTEM_BIN, workDir);
    expect(pid).toBeDefined();
    expect(readlinkSync(`/proc/${pid}/ns/pid`)).not.toBe(readlinkSync('/proc/self/ns/pid'));

    await harness.client.request('conversation/unsubscribe', { conversationId: conversation.id });
    expect(await harness.server.runtime.evictIdleConversations(Date.now() + LONG_AFTER_MS)).toContain(conversation.id);
    await expect.poll(() => processesWith(FILESYSTEM_BIN, workDir), { timeout: 10_000 }).toEqual([]);
  }, 60_000);
});
