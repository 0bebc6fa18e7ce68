/**
 * Moments and ages as the command line and the terminal UI write them: one notation whatever
 * the machine's locale, and no client code that formats a moment through the locale.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeSpan, localDateTime, localTimeOfDay, timeAgo } from '../../src/client/time-text.js';

const savedZone = process.env.TZ;
beforeEach(() => {
  // Node reads TZ again when it changes: the moments below are written in Helsinki's time.
  process.env.TZ = 'Europe/Helsinki';
});
afterEach(() => {
  if (savedZone === undefined) delete process.env.TZ;
  else process.env.TZ = savedZone;
});

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

describe('time text', () => {
  const moment = Date.UTC(2026, 11, 5, 6, 25, 3);

  it('writes a moment in the local time zone, year first, on a 24-hour clock', () => {
    expect(localDateTime(moment)).toBe('2026-12-05 08:25');
    expect(localDateTime(moment, { seconds: true })).toBe('2026-12-05 08:25:03');
    expect(localTimeOfDay(Date.UTC(2026, 5, 30, 21, 4, 9))).toBe('00:04:09');
  });

  it('rounds a span to the unit that reads best, and says how long ago', () => {
    expect([0, 45_000, 119_000, 120_000, 7_140_000, 7_200_000, 169_200_000, 172_800_000, -5_000].map(describeSpan)).toEqual(['0 s', '45 s', '119 s', '2 min', '119 min', '2 h', '47 h', '2 days', '0 s']);
    expect(timeAgo(moment - 30_000, moment)).toBe('just now');
    expect(timeAgo(moment - 90_000, moment)).toBe('90 s ago');
    expect(timeAgo(moment - 3 * 3_600_000, moment)).toBe('3 h ago');
  });

  it('is the only way the command line and the terminal UI write a moment', () => {
    const offenders = ['src/cli', 'src/tui', 'src/client'].flatMap((directory) =>
      sourceFiles(directory).flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((line, index) => (/\.toLocale(?:Date|Time)?String\(\s*\)|new Date\([^)]*\)\.toLocaleString\(/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
      ),
    );
    expect(offenders).toEqual([]);
  });
});
