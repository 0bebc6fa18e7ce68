import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const forbidden = ['src/server', 'src/runtime'];

/** Relative module specifiers a TypeScript file imports or re-exports (static and dynamic). */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)) found.push(match[1]!);
  return found;
}

/** Files under `directory` that import a module under one of `forbidden`, as `file → target`. */
function forbiddenImports(directory: string): string[] {
  const problems: string[] = [];
  for (const entry of readdirSync(path.join(root, directory), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    for (const specifier of specifiers(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = path.relative(root, path.resolve(path.dirname(file), specifier)).split(path.sep).join('/');
      if (forbidden.some((prefix) => target === prefix || target.startsWith(`${prefix}/`))) problems.push(`${path.relative(root, file)} → ${target}`);
    }
  }
  return problems;
}

it('finds imports of every form', () => {
  expect(specifiers(`import { a } from '../server/x.js';\nimport type { B } from "../runtime/y.js";\nexport * from '../protocol/z.js';\nimport '../server/side.js';\nawait import('../runtime/lazy.js');`)).toEqual([
    '../server/x.js',
    '../runtime/y.js',
    '../protocol/z.js',
    '../server/side.js',
    '../runtime/lazy.js',
  ]);
});

it('keeps the client independent of the server and the runtime (it imports only src/protocol)', () => {
  expect(forbiddenImports('src/client')).toEqual([]);
});
