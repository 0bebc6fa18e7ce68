import { describe, expect, it } from 'vitest';
import { compileGlob } from '../../src/tools/search/glob-pattern.js';

function matching(pattern: string, paths: string[]): string[] {
  const matcher = compileGlob(pattern);
  return paths.filter((candidate) => matcher.matches(candidate));
}

const PATHS = ['a.ts', 'src/b.ts', 'src/deep/c.ts', 'src/deep/c.test.ts', 'src/b.tsx', 'README.md', '.env', 'docs/x[1].md'];

describe('compileGlob', () => {
  it('matches a pattern without "/" against file names at any depth', () => {
    expect(matching('*.ts', PATHS)).toEqual(['a.ts', 'src/b.ts', 'src/deep/c.ts', 'src/deep/c.test.ts']);
    expect(matching('*', ['.env', 'a/.hidden'])).toEqual(['.env', 'a/.hidden']);
    expect(matching('?.ts', PATHS)).toEqual(['a.ts', 'src/b.ts', 'src/deep/c.ts']);
  });

  it('anchors a pattern with "/" at the searched directory; ** spans directories', () => {
    expect(matching('src/*.ts', PATHS)).toEqual(['src/b.ts']);
    expect(matching('src/**/*.ts', PATHS)).toEqual(['src/b.ts', 'src/deep/c.ts', 'src/deep/c.test.ts']);
    expect(matching('**/*.test.ts', PATHS)).toEqual(['src/deep/c.test.ts']);
    expect(matching('src/**', PATHS)).toEqual(['src/b.ts', 'src/deep/c.ts', 'src/deep/c.test.ts', 'src/b.tsx']);
    expect(matching('./src/*.ts', PATHS)).toEqual(['src/b.ts']);
  });

  it('supports classes, negated classes, alternatives and escapes', () => {
    expect(matching('*.{ts,tsx}', ['x.ts', 'x.tsx', 'x.js'])).toEqual(['x.ts', 'x.tsx']);
    expect(matching('[ab].ts', ['a.ts', 'b.ts', 'c.ts'])).toEqual(['a.ts', 'b.ts']);
    expect(matching('[!ab].ts', ['a.ts', 'b.ts', 'c.ts'])).toEqual(['c.ts']);
    expect(matching('{src,lib}/*.{ts,js}', ['src/a.ts', 'lib/b.js', 'test/c.ts'])).toEqual(['src/a.ts', 'lib/b.js']);
    expect(matching('docs/x\\[1\\].md', PATHS)).toEqual(['docs/x[1].md']);
    expect(matching('a.t+s', ['a.t+s', 'a.tts'])).toEqual(['a.t+s']);
  });

  it.each([
    ['', 'glob pattern is empty'],
    ['/etc/*', 'glob pattern "/etc/*" is absolute'],
    ['../*.ts', 'glob pattern "../*.ts" contains ".."'],
    ['src/[ab.ts', 'glob pattern "src/[ab.ts" is not valid: Missing closing: "]"'],
    ['*.{ts,js', 'glob pattern "*.{ts,js" is not valid: Missing closing: "}"'],
    ['a\\', 'glob pattern "a\\" ends with a lone "\\"'],
  ])('refuses %j, naming the problem', (pattern, message) => {
    expect(() => compileGlob(pattern)).toThrow(message);
  });
});
