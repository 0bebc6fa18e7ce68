/**
 * `openvaala server status | stop | restart`: the local runtime server of a data directory,
 * found through `runtime-server.yaml` (SPEC §2).
 */
import { RuntimeClient } from '../client/runtime-client.js';
import type { OpenVaalaPaths } from '../config/paths.js';
import { processExists } from '../server/data-dir-lock.js';
import type { ServerInfo } from '../server/server-info.js';
import type { OutputStreams } from './exec-output.js';
import { ensureServer, findServer } from './server-discovery.js';
import { describeSpan, localDateTime } from '../client/time-text.js';

/** Time given to a server to stop after SIGTERM before `stop` reports failure, ms. */
const STOP_TIMEOUT_MS = 30_000;

async function serverStatus(info: ServerInfo): Promise<{ busy: boolean; version: string; configDir: string } | undefined> {
  try {
    const client = await RuntimeClient.connect({ url: info.url, token: info.token, clientName: 'openvaala-server' });
    try {
      return await client.request('server/status', {});
    } finally {
      await client.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * Prints where the server runs and what it uses.
 * @returns 0 when a server runs, 3 when none does (as `systemctl status` and LSB init scripts do)
 */
export async function runServerStatus(paths: OpenVaalaPaths, streams: OutputStreams): Promise<number> {
  // Said here, where the question is whether a server runs; other commands start one, which overwrites the file and logs it.
  const info = await findServer(paths, { onDamaged: (damaged) => streams.stderr.write(`openvaala: server status: ${damaged.message}; taken as describing no server\n`) });
  if (!info) {
    streams.stdout.write(`no runtime server runs for data directory ${paths.dataDir}\n`);
    return 3;
  }
  const status = await serverStatus(info);
  streams.stdout.write(
    [
      `runtime server running: pid ${info.pid}, ${info.url}`,
      `  data directory:          ${info.dataDir}`,
      `  configuration directory: ${status?.configDir ?? info.configDir ?? 'unknown'}`,
      `  started:                 ${localDateTime(info.startedAt, { seconds: true })} (${describeSpan(Date.now() - info.startedAt)} ago)`,
      ...(status ? [`  version:                 ${status.version}`, `  work running:            ${status.busy ? 'yes' : 'no'}`] : []),
    ].join('\n') + '\n',
  );
  return 0;
}

/**
 * Stops the server with SIGTERM (running turns are recorded as interrupted) and waits for it
 * to exit.
 * @returns 0 when it stopped or none ran, 1 when it did not exit in time
 */
export async function runServerStop(paths: OpenVaalaPaths, streams: OutputStreams): Promise<number> {
  const info = await findServer(paths);
  if (!info) {
    streams.stdout.write(`no runtime server runs for data directory ${paths.dataDir}\n`);
    return 0;
  }
  const status = await serverStatus(info);
  process.kill(info.pid, 'SIGTERM');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (processExists(info.pid)) {
    if (Date.now() > deadline) {
      streams.stderr.write(`openvaala: server stop: the runtime server (pid ${info.pid}) did not exit within ${STOP_TIMEOUT_MS / 1000} s of SIGTERM\n`);
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  streams.stdout.write(`stopped the runtime server (pid ${info.pid})${status?.busy ? '; its running turns were recorded as interrupted' : ''}\n`);
  return 0;
}

/**
 * Stops the server (if one runs) and starts a new one in the background with this process's
 * environment, on the same configuration directory unless another one is given. The
 * configuration is checked first: a server refusing to start on it would leave none running,
 * where the running one keeps the last configuration that loaded.
 * @returns 0 when the new server answers, 1 otherwise (also when the configuration has problems: nothing is stopped then)
 */
export async function runServerRestart(paths: OpenVaalaPaths, configDirGiven: boolean, streams: OutputStreams): Promise<number> {
  const running = await findServer(paths);
  const configDir = configDirGiven ? paths.configDir : (running?.configDir ?? paths.configDir);
  const { ConfigurationError, loadConfiguration } = await import('../config/configuration.js');
  try {
    await loadConfiguration(configDir);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    streams.stderr.write(`${error.message}
not restarted: a new server would refuse this configuration${running ? `; the running one (pid ${running.pid}) keeps the configuration it loaded last` : ''}
`);
    return 1;
  }
  const stopped = await runServerStop(paths, streams);
  if (stopped !== 0) return stopped;
  const info = await ensureServer({ ...paths, configDir });
  streams.stdout.write(`started the runtime server (pid ${info.pid}) on ${info.url} with this environment; it exits after 10 idle minutes\n`);
  return 0;
}
