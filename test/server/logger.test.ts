import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';

/** A logger at `level` whose lines are parsed into `lines`. */
function capturing(level: string): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return { logger, lines };
}

describe('server logger', () => {
  const directories: string[] = [];
  afterEach(() => {
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  it('writes pino-format JSON lines: numeric level, time, pid, details, then msg', () => {
    const { logger, lines } = capturing('info');
    const before = Date.now();
    logger.warn({ conversationId: 'c1', count: 2 }, 'something happened');
    logger.info('plain message');
    expect(lines).toHaveLength(2);
    expect(Object.keys(lines[0] as object)).toEqual(['level', 'time', 'pid', 'conversationId', 'count', 'msg']);
    expect(lines[0]).toMatchObject({ level: 40, pid: process.pid, conversationId: 'c1', count: 2, msg: 'something happened' });
    expect(lines[0]?.time).toBeGreaterThanOrEqual(before);
    expect(lines[1]).toMatchObject({ level: 30, msg: 'plain message' });
  });

  it('drops lines below its level, and changing the level takes effect at once', () => {
    const { logger, lines } = capturing('warn');
    logger.debug({}, 'debug');
    logger.info({}, 'info');
    logger.error({}, 'error');
    logger.fatal({}, 'fatal');
    expect(lines.map((line) => line.level)).toEqual([50, 60]);
    logger.level = 'debug';
    logger.debug({}, 'now written');
    expect(lines.at(-1)).toMatchObject({ level: 20, msg: 'now written' });
    const silent = capturing('silent');
    silent.logger.fatal({}, 'never');
    expect(silent.lines).toEqual([]);
  });

  it('children add their bindings to every line and keep the level', () => {
    const { logger, lines } = capturing('info');
    const child = logger.child({ component: 'storage' }).child({ conversationId: 'c9' });
    child.info({ step: 1 }, 'opened');
    child.debug({}, 'dropped');
    expect(lines).toEqual([expect.objectContaining({ level: 30, component: 'storage', conversationId: 'c9', step: 1, msg: 'opened' })]);
  });

  it('logs errors with type, message and stack, under err when given alone', () => {
    const { logger, lines } = capturing('info');
    const error = Object.assign(new RangeError('too far', { cause: new Error('root cause') }), { code: 'E_FAR' });
    logger.error(error);
    logger.error({ error }, 'with details');
    expect(lines[0]).toMatchObject({ level: 50, msg: 'too far', err: { type: 'RangeError', message: 'too far', code: 'E_FAR', cause: { message: 'root cause' } } });
    expect(String((lines[0]?.err as { stack: string }).stack)).toContain('RangeError: too far');
    expect(lines[1]).toMatchObject({ msg: 'with details', error: { type: 'RangeError', message: 'too far' } });
  });

  it('never throws on details JSON cannot hold: bigints as strings, cycles cut, a throwing getter leaves the message', () => {
    const { logger, lines } = capturing('info');
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    logger.info({ size: 10n, cyclic }, 'odd details');
    const throwing = {
      get broken(): string {
        throw new Error('getter failed');
      },
    };
    logger.warn({ throwing }, 'still logged');
    expect(lines[0]).toMatchObject({ size: '10', cyclic: { name: 'loop', self: '[Circular]' }, msg: 'odd details' });
    expect(lines[1]).toMatchObject({ level: 40, msg: 'still logged', logError: 'details not serializable: getter failed' });
  });

  it('refuses an unknown level, naming it and the accepted ones', () => {
    expect(() => createLogger('verbose')).toThrow(/unknown log level "verbose" \(OPENVAALA_LOG_LEVEL or the level given\): use one of trace, debug, info, warn, error, fatal, silent/);
    const { logger } = capturing('info');
    expect(() => (logger.level = 'loud')).toThrow(/unknown log level "loud"/);
    expect(logger.level).toBe('info');
  });

  it('writes whole lines to a file descriptor as they are logged', () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-logger-'));
    directories.push(directory);
    const file = path.join(directory, 'server.log');
    const fd = openSync(file, 'w');
    try {
      const logger = createLogger('info', fd);
      logger.info({ n: 1 }, 'first');
      logger.warn({ text: 'ü'.repeat(50_000) }, 'second');
      // Read before any flush or close: nothing is buffered.
      const written = readFileSync(file, 'utf8').split('\n');
      expect(written).toHaveLength(3);
      expect(JSON.parse(written[0] as string)).toMatchObject({ n: 1, msg: 'first' });
      expect((JSON.parse(written[1] as string) as { text: string }).text).toHaveLength(50_000);
      expect(written[2]).toBe('');
    } finally {
      closeSync(fd);
    }
  });
});
