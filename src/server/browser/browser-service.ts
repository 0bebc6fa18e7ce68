/**
 * The agent's browser (docs/browser.md): one Chromium per working directory on the server's
 * machine, with its profile in `<directory>/.openvaala/browser-profile`, started on first use
 * (an MCP tool call of the agent, or a take-over from a client), stopped when nobody used it
 * for `idleTimeoutMs`, on request (`browser/stop`) and when the server shuts down. The agent
 * reaches it through chrome-devtools-mcp attached to the browser's loopback DevTools port;
 * clients see it through screenshots and drive it through DevTools input events.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { StdioMcpServerConfig } from '../../config/mcp.js';
import type { ServerSettings } from '../../config/server-settings.js';
import type { ProcessTracker } from '../../executors/process-tracker.js';
import type { Logger } from '../../logger.js';
import type { BuiltInMcpServer } from '../../mcp/client-manager.js';
import type { Runtime } from '../../runtime/runtime.js';
import { makeDirectory } from '../../make-directory.js';
import { ChromiumProcess, freePort } from './chromium-process.js';
import { listPages, openPage, type PageTarget } from './devtools-connection.js';

/** The `browser` section of `server.yaml`. */
export type BrowserSettings = ServerSettings['browser'];

/** Name of the built-in MCP server that offers the browser (tools `mcp__browser__<tool>`). */
export const BROWSER_MCP_SERVER = 'browser';
/** Where a working directory keeps its browser profile, relative to the directory. */
export const BROWSER_PROFILE_DIRECTORY = path.join('.openvaala', 'browser-profile');
/** Time allowed for Chromium to listen for DevTools, ms. */
const BROWSER_STARTUP_TIMEOUT_MS = 20_000;

/** Why a browser stopped. */
export type BrowserStopReason = 'idle' | 'request' | 'shutdown';

/** The chrome-devtools-mcp program (its `bin`), run by this Node.js. */
function devtoolsMcpProgram(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('chrome-devtools-mcp/package.json')), 'build', 'src', 'bin', 'chrome-devtools-mcp.js');
}

/** The browser of one working directory. */
export class ProjectBrowser {
  private process: ChromiumProcess | undefined;
  private starting: Promise<ChromiumProcess> | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /**
   * The DevTools port this directory's browser listens on, chosen once and kept across
   * restarts, so the MCP servers attached to it (which connect on each tool call) reach the
   * next browser without being restarted.
   */
  private reservedPort: number | undefined;
  private readonly portListeners = new Set<() => void>();

  /**
   * @param directory the working directory (absolute, on the server's machine)
   * @param settings the `browser` settings in force (read at each start)
   */
  constructor(
    readonly directory: string,
    private readonly settings: () => BrowserSettings,
    private readonly logger: Logger | undefined,
    private readonly tracker?: ProcessTracker,
  ) {}

  /** The profile directory: cookies, storage and history survive restarts of the browser. */
  get profileDirectory(): string {
    return path.join(this.directory, BROWSER_PROFILE_DIRECTORY);
  }

  /** True while Chromium runs. */
  get running(): boolean {
    return this.process?.running === true;
  }

  /** Chromium's process id (the leader of its process group) while running. */
  get pid(): number | undefined {
    return this.running ? this.process?.pid : undefined;
  }

  /** The DevTools port while running. */
  get port(): number | undefined {
    return this.running ? this.process?.port : undefined;
  }

  /**
   * The port the browser listens on when it runs (chosen on first ask); the browser need not run.
   * @throws Error when no loopback port can be had
   */
  async debuggingPort(): Promise<number> {
    this.reservedPort ??= await freePort();
    if (this.reservedPort === undefined) throw new Error('no free port on 127.0.0.1 for the browser');
    return this.reservedPort;
  }

  /** Calls `listener` when the browser's port changed (the old one was taken by another program); returns the unsubscribe function. */
  onPortChange(listener: () => void): () => void {
    this.portListeners.add(listener);
    return () => this.portListeners.delete(listener);
  }

  /**
   * Starts Chromium unless it runs (one start at a time), and counts as use.
   * @returns the DevTools port on 127.0.0.1
   * @throws Error naming the executable and the reason when it cannot be started
   */
  async ensureRunning(): Promise<number> {
    this.touch();
    if (this.process?.running) return this.process.port;
    this.starting ??= this.launch().finally(() => {
      this.starting = undefined;
    });
    return (await this.starting).port;
  }

  private async launch(): Promise<ChromiumProcess> {
    const settings = this.settings();
    let port = await this.debuggingPort();
    if ((await freePort(port)) === undefined) {
      // Another program took the port while the browser was stopped: the MCP servers pointing at it must be restarted.
      this.reservedPort = undefined;
      port = await this.debuggingPort();
      for (const listener of this.portListeners) listener();
    }
    // The profile holds cookies and history: it must never end up in the project's repository.
    await makeDirectory(this.profileDirectory);
    await writeFile(path.join(this.profileDirectory, '.gitignore'), '*\n', { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    const started = await ChromiumProcess.launch({ executablePath: settings.executablePath, port, profileDirectory: this.profileDirectory, headless: settings.headless, startupTimeoutMs: BROWSER_STARTUP_TIMEOUT_MS, ...(this.tracker ? { tracker: this.tracker } : {}) });
    this.process = started;
    this.logger?.info({ directory: this.directory, pid: started.pid, port: started.port }, 'browser started');
    const exited = () => {
      if (this.process !== started) return;
      this.process = undefined;
      this.clearIdleTimer();
      this.logger?.info({ directory: this.directory }, 'browser exited');
    };
    started.exited.then(exited, exited);
    this.touch();
    return started;
  }

  /** Counts as use: the idle time starts again. */
  touch(): void {
    this.clearIdleTimer();
    this.idleTimer = setTimeout(() => {
      this.logger?.info({ directory: this.directory, idleTimeoutMs: this.settings().idleTimeoutMs }, 'browser idle: stopping it');
      this.stop('idle').catch((error: unknown) => this.logger?.warn({ directory: this.directory, error: (error as Error).message }, 'stopping the idle browser failed'));
    }, this.settings().idleTimeoutMs);
    this.idleTimer.unref();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /**
   * Stops Chromium (the profile is kept). The MCP servers attached to it stay: their next tool
   * call starts the browser again on the same port.
   * @returns false when it was not running
   */
  async stop(reason: BrowserStopReason): Promise<boolean> {
    this.clearIdleTimer();
    const running = this.process ?? (await this.starting?.catch(() => undefined));
    if (running === undefined) return false;
    this.process = undefined;
    await running.close();
    this.logger?.info({ directory: this.directory, reason }, 'browser stopped');
    return true;
  }

  /**
   * The page the browser shows (its most recently focused tab); a browser whose tabs were all
   * closed gets a blank one.
   * @throws Error when the browser is not running
   */
  async currentPage(): Promise<PageTarget> {
    const port = this.port;
    if (port === undefined) throw new Error('the browser is not running');
    const [page] = await listPages(port);
    return page ?? openPage(port, 'about:blank');
  }

  /**
   * The stdio MCP entry of chrome-devtools-mcp attached to this browser: usage statistics and
   * CrUX lookups off (nothing leaves the machine), pages addressed without ids, file tools
   * limited to the working directory.
   */
  mcpServerConfig(port: number): StdioMcpServerConfig {
    return {
      transport: 'stdio',
      command: process.execPath,
      args: [devtoolsMcpProgram(), `--browserUrl=http://127.0.0.1:${port}`, '--no-usage-statistics', '--no-performance-crux', '--no-page-id-routing', `--workspace=${this.directory}`],
      env: { CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' },
      cwd: this.directory,
      executor: 'local',
    };
  }
}

/** The browsers of every working directory that used one. */
export class BrowserService {
  private readonly browsers = new Map<string, ProjectBrowser>();

  /**
   * @param settings the `browser` section of `server.yaml` in force (read when used, so a
   *   reload applies to the next start and to conversations opened afterwards)
   * @param tracker records each browser's process group (crash cleanup, as for commands)
   */
  constructor(
    private readonly settings: () => BrowserSettings,
    private readonly logger?: Logger,
    private readonly tracker?: ProcessTracker,
  ) {}

  /** True when `server.yaml` enables the browser. */
  get enabled(): boolean {
    return this.settings().enabled;
  }

  /** The browser of a working directory (made on first ask; nothing starts). */
  browserFor(directory: string): ProjectBrowser {
    const resolved = path.resolve(directory);
    let browser = this.browsers.get(resolved);
    if (browser === undefined) {
      browser = new ProjectBrowser(resolved, this.settings, this.logger, this.tracker);
      this.browsers.set(resolved, browser);
    }
    return browser;
  }

  /**
   * The built-in MCP server `browser` for a conversation working in `directory` on executor
   * `executorKind`; none when the browser is disabled, the conversation works elsewhere than
   * on the server's machine, or in a sandbox.
   */
  mcpServersFor(directory: string, executorKind: string, sandboxed: boolean): BuiltInMcpServer[] {
    // The browser runs outside any sandbox, so a sandboxed conversation does not get one.
    if (!this.enabled || executorKind !== 'local' || sandboxed) return [];
    const browser = this.browserFor(directory);
    return [
      {
        name: BROWSER_MCP_SERVER,
        // The MCP server starts without the browser (it connects on each tool call); the browser starts before the first call.
        resolveConfig: async () => browser.mcpServerConfig(await browser.debuggingPort()),
        beforeCall: async () => void (await browser.ensureRunning()),
        afterCall: () => browser.touch(),
        onRestartNeeded: (listener) => browser.onPortChange(listener),
      },
    ];
  }

  /** Stops every browser (server shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.browsers.values()].map((browser) => browser.stop('shutdown')));
  }
}

const services = new WeakMap<Runtime, BrowserService>();

/** Attaches the browser service to a runtime: conversations get the `browser` MCP server, handlers find the service. */
export function attachBrowserService(runtime: Runtime, service: BrowserService): void {
  services.set(runtime, service);
  runtime.extensions.builtInMcpServers = (workspace) => service.mcpServersFor(workspace.root, workspace.executor.kind, (workspace.executor as { sandbox?: unknown }).sandbox !== undefined);
}

/** The browser service of a runtime, if the server attached one. */
export function browserServiceOf(runtime: Runtime): BrowserService | undefined {
  return services.get(runtime);
}
