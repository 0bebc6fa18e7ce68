/**
 * `openvaala serve` (SPEC §2): takes the data-dir lock, listens, and then opens what runs
 * behind the HTTP server — storage, model providers, executors, tools (`runtime-services.ts`,
 * imported at that point: it is most of the server's code) — writing `runtime-server.yaml` so
 * local clients find it once all is open, and exiting cleanly on SIGTERM/SIGINT or after an idle
 * period when started by a client.
 *
 * Listening first lets `/healthz` answer while the rest loads and opens (`{"status":"starting"}`
 * until then); every other request and WebSocket upgrade waits until the services are open, and
 * is refused with 503 when they fail to open (the server then stops, as before).
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { dataDirServerInfoFile, resolvePaths, serverInfoFile, type OpenVaalaPaths } from '../config/paths.js';
import type { Logger } from '../logger.js';
import type { Runtime, RuntimeLimits } from '../runtime/runtime.js';
import type { LogStorage } from '../storage/log-storage.js';
import type { PriceLookup } from '../runtime/usage.js';
import { acquireDataDirLock, processExists } from './data-dir-lock.js';
import { createHttpServer } from './http-server.js';
import type { HttpRoute, HttpRouteEntry } from './http-routes.js';
import type { ConnectionLimits } from './rpc-connection.js';
import type { RuntimeServices, SignInLink } from './runtime-services.js';
import { WEB_PATH } from './web/static-files.js';
import type { Platform } from '../platform/platform.js';
import type { Caller } from '../platform/caller.js';
import { ListenError } from './listen-error.js';
import { missingAncestor, removeMadeDirectoriesSync } from '../make-directory.js';
import { recordEntries, removeAddedEntries } from './start-leftovers.js';

export type { SignInLink };

/** Listening addresses that mean every interface. */
const WILDCARD_ADDRESSES = new Set(['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0']);


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
  /**
   * Host names, besides loopback ones and the listening address, that requests may name in
   * their `Host` header (e.g. the name a reverse proxy or other machines use to reach it).
   */
  allowedHosts?: string[];
  /** Send buffer, heartbeat and request limits of each connection (tests, embedding). */
  connectionLimits?: Partial<ConnectionLimits>;
  limits?: Partial<RuntimeLimits>;
  /** Largest upload accepted, bytes; wins over `server.yaml` `limits.maxUploadBytes` (tests, embedding). */
  maxUploadBytes?: number;
  logger: Logger;
  /**
   * Wraps the conversation log storage (the data directory's files) before the server uses
   * it: for embedding (metrics, replication) and for fault injection in tests. Default: none.
   */
  wrapLogStorage?: (storage: LogStorage) => LogStorage;
  /** Prices of models (USD per million tokens) for `session/usage` and turn costs; default: the models catalog's. */
  prices?: PriceLookup;
  /** Folder of the built web UI served at `/web/v1/`; default `dist/www` of the package (made by `npm run build`). */
  webRoot?: string;
  /** Platform mode (`serve --platform`): users, sign-in, roles (docs/platform.md); default `platform.enabled` of `server.yaml`. */
  platform?: boolean;
  /** Platform mode: how often connections are checked for expired sessions, ms (default 60000; tests). */
  platformAccessSweepMs?: number;
  /**
   * Tests only: the caller an authenticated WebSocket upgrade acts as, instead of the one the
   * upgrade's token or cookie stands for (undefined: that one). Lets protocol tests of projects
   * speak as several users without signing each in.
   */
  resolveCaller?: (request: IncomingMessage) => Caller | undefined;
  /**
   * Lists the models each provider offers (`GET <baseURL>/models`) in `models/list`, merged with
   * the configured ones and cached (docs/platform.md, "Settings and the model catalog").
   * Default: on in platform mode, off otherwise (`models/list` then shows the configured models only and asks no provider).
   */
  discoverModels?: boolean;
}

/** A running server. */
export interface RunningServer {
  url: string;
  token: string;
  port: number;
  runtime: Runtime;
  /**
   * The platform (`<data-dir>/platform.db`): projects, members, secrets and per-user state
   * always; users, sessions and tokens used when platform mode is on.
   */
  platform: Platform;
  /** Address of the web UI (`<url>/web/v1/`, with a loopback address when listening on every interface). */
  webUrl: string;
  /** Makes a new one-time sign-in link of the web UI (single use, valid 5 minutes). */
  signInLink(): SignInLink;
  /** Every HTTP route the server answers (docs/http.md documents each one). */
  httpRoutes(): HttpRouteEntry[];
  /** Resolves when the server has stopped (by `stop`, a signal or idleness). */
  stopped: Promise<void>;
  /** Stops the server cleanly: running turns interrupted and recorded, logs synced, lock and server file removed. */
  stop(reason?: string): Promise<void>;
}

/**
 * Starts a runtime server: resolves once it listens and its services are open.
 * @throws DataDirLockedError when another server holds the data dir (message names its pid)
 * @throws ConfigurationError when the configuration directory is invalid (names file, line and key path of every problem)
 * @throws DataDirUnusableError when the data directory cannot be created or used
 * @throws ListenError when the address cannot be listened on (EADDRINUSE, EADDRNOTAVAIL, EACCES, ...)
 * @throws Error naming the file when `runtime-server.yaml` cannot be written (the server is stopped again)
 *
 * A start that fails leaves the disk as it found it: what it added to the data directory, and
 * the directories it made (the data and state directories and their missing parents), are
 * removed again; what was there before stays untouched.
 */
export async function startRuntimeServer(options: RuntimeServerOptions): Promise<RunningServer> {
  const paths = { ...resolvePaths(), ...options.paths };
  const logger = options.logger;
  const lock = acquireDataDirLock(paths.dataDir);
  // What the data directory held once locked (the lock file among it), and the state directory
  // missing so far: a start that fails takes away what it added and the directories it made.
  const dataDirEntries = recordEntries(paths.dataDir);
  // Only the server file made at the end can make the state directory: looked at just before it.
  // eslint-disable-next-line prefer-const -- assigned late, read by a clean-up that may run before
  let stateDirMissingFrom: string | undefined;
  const releaseAfterFailedStart = () => {
    // While the lock is held: no other server can have added anything.
    for (const kept of removeAddedEntries(paths.dataDir, dataDirEntries)) logger.warn(kept, 'what the failed start added to the data directory could not be removed');
    lock.release();
    // The state directory first: a missing parent it shares with the data directory is then empty when the data directory's turn comes.
    removeMadeDirectoriesSync(paths.stateDir, stateDirMissingFrom);
    removeMadeDirectoriesSync(paths.dataDir, lock.createdDirectory);
  };
  // Made once listening (`node:crypto` is not needed to answer /healthz); nothing reads it before `ready`.
  let token = '';
  let sameSecret: ((given: string, expected: string) => boolean) | undefined;
  const listenHost = options.host ?? '127.0.0.1';
  if (WILDCARD_ADDRESSES.has(listenHost)) {
    logger.warn({ host: listenHost }, `listening on every network interface: anyone who can reach this machine can try to connect; requests must name a loopback host${options.allowedHosts?.length ? ` or ${options.allowedHosts.join(', ')}` : ' (allow other names with --allow-host)'}`);
  }
  // Filled from the configuration by the services (and refilled in place by reloads).
  const allowedOrigins: string[] = [];
  let services: RuntimeServices | undefined;
  // Set once `stop` exists (the storage can be lost only after the services are open).
  // eslint-disable-next-line prefer-const -- read by a callback before it is assigned
  let stopWhenStorageLost: ((reason: string) => Promise<void>) | undefined;
  let serverInfoModule: Promise<typeof import('./server-info.js')> | undefined;
  let idleMemoryModule: Promise<typeof import('./idle-memory.js')> | undefined;
  let markReady!: () => void;
  let markFailed!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    markFailed = reject;
  });
  // Nothing but /healthz reaches these before `ready` has resolved, and then `services` is set.
  const opened = (): RuntimeServices => services!;
  // Filled with the services' endpoints once they are open (no request reaches them before).
  const routes: Record<string, HttpRoute> = {};
  const upgrades: Record<string, (request: IncomingMessage, socket: Duplex, head: Buffer) => void> = {};
  // Grows by the host of `storage.yaml` `cluster.advertiseUrl`, which the other servers name.
  const allowedHosts = [listenHost, ...(options.allowedHosts ?? [])];
  const { server, webSockets, routes: httpRoutes } = createHttpServer({
    isServerToken: (given) => sameSecret!(given, token),
    allowedOrigins,
    allowedHosts,
    upgrades,
    ready,
    health: () => opened().health(),
    logger,
    routes,
    web: (request, response, pathname) => opened().web(request, response, pathname),
    webRoutes: () => services?.webRoutes() ?? [],
    hasSession: (request) => opened().hasSession(request),
    apiTokenCaller: (given) => opened().apiTokenCaller?.(given) ?? Promise.resolve(undefined),
    sessionCaller: (request) => opened().sessionCaller?.(request) ?? Promise.resolve(undefined),
    onConnection: (socket, transport, request, authenticated, caller) => opened().onConnection(socket, transport, request, authenticated, caller),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8790, listenHost, () => resolve());
    });
  } catch (error) {
    releaseAfterFailedStart();
    throw ListenError.from(error, listenHost, options.port ?? 8790);
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://${listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${port}`;
  // A browser cannot open a wildcard address: the link names this machine's loopback one.
  const webBase = WILDCARD_ADDRESSES.has(listenHost) ? `http://${listenHost.includes(':') ? '[::1]' : '127.0.0.1'}:${port}` : url;
  try {
    // The server file's module (and its YAML library) and the memory watch (`node:v8`, `node:vm`)
    // are needed only once ready: loaded meanwhile.
    serverInfoModule = import('./server-info.js');
    idleMemoryModule = import('./idle-memory.js');
    const serverToken = await import('./server-token.js');
    token = serverToken.createServerToken();
    sameSecret = serverToken.sameSecret;
    const { openRuntimeServices } = await import('./runtime-services.js');
    services = await openRuntimeServices(options, paths, logger, token, allowedOrigins, { port, webBase }, (reason) => {
      stopWhenStorageLost?.(reason).catch(() => undefined);
    });
  } catch (error) {
    markFailed(error as Error);
    for (const client of webSockets.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    releaseAfterFailedStart();
    throw error;
  }
  const { runtime } = services;
  Object.assign(routes, services.routes);
  Object.assign(upgrades, services.upgrades);
  allowedHosts.push(...services.allowedHosts);
  markReady();
  const { collectOnce, releaseMemoryWhenIdle, stopYoungGenerationGrowth } = await idleMemoryModule;
  // Both already loaded with the services: the storage opened its databases through it.
  const { shrinkSqliteMemory } = await import('../storage/sqlite/sqlite-database.js');
  const { trimCHeap } = await import('./c-heap.js');
  const releaseNativeMemory = () => {
    const sqlite = shrinkSqliteMemory();
    const trimmed = trimCHeap();
    logger.debug({ sqliteShrunk: sqlite.shrunk, sqliteBusy: sqlite.busy, trimmed }, 'native memory released');
  };
  stopYoungGenerationGrowth();
  await collectOnce();
  releaseNativeMemory();
  const { readServerInfoIfSound, removeServerInfo, writeServerInfo } = await serverInfoModule;
  const infoFile = serverInfoFile(paths);
  const dataDirInfoFile = dataDirServerInfoFile(paths);

  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  let stopping: Promise<void> | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  // Set when the start fails after this point: stopping then also takes away what it added.
  let startFailed = false;
  const stop = (reason = 'stop requested') => {
    stopping ??= (async () => {
      logger.info({ reason }, 'runtime server stopping');
      if (idleTimer) clearInterval(idleTimer);
      // Turns end first (recorded as interrupted, announced to the clients still attached).
      await services.shutdown();
      for (const client of webSockets.clients) client.close(1001, 'server stopping');
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await services.closeStorage();
      removeServerInfo(infoFile);
      removeServerInfo(dataDirInfoFile);
      if (startFailed) releaseAfterFailedStart();
      else lock.release();
      resolveStopped();
    })();
    return stopping;
  };
  stopWhenStorageLost = stop;
  const stopReleasingMemory = releaseMemoryWhenIdle({
    isIdle: () => runtime.isIdle(),
    lastActivityAt: () => runtime.lastActivityAt,
    lastReleaseAt: () => runtime.lastClosedAt,
    releaseNativeMemory,
    onReleaseError: (error) => logger.warn({ error: error.message }, 'releasing native memory failed'),
  });
  stopped.then(stopReleasingMemory, stopReleasingMemory);
  if (options.exitWhenIdleMs !== undefined) {
    const idleLimit = options.exitWhenIdleMs;
    let idleSince = Date.now();
    idleTimer = setInterval(() => {
      if (webSockets.clients.size > 0 || !runtime.isIdle()) idleSince = Date.now();
      else if (Date.now() - idleSince >= idleLimit) stop(`idle for ${idleLimit} ms`).catch((error: unknown) => logger.error({ error: (error as Error).message }, 'stopping the idle server failed'));
    }, Math.min(1000, Math.max(50, idleLimit / 4)));
    idleTimer.unref();
  }
  // Written last: a client that finds the file finds a server ready for it.
  const info = { url, token, pid: process.pid, dataDir: paths.dataDir, configDir: paths.configDir, startedAt: Date.now() };
  stateDirMissingFrom = missingAncestor(paths.stateDir);
  try {
    writeServerInfo(dataDirInfoFile, info);
    // The shared state file is left to a live server of another data dir that already has it.
    const current = readServerInfoIfSound(infoFile, (damaged) => logger.warn({ file: damaged.file, problem: damaged.problem }, 'the server file is damaged: taken as describing no server, and overwritten'));
    if (!current || current.dataDir === paths.dataDir || !processExists(current.pid)) writeServerInfo(infoFile, info);
  } catch (error) {
    // Clients could not find this server: stopped cleanly (lock released, storage closed) rather than left running unseen.
    startFailed = true;
    await stop('the server file cannot be written');
    throw error;
  }
  logger.info({ url, dataDir: paths.dataDir }, 'runtime server listening');
  return { url, token, port, runtime, platform: services.platform, webUrl: `${webBase}${WEB_PATH}`, signInLink: () => services.signInLink(), httpRoutes, stopped, stop };
}
