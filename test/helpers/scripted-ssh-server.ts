/**
 * An SSH server written with ssh2's `Server`, on 127.0.0.1, whose exec channels are answered by
 * the test: it decides what the channel sends and in which order (data, exit-status,
 * exit-signal, EOF, CLOSE), which a real sshd does not let a test control. Everything a
 * handler writes in one synchronous run goes out before the client (same event loop) reads,
 * so it reaches the client in one socket read: the packet order the client sees under load.
 * It accepts any public key; its host key is trusted by the known_hosts file it writes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';

/** The server side of one exec channel, as ssh2 gives it. */
export type ScriptedChannel = ssh2.ServerChannel;

/**
 * Answers one exec request: `accept` opens the channel (sends CHANNEL_SUCCESS) and returns it;
 * the handler then writes, reports and closes it in whatever order the test needs.
 */
export type ExecHandler = (command: string, accept: () => ScriptedChannel) => void;

/** A running scripted server. */
export interface ScriptedSshServer {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Private key file of a client key (any key is accepted). */
  readonly identityFile: string;
  /** known_hosts file holding the server's host key for `[127.0.0.1]:port`. */
  readonly knownHostsFile: string;
  /** Replaces the handler of exec requests. */
  onExec(handler: ExecHandler): void;
  /** Drops every connection at once (TCP close, no SSH disconnect message). */
  dropConnections(): void;
  /** Stops the server and removes its key files. */
  dispose(): Promise<void>;
}

/** The per-run nonce the executors put after `openvaala` in their remote command lines. */
export function nonceOf(command: string): string {
  const match = /openvaala '(openvaala-[0-9a-f]+)'/.exec(command);
  if (match === null) throw new Error(`no nonce in the command line: ${command}`);
  return match[1] as string;
}

/** Starts a scripted server whose exec requests are refused until `onExec` sets a handler. */
export async function startScriptedSshServer(): Promise<ScriptedSshServer> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'scripted-ssh-'));
  const hostKey = ssh2.utils.generateKeyPairSync('ed25519');
  const clientKey = ssh2.utils.generateKeyPairSync('ed25519');
  const identityFile = path.join(directory, 'id_ed25519');
  await writeFile(identityFile, clientKey.private, { mode: 0o600 });
  let handler: ExecHandler | undefined;
  const sockets = new Set<{ end(): void; _sock?: { destroy(): void } }>();
  const server = new ssh2.Server({ hostKeys: [hostKey.private] }, (connection) => {
    const tracked = connection as unknown as { end(): void; _sock?: { destroy(): void } };
    sockets.add(tracked);
    // Without this, Nagle's algorithm holds the packets after the exec reply until the client
    // acknowledges it, and the burst would reach the client in two reads.
    // (ssh2 has `Connection.setNoDelay`; its type definitions lack it.)
    (connection as unknown as { setNoDelay(noDelay: boolean): void }).setNoDelay(true);
    connection.on('error', () => undefined);
    connection.on('close', () => sockets.delete(tracked));
    connection.on('authentication', (context) => (context.method === 'publickey' ? context.accept() : context.reject(['publickey'])));
    connection.on('ready', () => {
      connection.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('exec', (acceptExec, rejectExec, info) => {
          if (handler === undefined) {
            rejectExec?.();
            return;
          }
          handler(info.command, () => acceptExec());
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const knownHostsFile = path.join(directory, 'known_hosts');
  const [type, key] = hostKey.public.split(' ');
  await writeFile(knownHostsFile, `[127.0.0.1]:${port} ${type} ${key}\n`);
  return {
    host: '127.0.0.1',
    port,
    identityFile,
    knownHostsFile,
    onExec(next) {
      handler = next;
    },
    dropConnections() {
      for (const socket of sockets) socket._sock?.destroy();
    },
    async dispose() {
      for (const socket of sockets) socket.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(directory, { recursive: true, force: true });
    },
  };
}
