/**
 * The exit status of SSH exec channels, whatever the packet order (RFC 4254 §6.10): a server
 * scripted with ssh2's `Server` sends the channel's data, its exit-status or exit-signal, EOF
 * and CLOSE in one burst right behind the exec reply, which the client then parses in one
 * socket read (what a loaded machine does with OpenSSH's packets). Covers `run`, `spawn` and
 * `spawnPiped` (and an MCP server started with it), a report without a close (a background job
 * holding the output), a close without any report, and a dropped connection.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { CommandRequest } from '../../src/executors/executor.js';
import { SshExecutor } from '../../src/executors/ssh/ssh-executor.js';
import { McpClientManager } from '../../src/mcp/client-manager.js';
import { describeCommandEnd } from '../../src/tools/exec-command.js';
import { nonceOf, startScriptedSshServer, type ScriptedChannel, type ScriptedSshServer } from '../helpers/scripted-ssh-server.js';

let server: ScriptedSshServer;
let executor: SshExecutor;
/** Channels left open by a test, closed after it. */
const openChannels: ScriptedChannel[] = [];

beforeAll(async () => {
  server = await startScriptedSshServer();
});
afterEach(async () => {
  for (const channel of openChannels.splice(0)) channel.close();
  await executor?.close();
});
afterAll(async () => {
  await server?.dispose();
});

function newExecutor(): SshExecutor {
  executor = new SshExecutor({ name: 'scripted', host: server.host, port: server.port, user: 'tester', identityFile: server.identityFile, knownHostsFile: server.knownHostsFile, connectTimeoutMs: 5000 });
  return executor;
}

function request(command: string, overrides: Partial<CommandRequest> = {}): CommandRequest {
  return { command, cwd: '/', timeoutMs: 5000, maxOutputBytes: 64 * 1024, ...overrides };
}

/** The commands the executor's kill rounds send (they carry no nonce) end at once, quietly. */
function isKillRound(command: string): boolean {
  return !command.includes(" openvaala 'openvaala-");
}

/**
 * Answers every command channel with `script`, called right after accepting it (all in the same
 * synchronous run: one burst on the wire). Kill rounds get an empty, successful channel.
 */
function answerWith(script: (channel: ScriptedChannel, nonce: string) => void): void {
  server.onExec((command, accept) => {
    const channel = accept();
    if (isKillRound(command)) {
      channel.exit(0);
      channel.eof();
      channel.close();
      return;
    }
    script(channel, nonceOf(command));
  });
}

/** EOF and CLOSE sent synchronously (ssh2's `end()` would send them a tick later). */
function eofAndClose(channel: ScriptedChannel): void {
  channel.eof();
  channel.close();
}

describe('run: exit status arriving in the same read as the exec reply', () => {
  it('reports the exit code sent right before EOF and CLOSE', async () => {
    answerWith((channel, nonce) => {
      channel.write(`${nonce} started 4242\nbefore\n`);
      channel.exit(4);
      eofAndClose(channel);
    });
    const result = await newExecutor().run(request('echo before; exit 4'));
    expect(result).toMatchObject({ exitCode: 4, signal: null, output: 'before\n', timedOut: false, aborted: false });
    expect(result.unknownExitReason).toBeUndefined();
  });

  it('reports the signal of an exit-signal sent right before EOF and CLOSE', async () => {
    answerWith((channel, nonce) => {
      channel.write(`${nonce} started 4242\n`);
      channel.exit('KILL', false, '');
      eofAndClose(channel);
    });
    const result = await newExecutor().run(request('kill -KILL $$'));
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false, aborted: false });
  });

  it('returns soon after an early exit status although the channel stays open (a background job holds the output)', async () => {
    answerWith((channel, nonce) => {
      channel.write(`${nonce} started 4242\nforeground done\n`);
      channel.exit(0);
      openChannels.push(channel);
    });
    const started = Date.now();
    const result = await newExecutor().run(request('sleep 30 & echo foreground done'));
    expect(result).toMatchObject({ exitCode: 0, signal: null, output: 'foreground done\n', timedOut: false });
    // The drain after the exit lasts at most 500 ms; the timeout (5 s) must not be what ended it.
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('says so, with exit code null, when the server closes the channel without any report', async () => {
    answerWith((channel, nonce) => {
      channel.write(`${nonce} started 4242\npartial\n`);
      eofAndClose(channel);
    });
    const result = await newExecutor().run(request('echo partial'));
    expect(result).toMatchObject({ exitCode: null, signal: null, output: 'partial\n', timedOut: false, aborted: false });
    expect(result.unknownExitReason).toBe('the SSH server closed the channel without reporting an exit status or signal (RFC 4254 §6.10)');
    expect(describeCommandEnd(result, 5000)).toEqual(['[exit status unknown: the SSH server closed the channel without reporting an exit status or signal (RFC 4254 §6.10)]']);
    expect(describeCommandEnd({ ...result, aborted: true }, 5000)).toEqual([
      '[aborted; exit status unknown: the SSH server closed the channel without reporting an exit status or signal (RFC 4254 §6.10)]',
    ]);
  });

  it('reports the code that comes in a later read, after the client closed its stdin', async () => {
    answerWith((channel, nonce) => {
      channel.write(`${nonce} started 4242\n`);
      // The client sends EOF once it has taken the channel over: the report comes after that.
      channel.once('end', () => {
        channel.exit(3);
        setImmediate(() => eofAndClose(channel));
      });
      channel.resume();
    });
    expect(await newExecutor().run(request('exit 3'))).toMatchObject({ exitCode: 3, signal: null });
  });
});

describe('spawn and spawnPiped: exit status arriving in the same read as the exec reply', () => {
  it('spawn reports the exit code and the output', async () => {
    answerWith((channel, nonce) => {
      channel.write(`${nonce} started 4242\nhello\n`);
      channel.exit(4);
      eofAndClose(channel);
    });
    const process = newExecutor().spawn({ command: 'echo hello; exit 4', cwd: '/' });
    let output = '';
    process.onOutput((chunk) => (output += chunk));
    expect(await process.exited).toEqual({ exitCode: 4, signal: null });
    expect(output).toBe('hello\n');
    expect(process.pid).toBe(4242);
  });

  it('spawn reports an exit-signal', async () => {
    answerWith((channel, nonce) => {
      channel.write(`${nonce} started 4242\n`);
      channel.exit('TERM', false, '');
      eofAndClose(channel);
    });
    expect(await newExecutor().spawn({ command: 'sleep 300', cwd: '/' }).exited).toEqual({ exitCode: null, signal: 'SIGTERM' });
  });

  it('spawnPiped reports 127 of a command the shell did not find, stderr without the marker', async () => {
    answerWith((channel, nonce) => {
      channel.stderr.write(`${nonce} started 4242\nbash: line 1: exec: no-such-program: not found\n`);
      channel.exit(127);
      eofAndClose(channel);
    });
    const process = newExecutor().spawnPiped({ command: 'no-such-program', args: [] });
    let stderr = '';
    process.onStderr((chunk) => (stderr += chunk.toString('utf8')));
    expect(await process.exited).toEqual({ exitCode: 127, signal: null });
    expect(stderr).toBe('bash: line 1: exec: no-such-program: not found\n');
  });

  it('spawn and spawnPiped say why the status is unknown when the server closes without a report', async () => {
    answerWith((channel, nonce) => {
      channel.write(`${nonce} started 4242\n`);
      channel.stderr.write(`${nonce} started 4242\n`);
      eofAndClose(channel);
    });
    const reason = 'the SSH server closed the channel without reporting an exit status or signal (RFC 4254 §6.10)';
    const spawned = newExecutor().spawn({ command: 'true', cwd: '/' });
    expect(await spawned.exited).toEqual({ exitCode: null, signal: null, unknownExitReason: reason });
    expect(await executor.spawnPiped({ command: 'true', args: [] }).exited).toEqual({ exitCode: null, signal: null, unknownExitReason: reason });
  });

  it('spawnPiped killed before its start marker says its channel was closed from this side', async () => {
    let opened!: () => void;
    const channelOpen = new Promise<void>((resolve) => (opened = resolve));
    answerWith((channel) => {
      openChannels.push(channel);
      opened();
    });
    const piped = newExecutor().spawnPiped({ command: 'sleep', args: ['300'] });
    await channelOpen;
    piped.kill();
    expect(await piped.exited).toEqual({
      exitCode: null,
      signal: null,
      unknownExitReason: 'the channel was closed from this side before the SSH server reported how the command ended',
    });
  });

  it('spawn says the connection closed when it drops before any report', async () => {
    let opened!: () => void;
    const channelOpen = new Promise<void>((resolve) => (opened = resolve));
    answerWith((channel, nonce) => {
      channel.write(`${nonce} started 4242\n`);
      openChannels.push(channel);
      opened();
    });
    const spawned = newExecutor().spawn({ command: 'sleep 300', cwd: '/' });
    await channelOpen;
    await expect.poll(() => spawned.pid).toBe(4242);
    server.dropConnections();
    expect(await spawned.exited).toEqual({ exitCode: null, signal: null, unknownExitReason: 'the SSH connection closed before the server reported how the command ended' });
  });
});

describe('MCP servers started over the scripted server', () => {
  function manager(): McpClientManager {
    const box = newExecutor();
    const created = new McpClientManager(
      { servers: { missing: { transport: 'stdio', executor: 'scripted', command: 'no-such-mcp-server', startupTimeoutMs: 5000 } } },
      { workDirectory: '/tmp', workExecutor: 'local', findExecutor: (name) => (name === 'scripted' ? box : undefined) },
    );
    onTestFinished(() => created.close());
    return created;
  }

  it('names a missing command from the exit status that came in the same read as the exec reply', async () => {
    answerWith((channel, nonce) => {
      // The shell's words depend on its locale: only the status (127) tells reliably.
      channel.stderr.write(`${nonce} started 4242\nbash: rivi 1: exec: no-such-mcp-server: ei löydy\n`);
      channel.exit(127);
      eofAndClose(channel);
    });
    const servers = manager();
    await servers.prepare();
    expect(servers.servers[0]?.failure).toBe('command "no-such-mcp-server" was not found');
  });

  it('says the exit status is unknown, and why, instead of guessing from stderr', async () => {
    answerWith((channel, nonce) => {
      channel.stderr.write(`${nonce} started 4242\nbash: line 1: exec: no-such-mcp-server: not found\n`);
      eofAndClose(channel);
    });
    const servers = manager();
    await servers.prepare();
    expect(servers.servers[0]?.failure).toBe(
      'the server exited before completing the MCP handshake (exit status unknown: the SSH server closed the channel without reporting an exit status or signal (RFC 4254 §6.10)); its stderr ended with: bash: line 1: exec: no-such-mcp-server: not found',
    );
  });
});
