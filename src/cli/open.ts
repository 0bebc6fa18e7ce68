/**
 * `openvaala open` (docs/web.md): finds the local runtime server (starting one like `exec`
 * does), asks it for a new one-time sign-in link of the web UI with the server token, prints
 * the link and opens it in the default browser (`xdg-open`, `open` or `start`).
 */
import { spawn } from 'node:child_process';
import type { OpenVaalaPaths } from '../config/paths.js';
import type { ServerInfo } from '../server/server-info.js';
import type { OutputStreams } from './exec-output.js';
import { ensureServer } from './server-discovery.js';

/** Path where a token holder gets a new sign-in link (see src/server/web/web-routes.ts). */
const SIGN_IN_LINK_PATH = '/web/v1/api/sign-in-link';

/**
 * Asks a running server for a new one-time sign-in link.
 * @returns the link (`…/web/v1/sign-in#token=<code>`) and when its code expires, ms since the epoch
 * @throws Error naming the server's answer when it refuses or cannot be reached
 */
export async function requestSignInLink(info: Pick<ServerInfo, 'url' | 'token'>): Promise<{ url: string; expiresAt: number }> {
  const response = await fetch(`${info.url}${SIGN_IN_LINK_PATH}`, { method: 'POST', headers: { authorization: `Bearer ${info.token}` }, signal: AbortSignal.timeout(10_000) });
  const body = (await response.json().catch(() => ({}))) as { url?: unknown; expiresAt?: unknown; error?: unknown };
  if (!response.ok || typeof body.url !== 'string' || typeof body.expiresAt !== 'number') {
    throw new Error(`the runtime server at ${info.url} gave no sign-in link (HTTP ${response.status}${typeof body.error === 'string' ? `: ${body.error}` : ''})`);
  }
  return { url: body.url, expiresAt: body.expiresAt };
}

/** The command that opens a URL in the default browser on this platform. */
function browserCommand(url: string): { command: string; args: string[] } {
  if (process.platform === 'darwin') return { command: 'open', args: [url] };
  // `start` is a cmd built-in; its first quoted argument is a window title, hence the "".
  if (process.platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""', url.replace(/&/g, '^&')] };
  return { command: 'xdg-open', args: [url] };
}

/** Starts the browser detached; resolves once it started, rejects naming the command when it cannot. */
function openInBrowser(url: string): Promise<void> {
  const { command, args } = browserCommand(url);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.once('error', (error) => reject(new Error(`cannot start ${command}: ${error.message}`)));
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
}

/**
 * Prints a new sign-in link and, unless `print` is set, opens it in the default browser.
 * @returns 0; 1 when the browser could not be started (the link is printed anyway)
 * @throws Error when no server could be found or started, or it gave no link
 */
export async function runOpen(paths: OpenVaalaPaths, options: { print: boolean; requireConfigDir: boolean }, streams: OutputStreams): Promise<number> {
  const info = await ensureServer(paths, { requireConfigDir: options.requireConfigDir });
  const link = await requestSignInLink(info);
  const minutes = Math.max(1, Math.round((link.expiresAt - Date.now()) / 60_000));
  streams.stdout.write(`${link.url}\n`);
  streams.stderr.write(`sign-in link for the web UI: single use, valid ${minutes} min\n`);
  if (options.print) return 0;
  try {
    await openInBrowser(link.url);
    return 0;
  } catch (error) {
    streams.stderr.write(`openvaala: open: ${(error as Error).message}; open the link above yourself\n`);
    return 1;
  }
}
