/**
 * The deferred logger of `openvaala serve`: pino loads at the first line, lines logged before it
 * has loaded reach it in order with the time they were logged, and none is lost when the server
 * exits right after logging (the real process, failing to listen after its first warning).
 */
import { createServer } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDeferredLogger } from '../../src/deferred-logger.js';
import type { Logger } from '../../src/logger.js';
import { createTestEnvironment, runCli, type TestEnvironment } from '../helpers/environment.js';

/** One line pino wrote, parsed. */
interface WrittenLine {
  level: number;
  time: number;
  msg: string;
  [key: string]: unknown;
}

/** A load function whose pino logger writes into `lines`, resolving only when `release` is called. */
function gatedLoad() {
  const lines: WrittenLine[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const load = vi.fn((clock: () => number): Promise<Logger> => gate.then(() => pino({ level: 'debug', timestamp: () => `,"time":${clock()}` }, { write: (line: string) => void lines.push(JSON.parse(line) as WrittenLine) })));
  return { lines, release, load };
}

describe('the deferred logger', () => {
  let environment: TestEnvironment | undefined;
  afterEach(async () => {
    await environment?.dispose();
    environment = undefined;
  });

  it('loads nothing until the first line, and written() then resolves at once', async () => {
    const { load } = gatedLoad();
    const logger = createDeferredLogger(load);
    await logger.written();
    expect(load).not.toHaveBeenCalled();
  });

  it('keeps the lines logged while pino loads and hands them over in order, stamped with the time they were logged', async () => {
    const { lines, release, load } = gatedLoad();
    const logger = createDeferredLogger(load);
    const before = Date.now();
    logger.warn({ host: '0.0.0.0' }, 'first');
    logger.info('second');
    logger.debug({ step: 3 }, 'third');
    const loggedBy = Date.now();
    expect(load).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([]);
    // Let the clock move on before pino arrives, so a line stamped at hand-over would show.
    await expect.poll(() => Date.now(), { interval: 1 }).toBeGreaterThan(loggedBy + 2);
    release();
    await logger.written();
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, 'first'],
      [30, 'second'],
      [20, 'third'],
    ]);
    expect(lines[0]).toMatchObject({ host: '0.0.0.0' });
    expect(lines[2]).toMatchObject({ step: 3 });
    for (const line of lines) {
      expect(line.time).toBeGreaterThanOrEqual(before);
      expect(line.time).toBeLessThanOrEqual(loggedBy);
    }
    // Once loaded, lines go straight to pino, stamped now.
    const now = Date.now();
    logger.error({ code: 'E' }, 'fourth');
    expect(lines[3]).toMatchObject({ level: 50, msg: 'fourth', code: 'E' });
    expect(lines[3]!.time).toBeGreaterThanOrEqual(now);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('flush before pino has loaded calls back once the kept lines are written', async () => {
    const { lines, release, load } = gatedLoad();
    const logger = createDeferredLogger(load);
    logger.info('kept');
    const flushed = new Promise<number>((resolve) => logger.flush(() => resolve(lines.length)));
    release();
    expect(await flushed).toBe(1);
  });

  it('names a failed load on stderr once, drops the kept lines and later ones, and never throws', async () => {
    const written: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const logger = createDeferredLogger(() => Promise.reject(new Error('Cannot find package pino')));
      logger.warn('one');
      logger.error('two');
      await logger.written();
      logger.info('after');
      await logger.written();
      expect(written).toEqual(['openvaala: cannot load the logger (pino): Cannot find package pino; 2 log line(s) dropped\n']);
    } finally {
      write.mockRestore();
    }
  });

  it('in the real server: a warning logged before listening reaches stderr through pino even when the server then fails and exits', async () => {
    environment = await createTestEnvironment('responses: []\n');
    // The port is taken on loopback, so listening on every interface fails right after the warning.
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const started = Date.now();
      const result = await runCli(['serve', '--host', '0.0.0.0', '--port', String(port)], { env: { ...environment.env, OPENVAALA_LOG_LEVEL: 'warn' }, timeoutMs: 15_000 });
      expect(result.code).toBe(1);
      const lines = result.stderr.split('\n').filter((line) => line.startsWith('{'));
      expect(lines).toHaveLength(1);
      const warning = JSON.parse(lines[0]!) as WrittenLine;
      expect(warning).toMatchObject({ level: 40, host: '0.0.0.0' });
      expect(warning.msg).toContain('listening on every network interface');
      expect(warning.time).toBeGreaterThanOrEqual(started);
      expect(result.stderr).toMatch(/openvaala: .*EADDRINUSE/);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
