/**
 * `openvaala acp`: serves the Agent Client Protocol (ACP v1, https://agentclientprotocol.com)
 * on stdin/stdout, so an editor such as Zed uses OpenVaala as its agent. Finds or starts the
 * local server as `openvaala exec` does and translates between the editor and the runtime
 * protocol (`src/adapters/acp/`). Stdout carries only ACP messages; diagnostics go to stderr.
 * Runs until the editor closes stdin or the server connection ends.
 */
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { AcpBridge } from '../adapters/acp/bridge.js';
import { RuntimeClient } from '../client/runtime-client.js';
import { resolvePaths } from '../config/paths.js';
import { ensureServer } from './server-discovery.js';
import { missingServerEnvironment } from './server-environment.js';

/** Options of `openvaala acp`. */
export interface AcpOptions {
  configDir?: string;
  dataDir?: string;
}

/**
 * Serves one editor until its input ends.
 * @returns the exit code: 0 when the editor closed the connection, 1 when the server connection ended first
 * @throws Error when the server cannot be found or started
 */
export async function runAcp(options: AcpOptions, streams: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }): Promise<number> {
  const paths = resolvePaths({ ...(options.configDir ? { configDir: options.configDir } : {}), ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  const server = await ensureServer(paths, { requireConfigDir: options.configDir !== undefined });
  const runtime = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'openvaala-acp', capabilities: { approvals: true, userInput: false, deltas: true } });
  // A missing provider key is said once, where the editor's log shows it; prompts then fail with the server's message.
  const missing = await missingServerEnvironment(runtime, server, paths.configDir, undefined).catch(() => undefined);
  if (missing) streams.stderr.write(`openvaala acp: ${missing}\n`);
  const bridge = new AcpBridge(runtime);
  const stream = acp.ndJsonStream(Writable.toWeb(streams.stdout as Writable) as WritableStream<Uint8Array>, Readable.toWeb(streams.stdin as Readable) as ReadableStream<Uint8Array>);
  const connection = bridge.app().connect(stream);
  let leaving = false;
  const serverGone = new Promise<number>((resolve) => {
    runtime.onClose((error) => {
      // Closing it ourselves once the editor left is no news.
      if (!leaving) streams.stderr.write(`openvaala acp: the runtime server closed the connection (${error.message})\n`);
      resolve(1);
    });
  });
  const code = await Promise.race([connection.closed.then(() => 0), serverGone]);
  leaving = true;
  connection.close();
  await runtime.close();
  // Without a server there is nothing to serve: stop reading, so the process can end.
  (streams.stdin as Readable).destroy();
  return code;
}
