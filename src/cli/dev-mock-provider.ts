import { loadMockScript, MockProviderServer } from '../models/mock/index.js';
import { ListenError } from '../server/listen-error.js';

/** Options of `openvaala dev mock-provider`. */
export interface MockProviderCommandOptions {
  /** Script file (YAML, or JSON when it ends in `.json`). */
  scriptFile: string;
  /** Port to listen on; 0 picks a free one. */
  port: number;
  /** Loopback host to listen on; default `127.0.0.1`. */
  host?: string;
  /** Where the "listening" line is printed. */
  stdout: NodeJS.WritableStream;
}

/**
 * Runs `openvaala dev mock-provider --script FILE --port N`: loads and validates the script,
 * starts a {@link MockProviderServer} and prints one line
 * `mock provider listening on http://127.0.0.1:PORT/v1`. The server keeps running until the
 * caller stops it.
 *
 * @returns The running server (call `stop()` to end it).
 * @throws `MockScriptError` when the script is unreadable or invalid (the message names the file
 *   and key path); Error naming the option to change (`--port N: cannot listen on …: already in use …`) when the server cannot listen.
 */
export async function runMockProviderCommand(options: MockProviderCommandOptions): Promise<MockProviderServer> {
  const script = await loadMockScript(options.scriptFile);
  const server = new MockProviderServer(script);
  const host = options.host ?? '127.0.0.1';
  let baseURL: string;
  try {
    ({ baseURL } = await server.start({ port: options.port, host }));
  } catch (error) {
    // Said as serve says it: the option to change and why, not "listen EADDRINUSE".
    const failure = ListenError.from(error, host, options.port);
    throw new Error(failure.option === undefined ? failure.message : `--${failure.option} ${failure.option === 'host' ? host : options.port}: ${failure.message}`, { cause: error });
  }
  options.stdout.write(`mock provider listening on ${baseURL}\n`);
  return server;
}
