/** Parsing command lines into words for "allow this command prefix" approvals. */
import { describe, expect, it } from 'vitest';
import { commandMatchesPrefix, commandWords, proposeCommandPrefix } from '../../src/runtime/approvals/command-prefix.js';

describe('command prefixes', () => {
  it('splits one simple command into words, removing quotes and escapes', () => {
    expect(commandWords(`git commit -m "fix the \\"parser\\"" 'a b' c\\ d`)).toEqual(['git', 'commit', '-m', 'fix the "parser"', 'a b', 'c d']);
    expect(commandWords('  ls\t-la  ')).toEqual(['ls', '-la']);
  });

  it('gives no words for lines that are more than one simple command', () => {
    for (const line of ['git status; rm -rf /', 'git status && rm -rf /', 'git status || true', 'git status | sh', 'git status & rm x', 'git status > /etc/passwd', 'git status < in', 'git status $(rm -rf /)', 'git status `rm -rf /`', 'git status "$(rm -rf /)"', '(git status)', 'git status\nrm -rf /', "git status 'unterminated"]) {
      expect(commandWords(line), line).toBeUndefined();
    }
  });

  it('matches on parsed words, never on raw text', () => {
    expect(commandMatchesPrefix('git status --short', ['git', 'status'])).toBe(true);
    expect(commandMatchesPrefix('git  "status"', ['git', 'status'])).toBe(true);
    expect(commandMatchesPrefix('git status; rm -rf /', ['git', 'status'])).toBe(false);
    expect(commandMatchesPrefix('git statusx', ['git', 'status'])).toBe(false);
    expect(commandMatchesPrefix('git', ['git', 'status'])).toBe(false);
    expect(commandMatchesPrefix('FOO=1 git status', ['git', 'status'])).toBe(false);
    expect(commandMatchesPrefix('git status', [])).toBe(false);
  });

  it('proposes the program and a sub-command', () => {
    expect(proposeCommandPrefix('git status --short')).toEqual(['git', 'status']);
    expect(proposeCommandPrefix('ls -la')).toEqual(['ls']);
    expect(proposeCommandPrefix('cat ./README.md')).toEqual(['cat']);
    expect(proposeCommandPrefix('A=1 make')).toBeUndefined();
    expect(proposeCommandPrefix('make && rm x')).toBeUndefined();
  });
});
