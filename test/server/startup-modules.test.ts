/**
 * What the real `openvaala serve` (the bundled command line) loads before it listens and what
 * it holds once idle: the start-up and idle-memory figures of docs/performance.md depend on
 * both. A module-loading hook (`module.register`, and `Module._load` for CommonJS) records every
 * module in order, and a `listening` marker where the HTTP server starts to listen.
 */
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findServer } from '../../src/cli/server-discovery.js';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { moduleRecorderArguments, packageOf, recordedBuiltins, recordedFiles, totalBytes } from '../helpers/module-recorder.js';

/**
 * Code of the bundled command line loaded before listening, at most (bytes): about 62 KB at the
 * time of writing, most of it the HTTP server and the data-directory lock. A plain `serve` line
 * is read without the command table (commander and every command's declaration, about 137 KB).
 */
const PRE_LISTEN_CODE_BUDGET_BYTES = 80_000;

/**
 * Node.js modules not needed to answer `/healthz`, each a few ms of a cold start: `node:crypto`
 * (the server token, made once listening), `node:v8` and `node:vm` (the idle-memory watch),
 * `node:worker_threads` (pino's transports; pino loads at the first log line).
 */
const BUILTINS_AFTER_LISTENING = ['node:crypto', 'node:v8', 'node:vm', 'node:worker_threads'];

/** Packages an idle embedded server must not hold (each is loaded on first use). */
const LOADED_ON_FIRST_USE = ['pg', 'openid-client', '@node-rs/argon2', 'ai', '@ai-sdk/openai', '@ai-sdk/anthropic', '@modelcontextprotocol/sdk', '@agentclientprotocol/sdk', 'ssh2', 'just-bash', 'node-pty', '@tus/server', 'web-push'];

describe('openvaala serve start-up', () => {
  let environment: TestEnvironment;
  beforeEach(async () => {
    environment = await createTestEnvironment('responses:\n  - text: "ok"\n');
  });
  afterEach(async () => {
    await environment.dispose();
  });

  it('listens having loaded neither the command table nor anything but the HTTP server and the lock, and holds no first-use package once idle', async () => {
    const child = spawn(process.execPath, [...moduleRecorderArguments(environment.root), CLI_EXECUTABLE, 'serve', '--port', '0'], { env: environment.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await expect.poll(async () => (await findServer(environment.paths))?.pid, { timeout: 20_000, interval: 50 }).toBe(child.pid);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    const lines = output.split('\n');
    const listening = lines.indexOf('LISTENING');
    expect(listening, output).toBeGreaterThan(0);
    const beforeListening = recordedFiles(lines.slice(0, listening));
    const all = recordedFiles(lines);

    // Before listening: no package from node_modules, no logger (pino), none of the Node.js
    // modules listed above, and a bounded amount of the bundle.
    expect(beforeListening.filter((address) => packageOf(address) !== undefined)).toEqual([]);
    const builtinsBefore = recordedBuiltins(lines.slice(0, listening));
    expect(builtinsBefore.filter((name) => BUILTINS_AFTER_LISTENING.includes(name))).toEqual([]);
    expect(beforeListening.filter((address) => /\/dist\/cli\/logger-/.test(address))).toEqual([]);
    const bundled = beforeListening.filter((address) => address.includes('/dist/cli/'));
    expect(bundled.some((address) => address.endsWith('/dist/cli/main.js'))).toBe(true);
    expect(bundled.filter((address) => /\/dist\/cli\/program-/.test(address))).toEqual([]);
    expect(totalBytes(bundled)).toBeLessThanOrEqual(PRE_LISTEN_CODE_BUDGET_BYTES);

    // Once open: SQLite is there (the embedded storage), the first-use packages are not.
    const packages = new Set(all.map(packageOf).filter((name) => name !== undefined));
    expect(packages.has('better-sqlite3')).toBe(true);
    expect(LOADED_ON_FIRST_USE.filter((name) => packages.has(name))).toEqual([]);
  });
});
