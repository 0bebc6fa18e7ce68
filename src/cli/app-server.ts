/**
 * `openvaala app-server [--listen ws://127.0.0.1:PORT]`: the Codex app-server protocol in front
 * of the local runtime server (found or started as `openvaala exec` does, SPEC §2). Without
 * `--listen` one client speaks on stdin/stdout (one JSON object per line) and the command ends
 * with its input; with it, clients connect over WebSocket (`codex --remote ws://…`) until the
 * process is stopped (SIGINT, SIGTERM).
 */
import { RuntimeClient } from '../client/runtime-client.js';
import { resolvePaths } from '../config/paths.js';
import { CodexConnection } from '../adapters/codex-app-server/connection.js';
import { lineStreamPeer, listenWebSocket, parseListenUrl } from '../adapters/codex-app-server/transports.js';
import { ensureServer } from './server-discovery.js';
import { UsageError } from './usage-error.js';

/** Options of `openvaala app-server`. */
export interface AppServerOptions {
  /** `ws://HOST:PORT` to serve WebSocket clients on; stdio when absent. */
  listen?: string;
  dataDir?: string;
  configDir?: string;
}

/**
 * Runs the adapter until stdin ends (stdio) or a signal stops it (WebSocket).
 * @returns the exit code (0)
 * @throws UsageError for a `--listen` value that is not `ws://HOST:PORT`
 * @throws Error when the runtime server cannot be found or started, or the address cannot be bound
 */
export async function runAppServer(options: AppServerOptions): Promise<number> {
  let listenAddress: { host: string; port: number } | undefined;
  if (options.listen !== undefined) {
    try {
      listenAddress = parseListenUrl(options.listen);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  const paths = resolvePaths({ ...(options.dataDir ? { dataDir: options.dataDir } : {}), ...(options.configDir ? { configDir: options.configDir } : {}) });
  const server = await ensureServer(paths, { requireConfigDir: options.configDir !== undefined });
  const connectionOptions = {
    // Approvals are answered by the Codex client; questions (`input/request`) have no Codex app-server counterpart this adapter speaks.
    connectRuntime: (clientName: string) => RuntimeClient.connect({ url: server.url, token: server.token, clientName: `codex:${clientName}`, capabilities: { approvals: true, userInput: false, deltas: true } }),
    cwd: process.cwd(),
    home: paths.configDir,
    log: (message: string) => process.stderr.write(`openvaala app-server: ${message}\n`),
    trace: process.env.OPENVAALA_APP_SERVER_TRACE === '1',
  };
  if (!listenAddress) {
    const connection = new CodexConnection(lineStreamPeer(process.stdin, process.stdout), connectionOptions);
    // Stdin ended: the requests already read are answered before the process ends.
    await connection.finished;
    return 0;
  }
  const listener = await listenWebSocket(listenAddress.host, listenAddress.port, (peer) => new CodexConnection(peer, connectionOptions));
  // The bound address on stderr, so a client (or a test asking for port 0) learns the port.
  process.stderr.write(`openvaala app-server listening on ${listener.url} (runtime server ${server.url})\n`);
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
  await listener.close();
  return 0;
}
