/**
 * `openvaala serve` (SPEC §2): puts the runtime together — data-dir lock, storage, model
 * providers, executors, tools — and serves it over HTTP/WebSocket, writing
 * `runtime-server.yaml` so local clients find it, and exiting cleanly on SIGTERM/SIGINT or
 * after an idle period when started by a client.
 */
import type { PriceLookup } from '../runtime/usage.js';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startSchedules } from './schedules.js';
import { dataDirServerInfoFile, resolvePaths, serverInfoFile, type OpenVaalaPaths } from '../config/paths.js';
import { loadConfiguration } from '../config/configuration.js';
import { CONVERSATIONS_PATH, ConversationStore } from '../dao/conversation-store.js';
import { recoverStaleTurns } from '../dao/turn-recovery.js';
import { SqliteConversationSearchIndex } from '../dao/sqlite-conversation-search-index.js';
import type { Logger } from '../logger.js';
import { setToolFailureLogger } from '../tools/internal-errors.js';
import { ModelRegistry } from '../models/model-registry.js';
import { Runtime, type RuntimeLimits } from '../runtime/runtime.js';
import { FileLogStorage } from '../storage/file/file-log-storage.js';
import type { LogStorage } from '../storage/log-storage.js';
import type { SqliteDatabase } from '../storage/sqlite/sqlite-database.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';
import { StagedLogStorage } from '../storage/staged/staged-log-storage.js';
import { StagedRecordStorage } from '../storage/staged/staged-record-storage.js';
import { environmentTools } from '../tools/index.js';
import { PACKAGE_ROOT, VERSION } from '../package-info.js';
import { applyConfiguration, buildServerExecutors, ConfigService, type ConfigurationTargets } from './config-service.js';
import { acquireDataDirLock, processExists } from './data-dir-lock.js';
import { createHttpServer, sameSecret } from './http-server.js';
import { closeIndexDatabase, openIndexDatabase, rebuildIndex } from './index-database.js';
import { releaseMemoryWhenIdle } from './idle-memory.js';
import { tightenPermissions } from './private-files.js';
import { ProcessRecords, stopLeftoverProcesses } from './process-records.js';
import { DEFAULT_CONNECTION_LIMITS, RpcConnection, type ConnectionLimits } from './rpc-connection.js';
import { readServerInfo, removeServerInfo, writeServerInfo } from './server-info.js';
import { DEFAULT_MAX_UPLOAD_BYTES, handleUpload, UPLOAD_PATH, type UploadOptions } from './uploads.js';
import { AttachmentStore } from '../runtime/attachments.js';
import { WEB_PATH } from './web/static-files.js';
import { handleWebRequest, hasWebSession, SIGN_IN_PATH, type WebRouteOptions } from './web/web-routes.js';
import { sessionCookieName, WEB_SESSIONS_FILE, WebSessions } from './web/web-sessions.js';

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
}

/** A one-time sign-in link of the web UI (docs/web.md). */
export interface SignInLink {
  /** `<server>/web/v1/sign-in#token=<code>`: the code is in the fragment, which browsers never send. */
  url: string;
  /** When the code stops working, ms since the epoch. */
  expiresAt: number;
}

/** A running server. */
export interface RunningServer {
  url: string;
  token: string;
  port: number;
  runtime: Runtime;
  /** Address of the web UI (`<url>/web/v1/`, with a loopback address when listening on every interface). */
  webUrl: string;
  /** Makes a new one-time sign-in link of the web UI (single use, valid 5 minutes). */
  signInLink(): SignInLink;
  /** Resolves when the server has stopped (by `stop`, a signal or idleness). */
  stopped: Promise<void>;
  /** Stops the server cleanly: running turns interrupted and recorded, logs synced, lock and server file removed. */
  stop(reason?: string): Promise<void>;
}

/**
 * Starts a runtime server.
 * @throws DataDirLockedError when another server holds the data dir (message names its pid)
 * @throws ConfigurationError when the configuration directory is invalid (names file, line and key path of every problem)
 */
export async function startRuntimeServer(options: RuntimeServerOptions): Promise<RunningServer> {
  const paths = { ...resolvePaths(), ...options.paths };
  const logger = options.logger;
  setToolFailureLogger(logger);
  const lock = acquireDataDirLock(paths.dataDir);
  let logs: StagedLogStorage | undefined;
  let database: SqliteDatabase | undefined;
  let index: StagedRecordStorage | undefined;
  let search: SqliteConversationSearchIndex | undefined;
  let store: ConversationStore | undefined;
  // Closes what was opened, in reverse order; the database last, as the index and search share it.
  const closeStorage = async (): Promise<void> => {
    await store?.close();
    await search?.close();
    await index?.close();
    await logs?.close();
    if (database) closeIndexDatabase(paths.dataDir, database);
  };
  try {
    // Directories a user (or an older version) left open to others are closed before anything is read.
    tightenPermissions(paths, logger);
    // The whole configuration directory is validated before anything starts (SPEC §8).
    const configuration = await loadConfiguration(paths.configDir);
    // New conversations are staged in memory until their first input (SPEC §4), so an empty
    // conversation leaves nothing on disk; the dao decides when to stage and to commit.
    const files = new FileLogStorage(paths.dataDir, { onProblem: (problem) => logger.warn({ problem }, 'damaged log entry skipped') });
    logs = new StagedLogStorage(options.wrapLogStorage ? options.wrapLogStorage(files) : files);
    const opened = openIndexDatabase(paths.dataDir);
    database = opened.database;
    // A missing or damaged index is rebuilt from the logs before any client sees the listing.
    const rebuilt = opened.rebuild !== undefined && (await files.listPaths(CONVERSATIONS_PATH)).length > 0;
    if (rebuilt && opened.rebuild) await rebuildIndex(paths.dataDir, files, database, opened.rebuild, logger);
    index = new StagedRecordStorage(new SqliteRecordStorage(database));
    search = new SqliteConversationSearchIndex(database);
    // Uploads to a conversation not yet committed wait in <dataDir>/staging and move with its commit.
    const attachments = new AttachmentStore(paths.dataDir, { isStaged: (conversationId) => store?.isStaged(conversationId) ?? false });
    const abandoned = attachments.removeStagingLeftovers();
    if (abandoned > 0) logger.info({ conversations: abandoned }, 'uploads of conversations that never received an input were removed');
    store = new ConversationStore(logs, index, {
      search,
      onInvalidEntry: (report) => logger.warn({ report }, 'invalid log entry skipped'),
      onCommitted: (conversationId) => attachments.commitStaged(conversationId),
    });
    if (!rebuilt && search.createdTables && (await store.listConversations({ limit: 1 })).conversations.length > 0) {
      logger.warn({ dataDir: paths.dataDir }, 'the conversation search index is new: run `openvaala reindex` (server stopped) to make existing conversations searchable');
    }
    // Commands a dead predecessor left running are stopped before anything else runs.
    await stopLeftoverProcesses(paths.dataDir, logger);
    const processRecords = new ProcessRecords(paths.dataDir, logger);
    // Turns a dead predecessor left running end now, so no listing shows them running.
    const recovery = await recoverStaleTurns(store);
    if (recovery.conversations.length > 0 || recovery.failures.length > 0) {
      logger.warn({ conversations: recovery.conversations.length, turns: recovery.turns, droppedApprovals: recovery.approvals, droppedUserInputs: recovery.userInputs, failures: recovery.failures }, 'turns left running by a server that stopped were recorded as interrupted');
    }
    // Limits given by the caller (tests, embedding) win over server.yaml, also after a reload;
    // the HTTP server reads the origins array on every upgrade, so a reload refills it in place.
    const allowedOrigins: string[] = [];
    const targets: ConfigurationTargets = {
      configDir: paths.configDir,
      ...(options.limits ? { limits: options.limits } : {}),
      allowedOrigins,
      extraOrigins: options.allowedOrigins ?? [],
      // Sandboxed executors must never see the server's own directories (its token is there).
      protectedDirectories: [paths.configDir, paths.dataDir, paths.stateDir],
      processTracker: processRecords,
    };
    const executors = buildServerExecutors(configuration, targets);
    const runtime = new Runtime({
      store,
      models: new ModelRegistry(configuration.providers, { configDir: paths.configDir }),
      agents: configuration.agents,
      mcp: { servers: configuration.mcp.servers, logger },
      hooks: configuration.hooks,
      skillsDirectory: path.join(paths.configDir, 'skills'),
      logger,
      executors,
      tools: environmentTools(),
      ...(options.prices ? { prices: options.prices } : {}),
    });
    applyConfiguration(runtime, configuration, targets, configuration);
    const schedules = await startSchedules(paths.dataDir, runtime, logger);
    const connections = new Set<RpcConnection>();
    const config = new ConfigService(targets, configuration, runtime, logger, (status) => {
      for (const connection of connections) connection.notify({ method: 'config/updated', params: status });
    });
    config.watch();
    const token = randomBytes(32).toString('base64url');
    const listenHost = options.host ?? '127.0.0.1';
    if (WILDCARD_ADDRESSES.has(listenHost)) {
      logger.warn({ host: listenHost }, `listening on every network interface: anyone who can reach this machine can try to connect; requests must name a loopback host${options.allowedHosts?.length ? ` or ${options.allowedHosts.join(', ')}` : ' (allow other names with --allow-host)'}`);
    }
    const connectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connectionLimits };
    runtime.attachments = attachments;
    const sessions = new WebSessions(Date.now, path.join(paths.dataDir, WEB_SESSIONS_FILE));
    let webBase = '';
    const signInLink = (): SignInLink => {
      const { code, expiresAt } = sessions.createSignInCode();
      return { url: `${webBase}${SIGN_IN_PATH}#token=${code}`, expiresAt };
    };
    // The cookie name holds the port, known once listening (no request comes before that).
    const web: WebRouteOptions = { webRoot: options.webRoot ?? path.join(PACKAGE_ROOT, 'dist', 'www'), sessions, token, allowedOrigins, cookieName: '', signInLink };
    const hasSession = (request: IncomingMessage) => hasWebSession(request, web);
    const uploads: UploadOptions = { token, allowedOrigins, runtime, attachments: runtime.attachments, logger, hasSession, maxBytes: () => options.maxUploadBytes ?? config.current.server.limits.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES };
    const { server, webSockets } = createHttpServer({
      token,
      allowedOrigins,
      allowedHosts: [listenHost, ...(options.allowedHosts ?? [])],
      health: () => ({ pid: process.pid, version: VERSION, connections: connections.size, sendBufferBytes: [...connections].reduce((total, connection) => total + connection.bufferedBytes, 0), sendBuffers: [...connections].map((connection) => connection.sendBuffer), pendingServerRequests: [...connections].reduce((total, connection) => total + connection.pendingServerRequests, 0) }),
      logger,
      routes: { [UPLOAD_PATH]: (request, response) => handleUpload(request, response, uploads) },
      web: (request, response, pathname) => handleWebRequest(request, response, pathname, web),
      hasSession,
      onConnection: (socket, transport, _request, authenticated) => {
        const authentication = { authenticated, check: (given: string) => sameSecret(given, token) };
        const connection = new RpcConnection(socket, transport, runtime, config, { name: 'openvaala', version: VERSION }, logger, authentication, connectionLimits);
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
    // A browser cannot open a wildcard address: the link names this machine's loopback one.
    webBase = WILDCARD_ADDRESSES.has(host) ? `http://${host.includes(':') ? '[::1]' : '127.0.0.1'}:${port}` : url;
    web.cookieName = sessionCookieName(port);
    const infoFile = serverInfoFile(paths);
    const dataDirInfoFile = dataDirServerInfoFile(paths);
    const info = { url, token, pid: process.pid, dataDir: paths.dataDir, configDir: paths.configDir, startedAt: Date.now() };
    writeServerInfo(dataDirInfoFile, info);
    // The shared state file is left to a live server of another data dir that already has it.
    const current = readServerInfo(infoFile);
    if (!current || current.dataDir === paths.dataDir || !processExists(current.pid)) writeServerInfo(infoFile, info);
    logger.info({ url, dataDir: paths.dataDir }, 'runtime server listening');

    let resolveStopped!: () => void;
    const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
    let stopping: Promise<void> | undefined;
    let idleTimer: NodeJS.Timeout | undefined;
    const stop = (reason = 'stop requested') => {
      stopping ??= (async () => {
        logger.info({ reason }, 'runtime server stopping');
        if (idleTimer) clearInterval(idleTimer);
        config.close();
        // Turns end first (recorded as interrupted, announced to the clients still attached).
        await runtime.shutdown();
        await schedules.close();
        for (const client of webSockets.clients) client.close(1001, 'server stopping');
        await new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closeStorage();
        removeServerInfo(infoFile);
        removeServerInfo(dataDirInfoFile);
        lock.release();
        resolveStopped();
      })();
      return stopping;
    };
    const stopReleasingMemory = releaseMemoryWhenIdle(() => runtime.isIdle());
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
    return { url, token, port, runtime, webUrl: `${webBase}${WEB_PATH}`, signInLink, stopped, stop };
  } catch (error) {
    await closeStorage();
    lock.release();
    throw error;
  }
}
