/**
 * Why a server could not listen on its address, in words a person can act on, and which option
 * (`--host` or `--port`) names what is wrong. Shared by `openvaala serve` and the mock provider.
 */

/** Why each refusal to listen happened, and whether the address (`host`) or the port is to blame. */
const LISTEN_FAILURES: Record<string, { option: 'host' | 'port'; reason: string }> = {
  EADDRNOTAVAIL: { option: 'host', reason: 'not an address of this machine' },
  ENOTFOUND: { option: 'host', reason: 'no such host name' },
  EAI_AGAIN: { option: 'host', reason: 'the host name could not be looked up' },
  EAFNOSUPPORT: { option: 'host', reason: 'this machine does not support that kind of address' },
  EADDRINUSE: { option: 'port', reason: 'already in use (another server listens there; 0 picks a free port)' },
  EACCES: { option: 'port', reason: 'not allowed' },
};

/** The server could not listen on its address; `option` says which of `host` and `port` is to blame. */
export class ListenError extends Error {
  constructor(
    message: string,
    /** The system's error code, e.g. `EADDRINUSE`. */
    readonly code: string | undefined,
    readonly host: string,
    readonly port: number,
    /** Which option names what is wrong; undefined when the system does not tell. */
    readonly option: 'host' | 'port' | undefined,
    /** What is wrong, in words, without the address (e.g. `already in use (…)`). */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ListenError';
  }

  /** Describes the error `listen` gave for `host` and `port`. */
  static from(error: unknown, host: string, port: number): ListenError {
    const code = (error as NodeJS.ErrnoException).code;
    const known = code !== undefined ? LISTEN_FAILURES[code] : undefined;
    const privileged = code === 'EACCES' && port > 0 && port < 1024 ? '; ports below 1024 need privileges, 0 picks a free port' : '';
    const reason = known ? `${known.reason} (${code}${privileged})` : (error as Error).message;
    return new ListenError(`cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}: ${reason}`, code, host, port, known?.option, reason, { cause: error });
  }
}
