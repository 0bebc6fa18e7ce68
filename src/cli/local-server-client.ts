/**
 * A client of the local server for one command: the server found (or started) on the command's
 * data directory, connected for the work and closed after it. An error of the work names files
 * by their path in that data directory (see `data-directory-text.ts`).
 */
import type { OpenVaalaPaths } from '../config/paths.js';
import { RuntimeClient } from '../client/runtime-client.js';
import type { ServerInfo } from '../server/server-info.js';
import { withDataDirectoryShown } from './data-directory-text.js';
import { ensureServer } from './server-discovery.js';

/**
 * Runs `work` with a client of the local server for `paths`, closing the client afterwards; `work`
 * also gets the server's record (its directories, for commands printed for the user).
 * @param requireConfigDir refuse a running server whose configuration directory is another one (an explicit `--config-dir`)
 * @param clientName the name the client gives in `initialize`
 * @throws whatever `work`, the server's start or the connection throws, with `<data dir>/` in its message written as the data directory's path
 */
export async function withLocalServer<T>(paths: OpenVaalaPaths, requireConfigDir: boolean, clientName: string, work: (client: RuntimeClient, server: ServerInfo) => Promise<T>): Promise<T> {
  const server = await ensureServer(paths, { requireConfigDir });
  const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName });
  try {
    return await work(client, server);
  } catch (error) {
    throw withDataDirectoryShown(error, paths.dataDir);
  } finally {
    await client.close();
  }
}
