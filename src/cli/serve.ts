/**
 * `openvaala serve`: runs the runtime server in the foreground until SIGTERM or SIGINT, with
 * the options read by commander or by the quick reading of `serve-options.ts`. Both import this
 * module only when `serve` runs; it takes in the code the server needs to listen (the rest is
 * imported once it listens), so it loads as one piece rather than a chain of small ones.
 */
import path from 'node:path';
import { resolvePaths } from '../config/paths.js';
import { fail } from './command-runner.js';
import type { ServeOptions } from './serve-options.js';
import { createDeferredLogger } from '../deferred-logger.js';
import { startRuntimeServer } from '../server/runtime-server.js';

/**
 * Starts the server, prints where it listens and how to sign in, and exits 0 once it stopped.
 * A server that cannot start exits with the code and message of `serve-failure.ts`.
 */
export async function runServe(options: ServeOptions): Promise<void> {
  // pino loads at the first line, not before listening: /healthz answers without it.
  const logger = createDeferredLogger();
  // Last resort only: every turn records its own failures, so a rejection nobody handled is
  // a bug to log, not a reason to drop every conversation this server runs.
  process.on('unhandledRejection', (reason) => logger.error({ error: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) }, 'unhandled promise rejection'));
  const paths = resolvePaths(options);
  let server;
  try {
    server = await startRuntimeServer({
      paths,
      host: options.host,
      port: options.port,
      logger,
      ...(options.exitWhenIdle !== undefined ? { exitWhenIdleMs: options.exitWhenIdle } : {}),
      ...(options.allowOrigin ? { allowedOrigins: options.allowOrigin } : {}),
      ...(options.allowHost ? { allowedHosts: options.allowHost } : {}),
      ...(options.webRoot !== undefined ? { webRoot: path.resolve(options.webRoot) } : {}),
      ...(options.platform ? { platform: true } : {}),
    });
  } catch (error) {
    await logger.written();
    const { describeServeFailure } = await import('./serve-failure.js');
    const failure = describeServeFailure(error, options);
    fail(failure.message, failure.exitCode);
  }
  process.stdout.write(`openvaala runtime server listening on ${server.url} (data dir ${paths.dataDir})\n`);
  // A fresh one-time code, not the server token: the link may end up in a browser's history.
  process.stdout.write(`web UI: ${server.webUrl}\nsign in (link works once, for 5 min; \`openvaala open\` makes a new one): ${server.signInLink().url}\n`);
  if (server.platform.signInEnabled && !(await server.platform.users.hasUsers())) {
    process.stdout.write(`platform mode: no administrator yet; claim it at ${server.webUrl}sign-in or with \`openvaala users claim --email <address>\`\n`);
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      // A stop that fails never resolves `stopped`: the process must still end, not linger unseen.
      server.stop(`received ${signal}`).catch(async (error: unknown) => {
        logger.error({ error: (error as Error).message }, 'stopping the server failed');
        await logger.written();
        process.exit(1);
      });
    });
  }
  await server.stopped;
  await logger.written();
  process.exit(0);
}
