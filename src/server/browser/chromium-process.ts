/**
 * One Chromium process with a persistent profile, listening for DevTools on a given loopback
 * port; it is ready once `GET /json/version` answers there. Stopping asks
 * the browser to close (DevTools `Browser.close`, which writes cookies and storage to the
 * profile), then signals its process group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { makeDirectory } from '../../make-directory.js';
import WebSocket from 'ws';
import type { ProcessTracker } from '../../executors/process-tracker.js';

/** How a browser is launched. */
export interface ChromiumLaunchOptions {
  /** The Chromium (or Chrome) executable. */
  executablePath: string;
  /** The DevTools port on 127.0.0.1 (see `freePort`). */
  port: number;
  /** The profile directory (created when missing). */
  profileDirectory: string;
  /** Run without a window (`--headless`). */
  headless: boolean;
  /** Time allowed until the DevTools port is known, ms. */
  startupTimeoutMs: number;
  /** Records the browser's process group, so a server killed before stopping it has it stopped by the next start. */
  tracker?: ProcessTracker;
}

/** Flags for a browser that only talks to what its user opens: no sync, no background traffic to Google services, no first-run dialogs. */
const QUIET_ARGS = ['--no-first-run', '--no-default-browser-check', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-default-apps', '--metrics-recording-only', '--disable-breakpad', '--password-store=basic', '--use-mock-keychain'];

/** How long a browser asked to close may take before its process group is killed, ms. */
const CLOSE_GRACE_MS = 5_000;
/** Bytes of the browser's stderr kept to explain a failed start. */
const STDERR_TAIL_BYTES = 2_000;

/** A running Chromium. */
export class ChromiumProcess {
  private constructor(
    private readonly child: ChildProcess,
    /** The DevTools port on 127.0.0.1. */
    readonly port: number,
    /** The browser-level DevTools WebSocket path (`/devtools/browser/<id>`). */
    private readonly browserPath: string,
    /** Resolves when the process has exited. */
    readonly exited: Promise<void>,
  ) {}

  /** The browser's process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True until the process exits. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Starts Chromium and waits until it listens for DevTools.
   * @throws Error naming the executable and quoting the end of its stderr when it cannot be
   *   started, exits early (e.g. the profile is in use by another browser), or does not listen
   *   within `startupTimeoutMs`
   */
  static async launch(options: ChromiumLaunchOptions): Promise<ChromiumProcess> {
    await makeDirectory(options.profileDirectory);
    const args = [
      ...(options.headless ? ['--headless'] : []),
      // Chromium's sandbox refuses to run as root; other users keep it.
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      ...QUIET_ARGS,
      '--remote-debugging-address=127.0.0.1',
      `--remote-debugging-port=${options.port}`,
      `--user-data-dir=${options.profileDirectory}`,
      'about:blank',
    ];
    const child = spawn(options.executablePath, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: { ...process.env, ...options.tracker?.environment } });
    const pid = child.pid;
    if (pid !== undefined) {
      options.tracker?.started(pid);
      child.once('close', () => options.tracker?.ended(pid));
    }
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const spawnFailure = new Promise<Error>((resolve) => child.once('error', resolve));
    const describe = (reason: string) => new Error(`cannot start the browser ${options.executablePath}: ${reason}${stderr.trim() ? `; its stderr ended with: ${stderr.trim()}` : ''}`);
    const deadline = Date.now() + options.startupTimeoutMs;
    for (;;) {
      const failure = await Promise.race([spawnFailure, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50))]);
      if (failure) throw describe((failure as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such executable' : failure.message);
      const browserPath = await devtoolsBrowserPath(options.port);
      if (browserPath !== undefined && child.exitCode === null) return new ChromiumProcess(child, options.port, browserPath, exited);
      if (child.exitCode !== null || child.signalCode !== null) throw describe(`it exited (${child.exitCode ?? child.signalCode}) before listening for DevTools`);
      if (Date.now() > deadline) {
        killGroup(child);
        throw describe(`it did not listen for DevTools within ${options.startupTimeoutMs} ms`);
      }
    }
  }

  /**
   * Closes the browser: DevTools `Browser.close` first (the profile is written out), then
   * SIGKILL to its process group after `CLOSE_GRACE_MS`. Resolves once it exited.
   */
  async close(): Promise<void> {
    if (!this.running) return this.exited;
    try {
      const socket = new WebSocket(`ws://127.0.0.1:${this.port}${this.browserPath}`, { perMessageDeflate: false });
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
      });
      socket.send(JSON.stringify({ id: 1, method: 'Browser.close' }));
      socket.on('error', () => undefined);
    } catch {
      killGroup(this.child, 'SIGTERM');
    }
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([this.exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_GRACE_MS)))]);
    clearTimeout(timer);
    // Renderers and helpers live in the group; none may outlive the browser.
    killGroup(this.child);
    if (!inTime) await this.exited;
  }
}

/** The browser's DevTools WebSocket path from `GET /json/version`, or undefined while nothing answers on the port. */
async function devtoolsBrowserPath(port: number): Promise<string | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/json/version`, { signal: AbortSignal.timeout(1_000) });
    if (!response.ok) return undefined;
    const { webSocketDebuggerUrl } = (await response.json()) as { webSocketDebuggerUrl?: string };
    return webSocketDebuggerUrl === undefined ? undefined : new URL(webSocketDebuggerUrl).pathname;
  } catch {
    return undefined;
  }
}

/** Signals the process group the browser leads (it was spawned detached); a gone group is fine. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Whether `port` on 127.0.0.1 can be listened on now, or, without `port`, a port that can.
 * @returns the port, or undefined when the given one is taken
 */
export function freePort(port = 0): Promise<number | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(undefined));
    probe.listen(port, '127.0.0.1', () => {
      const chosen = (probe.address() as { port: number }).port;
      probe.close(() => resolve(chosen));
    });
  });
}
