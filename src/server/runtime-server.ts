/**
 * `openvaala serve` (SPEC §2): puts the runtime together — data-dir lock, storage, model
 * providers, executors, tools — and serves it over HTTP/WebSocket, writing
 * `runtime-server.yaml` so local clients find it, and exiting cleanly on SIGTERM/SIGINT or
 * after an idle period when started by a client.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { resolvePaths, serverInfoFile, type OpenVaalaPaths } from '../config/paths.js';
import { loadProvidersFile } from '../config/providers.js';
import { ConversationStore } from '../dao/conversation-store.js';
import { LocalExecutor } from '../executors/local/local-executor.js';
import type { Logger } from '../logger.js';
import { ModelRegistry } from '../models/model-registry.js';
import { Runtime, type RuntimeLimits } from '../runtime/runtime.js';
import { FileLogStorage } from '../storage/file/file-log-storage.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';
import { environmentTools } from '../tools/index.js';
import { VERSION } from '../package-info.js';
import { acquireDataDirLock } from './data-dir-lock.js';
import { createHttpServer } from './http-server.js';
import { RpcConnection } from './rpc-connection.js';
import { removeServerInfo, writeServerInfo } from './server-info.js';

/** Options of a runtime server. */
export interface RuntimeServerOptions {
  paths?: Partial<OpenVaalaPaths>;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8790; 0 picks a free port. */
  port?: number;
  /** Exit after this many ms with no clients, no running turns (for servers started by a client). */
  exitWhenIdleMs?: number;
  /** Extra allowed browser origins. */
  allowedOrigins?: string[];
  limits?: Partial<RuntimeLimits>;
  logger: Logger;
}

/** A running server. */
export interface RunningServer {
  url: string;
  token: string;
  port: number;
  runtime: Runtime;
  /** Resolves when the server has stopped (by `stop`, a signal or idleness). */
  stopped: Promise<void>;
  /** Stops the server cleanly: running turns interrupted and recorded, logs synced, lock and server file removed. */
  stop(reason?: string): Promise<void>;
}

/**
 * Starts a runtime server.
 * @throws DataDirLockedError when another server holds the data dir (message names its pid)
 * @throws ConfigError when `providers.yaml` is invalid (names file, line and key path)
 */
export async function startRuntimeServer(options: RuntimeServerOptions): Promise<RunningServer> {
  const paths = { ...resolvePaths(), ...options.paths };
  const logger = options.logger;
  const lock = acquireDataDirLock(paths.dataDir);
  let logs: FileLogStorage | undefined;
  let index: SqliteRecordStorage | undefined;
  try {
    const providers = await loadProvidersFile(paths.configDir);
    logs = new FileLogStorage(paths.dataDir, { onProblem: (problem) => logger.warn({ problem }, 'damaged log entry skipped') });
    index = new SqliteRecordStorage(path.join(paths.dataDir, 'metadata.db'));
    const store = new ConversationStore(logs, index, (report) => logger.warn({ report }, 'invalid log entry skipped'));
    const runtime = new Runtime({
      store,
      models: new ModelRegistry(providers),
      executors: new Map([['local', new LocalExecutor({ name: 'local' })]]),
      tools: environmentTools(),
      ...(options.limits ? { limits: options.limits } : {}),
    });
    const token = randomBytes(32).toString('base64url');
    const connections = new Set<RpcConnection>();
    const { server, webSockets } = createHttpServer({
      token,
      allowedOrigins: options.allowedOrigins ?? [],
      health: () => ({ pid: process.pid, version: VERSION }),
      onConnection: (socket, transport) => {
        const connection = new RpcConnection(socket, transport, runtime, { name: 'openvaala', version: VERSION }, logger);
        connections.add(connection);
        socket.on('close', () => connections.delete(connection));
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8790, options.host ?? '127.0.0.1', () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const host = options.host ?? '127.0.0.1';
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const infoFile = serverInfoFile(paths);
    writeServerInfo(infoFile, { url, token, pid: process.pid, dataDir: paths.dataDir, startedAt: Date.now() });
    logger.info({ url, dataDir: paths.dataDir }, 'runtime server listening');

    let resolveStopped!: () => void;
    const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
    let stopping: Promise<void> | undefined;
    let idleTimer: NodeJS.Timeout | undefined;
    const stop = (reason = 'stop requested') => {
      stopping ??= (async () => {
        logger.info({ reason }, 'runtime server stopping');
        if (idleTimer) clearInterval(idleTimer);
        for (const client of webSockets.clients) client.close(1001, 'server stopping');
        await new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await runtime.shutdown();
        await logs?.close();
        await index?.close();
        removeServerInfo(infoFile);
        lock.release();
        resolveStopped();
      })();
      return stopping;
    };
    if (options.exitWhenIdleMs !== undefined) {
      const idleLimit = options.exitWhenIdleMs;
      let idleSince = Date.now();
      idleTimer = setInterval(() => {
        if (webSockets.clients.size > 0 || !runtime.isIdle()) idleSince = Date.now();
        else if (Date.now() - idleSince >= idleLimit) void stop(`idle for ${idleLimit} ms`);
      }, Math.min(1000, Math.max(50, idleLimit / 4)));
      idleTimer.unref();
    }
    return { url, token, port, runtime, stopped, stop };
  } catch (error) {
    await logs?.close();
    await index?.close();
    lock.release();
    throw error;
  }
}
