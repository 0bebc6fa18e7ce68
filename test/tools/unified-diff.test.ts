/**
 * Unified diffs of the `fileChange` details: checked by applying them with `git apply`, which
 * refuses a diff whose hunk headers, context or end-of-file markers are wrong.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../src/tools/unified-diff.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** Applies the diff from `before` to `after` with `git apply` and returns the file's text afterwards. */
function applyWithGit(before: string, after: string): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-diff-'));
  directories.push(directory);
  writeFileSync(path.join(directory, 'file.txt'), before);
  writeFileSync(path.join(directory, 'change.diff'), unifiedDiff(before, after, 'file.txt'));
  execFileSync('git', ['apply', '--unidiff-zero', 'change.diff'], { cwd: directory, stdio: 'pipe' });
  return readFileSync(path.join(directory, 'file.txt'), 'utf8');
}

/** A deterministic pseudo-random generator (mulberry32), so a failure can be reproduced. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('unifiedDiff', () => {
  it('diffs a file whose lines end with CR alone by those lines, as apply_patch reads it', () => {
    expect(unifiedDiff('a\rb\rc\r', 'a\rB\rc\r', 'mac.txt')).toBe('--- a/mac.txt\n+++ b/mac.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n');
    // One LF in either version: CRs are text inside lines again.
    expect(unifiedDiff('a\rb\n', 'a\rB\n', 'mixed.txt')).toBe('--- a/mixed.txt\n+++ b/mixed.txt\n@@ -1,1 +1,1 @@\n-a\rb\n+a\rB\n');
  });

  it('writes hunks with three lines of context, split where changes are more than six lines apart', () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n';
    const after = 'a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\n';
    expect(unifiedDiff(before, after, 'x.txt')).toBe('--- a/x.txt\n+++ b/x.txt\n@@ -1,6 +1,6 @@\n a\n b\n-c\n+C\n d\n e\n f\n@@ -8,3 +8,4 @@\n h\n i\n j\n+k\n');
  });

  it('marks a last line without a newline', () => {
    expect(unifiedDiff('one\ntwo', 'one\ntwo\n', 'm.txt', 'n.txt')).toBe('--- a/m.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+two\n');
    expect(applyWithGit('one\ntwo', 'one\ntwo\n')).toBe('one\ntwo\n');
    expect(applyWithGit('one\ntwo\n', 'one\nthree')).toBe('one\nthree');
  });

  it('gives diffs that git apply accepts and that produce the new text', () => {
    const next = random(4711);
    const words = ['alpha', 'beta', 'gamma', 'delta', '', 'epsilon'];
    for (let round = 0; round < 150; round++) {
      const before = Array.from({ length: Math.floor(next() * 30) }, () => words[Math.floor(next() * words.length)]).join('\n');
      const lines = before.split('\n');
      for (let edit = 0; edit < 1 + Math.floor(next() * 5); edit++) {
        const at = Math.floor(next() * (lines.length + 1));
        const choice = next();
        if (choice < 0.4) lines.splice(at, 1);
        else if (choice < 0.8) lines.splice(at, 0, `new-${round}-${edit}`);
        else lines[at] = `changed-${round}-${edit}`;
      }
      const after = lines.join('\n') + (next() < 0.5 ? '\n' : '');
      const start = before + (next() < 0.5 ? '\n' : '');
      if (start === after) continue;
      expect(applyWithGit(start, after), `round ${round}`).toBe(after);
    }
  });

  it('numbers the hunks of a one-line change deep in a large file as in the whole file, and shows only its context', () => {
    const lines = Array.from({ length: 200_000 }, (_, index) => String(index + 1));
    const before = `${lines.join('\n')}\n`;
    lines[99_999] = 'changed';
    const after = `${lines.join('\n')}\n`;
    expect(unifiedDiff(before, after, 'big.txt')).toBe('--- a/big.txt\n+++ b/big.txt\n@@ -99997,7 +99997,7 @@\n 99997\n 99998\n 99999\n-100000\n+changed\n 100001\n 100002\n 100003\n');
    // Near the end of a file without a last line break, the end is still marked.
    const noBreak = before.slice(0, -1);
    expect(unifiedDiff(noBreak, `${noBreak.slice(0, -'200000'.length)}last`, 'big.txt')).toBe('--- a/big.txt\n+++ b/big.txt\n@@ -199997,4 +199997,4 @@\n 199997\n 199998\n 199999\n-200000\n\\ No newline at end of file\n+last\n\\ No newline at end of file\n');
  });

  it('gives diffs that git apply accepts for changes among long unchanged stretches, at the ends and in runs of equal lines', () => {
    const next = random(90210);
    for (let round = 0; round < 60; round++) {
      const length = 20 + Math.floor(next() * 200);
      // Few distinct lines, so equal lines repeat next to the changes.
      const lines = Array.from({ length }, (_, index) => (next() < 0.3 ? 'same' : `line ${index % 7}`));
      const before = lines.join('\n') + (next() < 0.5 ? '\n' : '');
      for (let edit = 0; edit < 1 + Math.floor(next() * 3); edit++) {
        const where = next();
        const at = where < 0.2 ? 0 : where < 0.4 ? lines.length : Math.floor(next() * lines.length);
        const choice = next();
        if (choice < 0.35) lines.splice(at, 1);
        else if (choice < 0.7) lines.splice(at, 0, next() < 0.5 ? 'same' : `new ${round}`);
        else lines[at] = `changed ${round}`;
      }
      const after = lines.join('\n') + (next() < 0.5 ? '\n' : '');
      if (before === after) continue;
      expect(applyWithGit(before, after), `round ${round}`).toBe(after);
    }
  });
});
