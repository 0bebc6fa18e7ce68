/**
 * What `openvaala serve` runs behind its HTTP server (SPEC §2): storage, model providers,
 * executors, tools, the configuration service, web sessions and uploads. Opened by
 * `runtime-server.ts` once it listens, imported then (it is most of the server's code), so the
 * server answers `/healthz` while this opens; requests other than `/healthz` wait for it.
 */
import { attachBrowserService, BrowserService } from './browser/browser-service.js';
import type { PriceLookup } from '../runtime/usage.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import path from 'node:path';
import { readdir } from 'node:fs/promises';
import type { WebSocket } from 'ws';
import type { OpenVaalaPaths } from '../config/paths.js';
import { CONFIGURATION_FILES, ConfigurationError, loadConfiguration, type Configuration } from '../config/configuration.js';
import { resolveStorageSelection, type StorageSelection } from '../config/storage-settings.js';
import { ConfigError } from '../config/yaml-file.js';
import { ConversationStore } from '../dao/conversation-store.js';
import { recoverStaleTurns } from '../dao/turn-recovery.js';
import { LogDamageRegistry } from '../dao/log-damage.js';
import type { Logger } from '../logger.js';
import { setToolFailureLogger } from '../tools/internal-errors.js';
import { ModelRegistry } from '../models/model-registry.js';
import { Runtime, type RuntimeLimits } from '../runtime/runtime.js';
import type { LogStorage } from '../storage/log-storage.js';
import { environmentTools } from '../tools/index.js';
import { PACKAGE_ROOT, VERSION } from '../package-info.js';
import { applyConfiguration, buildServerExecutors, ConfigService, type ConfigurationTargets } from './config-service.js';
import { loadPluginSet } from '../plugins/plugin-set.js';
import { startSchedules } from './schedules.js';
import { taskUserRefusal } from '../platform/schedules/task-user-access.js';
import { turnStartRefusal } from './handlers/confined-use.js';
import { serverConfinementContext } from './handlers/project-confinement.js';
import { sameSecret } from './server-token.js';
import { openServerStorage, type ServerStorage } from './server-storage.js';
import { tightenPermissions } from './private-files.js';
import { ProcessRecords, stopLeftoverProcesses } from './process-records.js';
import { DEFAULT_CONNECTION_LIMITS, RpcConnection, type ConnectionLimits } from './rpc-connection.js';
import { DEFAULT_MAX_UPLOAD_BYTES, handleUpload, UPLOAD_PATH, type UploadOptions } from './uploads.js';
import { AttachmentStore } from '../runtime/attachments.js';
import type { TusUploads } from './tus-uploads.js';
import { TUS_UPLOAD_MAX_AGE_MS, TUS_UPLOAD_PATH, TUS_UPLOAD_SWEEP_MS, TUS_UPLOADS_DIRECTORY } from './tus-upload-paths.js';
import { handleWebRequest, hasWebSession, SIGN_IN_PATH, webRoutes, type WebRouteOptions } from './web/web-routes.js';
import { FAVICON_PATH, serveFavicon } from './web/favicon.js';
import type { HttpRoute, HttpRouteEntry } from './http-routes.js';
import { sessionCookieName, WEB_SESSIONS_FILE, WebSessions } from './web/web-sessions.js';
import { Platform } from '../platform/platform.js';
import { redactingLogger } from '../platform/secrets/redacting-outputs.js';
import { OidcSignIn } from '../platform/sign-in/oidc.js';
import type { Caller } from '../platform/caller.js';
import { platformCookieNames, type PlatformRouteOptions } from './web/platform-routes.js';
import { checkCsrfToken } from './web/platform-http.js';
import { connectProjectsToRuntime, platformCallers, watchPlatformAccess } from './platform-services.js';
import { NotificationService } from './notifications/notification-service.js';
import { stateOwner } from '../platform/settings/user-state.js';
import type { ClusterServices } from './cluster/cluster-services.js';
import { connectCostsToRuntime } from './costs.js';

/**
 * The storage `storage.yaml` selects, with its `env:NAME` connection string read now.
 * @throws ConfigurationError naming storage.yaml and the key when the variable is not set
 */
function storageSelection(configuration: Configuration, configDir: string): StorageSelection {
  try {
    return resolveStorageSelection(configuration.storage, path.join(configDir, CONFIGURATION_FILES.storage.fileName));
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigurationError([error]);
    throw error;
  }
}

/** The options of `startRuntimeServer` this module uses (see `RuntimeServerOptions` there). */
export interface RuntimeServiceOptions {
  connectionLimits?: Partial<ConnectionLimits>;
  limits?: Partial<RuntimeLimits>;
  maxUploadBytes?: number;
  allowedOrigins?: string[];
  wrapLogStorage?: (storage: LogStorage) => LogStorage;
  prices?: PriceLookup;
  webRoot?: string;
  platform?: boolean;
  platformAccessSweepMs?: number;
  resolveCaller?: (request: IncomingMessage) => Caller | undefined;
  discoverModels?: boolean;
}

/** Where the server listens, known before the services open. */
export interface ListeningAddress {
  /** The port it listens on. */
  port: number;
  /** The base of links given to browsers (`http://host:port`, a loopback address for a wildcard host). */
  webBase: string;
}

/** A one-time sign-in link of the web UI (docs/web.md). */
export interface SignInLink {
  /** `<server>/web/v1/sign-in#token=<code>`: the code is in the fragment, which browsers never send. */
  url: string;
  /** When the code stops working, ms since the epoch. */
  expiresAt: number;
}

/** The opened services, as the HTTP server and `startRuntimeServer` use them. */
export interface RuntimeServices {
  runtime: Runtime;
  /** The platform: projects, members, secrets and settings; users, sessions and tokens in platform mode. */
  platform: Platform;
  /** The caller an API token (not the server token) stands for, when platform mode is on. */
  apiTokenCaller?: (token: string) => Promise<Caller | undefined>;
  /** The caller a platform session cookie of an upgrade request stands for, when platform mode is on. */
  sessionCaller?: (request: IncomingMessage) => Promise<Caller | undefined>;
  /** The body of an authenticated `/healthz` (pid, version, connections and their send buffers). */
  health(): Record<string, unknown>;
  /** Serves one accepted WebSocket as a JSON-RPC connection. */
  onConnection(socket: WebSocket, transport: Duplex, request: IncomingMessage, authenticated: boolean, caller: Caller): void;
  /** HTTP endpoints by exact path, or by prefix for a key ending with `/` (uploads, the favicon). */
  routes: Record<string, HttpRoute>;
  /** More WebSocket endpoints by exact path (a cluster's internal endpoint). */
  upgrades: Record<string, (request: IncomingMessage, socket: Duplex, head: Buffer) => void>;
  /** Host names requests may name besides the configured ones (a cluster's advertised host). */
  allowedHosts: string[];
  /** Handles the web UI's paths. */
  web(request: IncomingMessage, response: ServerResponse, pathname: string): void;
  /** The routes `web` answers. */
  webRoutes(): HttpRouteEntry[];
  /** Whether a request carries a live web UI session. */
  hasSession(request: IncomingMessage): boolean;
  /** Makes a new one-time sign-in link of the web UI (single use, valid 5 minutes). */
  signInLink(): SignInLink;
  /** Stops watching the configuration and ends running turns (recorded as interrupted, announced). */
  shutdown(): Promise<void>;
  /** Closes the storage (last, after the clients are gone). */
  closeStorage(): Promise<void>;
}

/**
 * Opens storage, configuration, runtime and the handlers of the HTTP server.
 * @param onStorageLost called when the storage can no longer be served by this server (another server took a PostgreSQL schema over): the server must stop
 * @param allowedOrigins the array the HTTP server reads on every request: filled here from the configuration, and refilled in place by reloads
 * @throws ConfigurationError when the configuration directory is invalid (names file, line and key path of every problem)
 * @throws Error when the index database cannot be opened or rebuilt (storage closed again)
 */
export async function openRuntimeServices(options: RuntimeServiceOptions, paths: OpenVaalaPaths, serverLogger: Logger, token: string, allowedOrigins: string[], address: ListeningAddress, onStorageLost: (reason: string) => void): Promise<RuntimeServices> {
  let logger = serverLogger;
  setToolFailureLogger(logger);
  let storage: ServerStorage | undefined;
  let store: ConversationStore | undefined;
  let platform: Platform | undefined;
  let cluster: ClusterServices | undefined;
  // Closes what was opened, in reverse order: the platform, the dao, the cluster's locks, then the storage (its shared database last).
  const closeStorage = async (): Promise<void> => {
    await platform?.close();
    await store?.close();
    await cluster?.release();
    await storage?.close();
  };
  try {
    // Directories a user (or an older version) left open to others are closed before anything is read.
    tightenPermissions(paths, logger);
    // The whole configuration directory is validated before anything starts (SPEC §8).
    const configuration = await loadConfiguration(paths.configDir);
    // The platform (projects, secrets; users in platform mode) opens before the storage, so
    // secret values are redacted from every log line and stored entry written from here on.
    const platformSettings = configuration.server.platform;
    const opened = await Platform.open(paths.dataDir, platformSettings, options.platform ?? platformSettings.enabled);
    platform = opened;
    logger = redactingLogger(logger, opened.redactor);
    setToolFailureLogger(logger);
    // New conversations are staged in memory until their first input (SPEC §4), so an empty
    // conversation leaves nothing on disk; the dao decides when to stage and to commit.
    const selection = storageSelection(configuration, paths.configDir);
    // Damaged log lines are reported once, when first read; clients are told about them later too.
    const logDamage = new LogDamageRegistry();
    storage = await openServerStorage({
      dataDir: paths.dataDir,
      selection,
      logger,
      onLogProblem: logDamage.onProblem,
      redactor: opened.redactor,
      ...(options.wrapLogStorage ? { wrapLogStorage: options.wrapLogStorage } : {}),
      // Another server may now take the schema over: this one must stop serving it.
      onActiveLockLost: () => onStorageLost('lost the active-server lock of the PostgreSQL schema'),
    });
    const { logs, index, search } = storage;
    if (selection.backend === 'postgres' && selection.cluster && storage.postgres) {
      // Loaded only in a cluster: it holds `pg`, which an embedded server never needs.
      const { openCluster } = await import('./cluster/cluster-services.js');
      cluster = await openCluster({ cluster: selection.cluster, connectionString: selection.connectionString, schema: storage.postgres.schema, logger, onLost: () => onStorageLost('lost the connection holding the conversation locks of the cluster') });
    }
    // Uploads to a conversation not yet committed wait in <dataDir>/staging and move with its commit.
    const attachments = new AttachmentStore(paths.dataDir, { isStaged: (conversationId) => store?.isStaged(conversationId) ?? false });
    const abandoned = attachments.removeStagingLeftovers();
    if (abandoned > 0) logger.info({ conversations: abandoned }, 'uploads of conversations that never received an input were removed');
    store = new ConversationStore(logs, index, {
      search,
      onInvalidEntry: (report) => logger.warn({ report }, 'invalid log entry skipped'),
      logDamage,
      locateStream: storage.locateStream,
      onCommitted: (conversationId) => attachments.commitStaged(conversationId),
      onPreviewWriteError: (conversationId, error) => logger.warn({ conversationId, error: error instanceof Error ? error.message : String(error) }, 'the new preview of a conversation could not be written to the index; the listing shows the previous one until its next write'),
    });
    if (storage.searchNeedsReindex() && (await store.listConversations({ limit: 1 })).conversations.length > 0) {
      logger.warn({ dataDir: paths.dataDir }, 'the conversation search index is new: run `openvaala reindex` (server stopped) to make existing conversations searchable');
    }
    // Commands a dead predecessor left running are stopped before anything else runs.
    await stopLeftoverProcesses(paths.dataDir, logger);
    const processRecords = new ProcessRecords(paths.dataDir, logger);
    // Turns a dead predecessor left running end now, so no listing shows them running.
    // In a cluster, only those no live server owns (this server owns them from now on).
    const clustered = cluster;
    const recovery = await recoverStaleTurns(store, clustered ? (conversationId) => clustered.ownership.claim(conversationId) : undefined);
    if (recovery.conversations.length > 0 || recovery.failures.length > 0) {
      logger.warn({ conversations: recovery.conversations.length, turns: recovery.turns, droppedApprovals: recovery.approvals, droppedUserInputs: recovery.userInputs, failures: recovery.failures }, 'turns left running by a server that stopped were recorded as interrupted');
    }
    // The server's own directories: hidden from sandboxes, and kept from members' work locations.
    const protectedDirectories = [paths.configDir, paths.dataDir, paths.stateDir];
    // Limits given by the caller (tests, embedding) win over server.yaml, also after a reload;
    // the HTTP server reads the origins array on every upgrade, so a reload refills it in place.
    const targets: ConfigurationTargets = {
      configDir: paths.configDir,
      ...(options.limits ? { limits: options.limits } : {}),
      allowedOrigins,
      extraOrigins: options.allowedOrigins ?? [],
      // Sandboxed executors must never see the server's own directories (its token is there).
      protectedDirectories,
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
    // Every conversation this server opens or creates is claimed first (schedules and imports too).
    if (cluster) runtime.extensions.ownership = cluster.ownership;
    applyConfiguration(runtime, configuration, targets, configuration, await loadPluginSet(paths.configDir, configuration.plugins));
    connectProjectsToRuntime(opened, runtime, processRecords, options.discoverModels ?? opened.signInEnabled);
    connectCostsToRuntime(opened, runtime, logger);
    const schedules = await startSchedules(paths.dataDir, runtime, logger, {
      // A scheduled run's cost counts for the user its task acts for.
      taskTurnStarted: (turnId, userId) => {
        if (userId !== undefined) opened.costs.attribute(turnId, userId);
      },
      // A task runs only while its user can still reach its conversation, and start a turn there.
      runRefusal: taskUserRefusal(opened, (caller, conversationId) => turnStartRefusal(caller, { platform: opened, runtime, context: serverConfinementContext(runtime, protectedDirectories, opened) }, conversationId)),
    });
    opened.onUserRemoved(async (userId) => {
      const disabled = await schedules.service.disableTasksOfUser(userId, `user ${userId} was removed`);
      if (disabled.length > 0) logger.info({ userId, tasks: disabled.length }, 'scheduled tasks of the removed user disabled');
    });
    // Methods naming only a task id are checked against the task's conversation.
    opened.access.taskConversations = schedules.service;
    const connections = new Set<RpcConnection>();
    const config = new ConfigService(targets, configuration, runtime, logger, (status) => {
      for (const connection of connections) connection.notify({ method: 'config/updated', params: status });
    });
    config.watch();
    // A person is watching a conversation when a connection acting as them is subscribed to it.
    const notifications = new NotificationService({
      runtime,
      platform: opened,
      settings: () => config.current.server.notifications,
      watching: (owner, conversationId) => [...connections].some((connection) => stateOwner(connection.caller) === owner && connection.isSubscribed(conversationId)),
      logger,
    });
    // The agent's browser: read from the configuration in force, so a reload applies to the next start.
    const browsers = new BrowserService(() => config.current.server.browser, logger, processRecords);
    attachBrowserService(runtime, browsers);
    const connectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connectionLimits };
    runtime.attachments = attachments;
    const sessions = new WebSessions(Date.now, path.join(paths.dataDir, WEB_SESSIONS_FILE), (message) => logger.warn(message));
    const signInLink = (): SignInLink => {
      const { code, expiresAt } = sessions.createSignInCode();
      return { url: `${address.webBase}${SIGN_IN_PATH}#token=${code}`, expiresAt };
    };
    const web: WebRouteOptions = { webRoot: options.webRoot ?? path.join(PACKAGE_ROOT, 'dist', 'www'), sessions, token, allowedOrigins, cookieName: sessionCookieName(address.port), signInLink };
    const platformRoutes: PlatformRouteOptions | undefined = opened.signInEnabled ? { platform: opened, oidc: new OidcSignIn(platformSettings.oidc), allowedOrigins, cookies: platformCookieNames(address.port), logger } : undefined;
    if (platformRoutes) web.platform = platformRoutes;
    if (!opened.settings.publicUrl) opened.linkBase = address.webBase;
    const stopWatchingAccess = watchPlatformAccess(opened, runtime, connections, logger, options.platformAccessSweepMs);
    const hasSession = (request: IncomingMessage) => hasWebSession(request, web);
    // Channels of other servers act as the caller those servers checked; they never authenticate with the token.
    cluster?.serve(runtime, (socket, transport, caller) => new RpcConnection(socket as unknown as WebSocket, transport as unknown as Duplex, runtime, config, { name: 'openvaala', version: VERSION }, logger, { authenticated: true, check: () => false }, connectionLimits, caller, opened));
    const uploads: UploadOptions = { token, allowedOrigins, runtime, attachments: runtime.attachments, logger, hasSession, maxBytes: () => options.maxUploadBytes ?? config.current.server.limits.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES };
    if (platformRoutes) {
      const cookies = platformRoutes.cookies;
      uploads.platform = { ...platformCallers(opened, platformRoutes), access: opened.access, checkCsrf: (request) => checkCsrfToken(request, cookies.csrf) };
    }
    // `@tus/server` loads on the first resumable upload, or for a sweep that finds partial uploads.
    let tusUploads: Promise<TusUploads> | undefined;
    const loadTusUploads = () => (tusUploads ??= import('./tus-uploads.js').then(({ createTusUploads }) => createTusUploads({ ...uploads, dataDir: paths.dataDir, logger })));
    const sweepUploads = async () => {
      const partial = await readdir(path.join(paths.dataDir, TUS_UPLOADS_DIRECTORY)).catch(() => []);
      if (partial.length === 0) return;
      const expired = await (await loadTusUploads()).store.removeOlderThan(TUS_UPLOAD_MAX_AGE_MS);
      if (expired > 0) logger.info({ uploads: expired }, 'resumable uploads left untouched for a day were removed');
    };
    await sweepUploads();
    const uploadSweep = setInterval(() => {
      sweepUploads().catch((error: unknown) => logger.warn({ error: (error as Error).message }, 'removing old resumable uploads failed'));
    }, TUS_UPLOAD_SWEEP_MS);
    uploadSweep.unref();
    const handleTusUpload = (request: IncomingMessage, response: ServerResponse) => {
      loadTusUploads().then(
        (endpoint) => endpoint.handle(request, response),
        (error: unknown) => {
          logger.error({ error: (error as Error).message }, 'the resumable upload endpoint could not be loaded');
          if (!response.headersSent) response.writeHead(503, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: 'resumable uploads are not available: the endpoint could not be loaded (see the server log)' }));
        },
      );
    };
    return {
      runtime,
      health: () => ({ pid: process.pid, version: VERSION, connections: connections.size, sendBufferBytes: [...connections].reduce((total, connection) => total + connection.bufferedBytes, 0), sendBuffers: [...connections].map((connection) => connection.sendBuffer), pendingServerRequests: [...connections].reduce((total, connection) => total + connection.pendingServerRequests, 0) }),
      platform: opened,
      ...(platformRoutes ? platformCallers(opened, platformRoutes) : {}),
      onConnection: (socket, transport, request, authenticated, caller) => {
        const authentication = { authenticated, check: (given: string) => sameSecret(given, token) };
        const connection = new RpcConnection(socket, transport, runtime, config, { name: 'openvaala', version: VERSION }, logger, authentication, connectionLimits, options.resolveCaller?.(request) ?? caller, opened);
        connection.routing = cluster?.routing;
        connections.add(connection);
        socket.on('close', () => connections.delete(connection));
      },
      routes: {
        [UPLOAD_PATH]: { methods: ['POST'], handle: (request, response) => handleUpload(request, response, uploads) },
        [TUS_UPLOAD_PATH]: { methods: ['POST', 'OPTIONS'], handle: handleTusUpload },
        [`${TUS_UPLOAD_PATH}/`]: { methods: ['HEAD', 'PATCH', 'DELETE', 'OPTIONS'], pattern: `${TUS_UPLOAD_PATH}/{uploadId}`, handle: handleTusUpload },
        [FAVICON_PATH]: { methods: ['GET', 'HEAD'], handle: serveFavicon },
      },
      upgrades: cluster?.upgrades ?? {},
      allowedHosts: cluster?.allowedHosts ?? [],
      web: (request, response, pathname) => handleWebRequest(request, response, pathname, web),
      webRoutes: () => webRoutes(web),
      hasSession,
      signInLink,
      shutdown: async () => {
        clearInterval(uploadSweep);
        stopWatchingAccess();
        config.close();
        await runtime.shutdown();
        await browsers.close();
        processRecords.close();
        await schedules.close();
        await notifications.close();
        // After the turns ended: the other servers' clients heard the interruptions first.
        cluster?.shutdown();
      },
      closeStorage,
    };
  } catch (error) {
    await closeStorage();
    throw error;
  }
}
