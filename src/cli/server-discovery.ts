/**
 * How clients find the local runtime server (SPEC §2): through `runtime-server.yaml`,
 * starting a detached server when none answers. A server started this way exits by itself
 * after it has been idle (default 10 minutes).
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import path from 'node:path';
import { dataDirServerInfoFile, resolvePaths, serverInfoFile, type OpenVaalaPaths } from '../config/paths.js';
import { makeDirectorySync } from '../make-directory.js';
import { shellQuote } from '../shell-quote.js';
import { CLI_EXECUTABLE } from '../package-info.js';
import { lockHolder, processExists } from '../server/data-dir-lock.js';
import { DATA_DIR_LOCKED_EXIT_CODE } from './exit-codes.js';
import { readServerInfoIfSound, type DamagedServerInfoError, type ServerInfo } from '../server/server-info.js';

/** Default idle time after which a client-started server exits, ms (SPEC §2). */
export const DEFAULT_AUTO_SERVER_IDLE_MS = 10 * 60 * 1000;

/** How long one `/healthz` probe may take, ms. */
const HEALTH_TIMEOUT_MS = 2000;

/**
 * True when the server named by `info` answers `/healthz` with its own pid. Asked with
 * `node:http`, not `fetch`: the first `fetch` of a process loads undici and compiles its HTTP
 * parser (WebAssembly), which alone raised a client command's peak memory by about 20 MiB.
 */
function healthy(info: ServerInfo): Promise<boolean> {
  return new Promise((resolve) => {
    let request: ReturnType<typeof get>;
    try {
      // The token proves the request is ours; with it the server also says its pid.
      request = get(`${info.url}/healthz`, { headers: { authorization: `Bearer ${info.token}` }, timeout: HEALTH_TIMEOUT_MS, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('error', () => resolve(false));
        response.once('end', () => {
          if (response.statusCode !== 200) return resolve(false);
          try {
            resolve((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { pid?: unknown }).pid === info.pid);
          } catch {
            resolve(false);
          }
        });
      });
    } catch {
      // A malformed url in the server file.
      resolve(false);
      return;
    }
    request.once('timeout', () => request.destroy(new Error(`no answer from ${info.url}/healthz within ${HEALTH_TIMEOUT_MS} ms`)));
    request.once('error', () => resolve(false));
  });
}

/**
 * The running server for these paths, if one answers: the one named by the state file when it
 * serves this data dir, else the one named in the data dir itself. A damaged file names no
 * server (the next server start overwrites it).
 * @param options.onDamaged told about each damaged file (its path and what is wrong); default: nothing is said
 */
export async function findServer(paths: OpenVaalaPaths, options: { onDamaged?: (error: DamagedServerInfoError) => void } = {}): Promise<ServerInfo | undefined> {
  for (const file of [serverInfoFile(paths), dataDirServerInfoFile(paths)]) {
    const info = readServerInfoIfSound(file, (error) => options.onDamaged?.(error));
    if (info && info.dataDir === paths.dataDir && processExists(info.pid) && (await healthy(info))) return info;
  }
  return undefined;
}

/**
 * A server runs on the data directory but with another configuration directory than the one
 * the command was told to use.
 */
export class ServerConfigMismatchError extends Error {
  constructor(
    readonly server: ServerInfo,
    readonly wanted: string,
  ) {
    super(
      `the runtime server on data directory ${server.dataDir} (pid ${server.pid}) uses configuration directory ${server.configDir}, not ${wanted}; ` +
        `stop it first (openvaala server stop --data-dir ${shellQuote(server.dataDir)}) or give another --data-dir`,
    );
    this.name = 'ServerConfigMismatchError';
  }
}

/** Lines of a failed start's message quoted at most: a configuration with many problems names them all, up to this. */
const MAX_FAILURE_LINES = 40;

/**
 * Why a server failed to start, from what it wrote to its log during that start: its failure
 * message (the plain lines, `openvaala: …` and the lines that continue it, one per problem of a
 * configuration), else the message of its last JSON log line.
 * @param written the log's text written since the start
 */
export function failureMessage(written: string): string {
  const lines = written.split('\n').filter((line) => line.trim() !== '');
  const plain = lines.filter((line) => !line.startsWith('{'));
  if (plain.length > 0) {
    const quoted = plain.slice(0, MAX_FAILURE_LINES).join('\n').replace(/^openvaala: (serve: )?/, '');
    return plain.length > MAX_FAILURE_LINES ? `${quoted}\n… ${plain.length - MAX_FAILURE_LINES} more lines` : quoted;
  }
  const last = lines.at(-1) ?? '';
  try {
    return String((JSON.parse(last) as { msg?: unknown }).msg ?? last);
  } catch {
    return last;
  }
}

/**
 * Finds the local server or starts one detached (`openvaala serve --port 0`), logging to
 * `<state-dir>/server.log`, and waits until it answers.
 * @param options.requireConfigDir refuse a running server whose configuration directory is another one (an explicit `--config-dir`)
 * @throws ServerConfigMismatchError when the running server uses another configuration directory than `requireConfigDir`
 * @throws Error with the log file's path when the server does not come up within `timeoutMs`
 * @throws Error naming the state directory when it cannot be created
 */
export async function ensureServer(paths: OpenVaalaPaths, options: { idleExitMs?: number; timeoutMs?: number; requireConfigDir?: boolean } = {}): Promise<ServerInfo> {
  const running = await findServer(paths);
  if (running) {
    // A server written by an older version does not say; it is taken as it is.
    if (options.requireConfigDir && running.configDir !== undefined && running.configDir !== paths.configDir) throw new ServerConfigMismatchError(running, paths.configDir);
    return running;
  }
  try {
    makeDirectorySync(paths.stateDir, 0o700);
  } catch (error) {
    throw new Error(`cannot create the state directory ${paths.stateDir} ($XDG_STATE_HOME/openvaala), where the server's log and address are kept: ${(error as Error).message}`, { cause: error });
  }
  const logFile = path.join(paths.stateDir, 'server.log');
  const log = openSync(logFile, 'a', 0o600);
  // What this start writes comes after this offset (the log holds earlier servers' lines too).
  const startOffset = fstatSync(log).size;
  // The default configuration directory is left for serve to find from the same environment:
  // serve creates it when missing, but refuses an explicit --config-dir that does not exist.
  const configArguments = paths.configDir === resolvePaths({}, process.env).configDir ? [] : ['--config-dir', paths.configDir];
  const child = spawn(
    process.execPath,
    [CLI_EXECUTABLE, 'serve', '--port', '0', '--data-dir', paths.dataDir, ...configArguments, '--exit-when-idle', String(options.idleExitMs ?? DEFAULT_AUTO_SERVER_IDLE_MS)],
    { detached: true, stdio: ['ignore', log, log], env: process.env },
  );
  closeSync(log);
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  child.unref();
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  while (Date.now() < deadline) {
    const info = await findServer(paths);
    if (info) return info;
    // Exit code 3 is a data directory locked by another server: one started by a command run at
    // the same moment, which is about to answer. Any other exit is a failure to report.
    if (exited !== undefined && (exited !== DATA_DIR_LOCKED_EXIT_CODE || lockHolder(paths.dataDir) === undefined)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The server's own last words usually say why (every problem of the configuration, a data dir in use).
  let reason = '';
  try {
    reason = failureMessage(readFileSync(logFile).subarray(startOffset).toString('utf8'));
  } catch {
    // No log to quote.
  }
  throw new Error(`the runtime server did not start${exited !== undefined ? ` (it exited with code ${exited})` : ''}${reason ? `: ${reason}` : ''}; see ${logFile}`);
}
