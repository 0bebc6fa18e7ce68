// Bundles the compiled command line (dist/src/cli/main.js and everything it imports) into a few
// files in dist/cli/, which bin/openvaala loads. Loading ~450 small modules one by one (each a
// file lookup, read and compile) was most of the start-up time of `serve` and of the `exec`
// client; a bundle is a handful of files. Each `import()` of the sources stays a separate chunk,
// so `--help` still loads only the command table and `exec` never loads the server.
//
// What stays outside the bundle, loaded from node_modules as before:
// - packages with native addons (better-sqlite3, node-pty, ssh2 with cpu-features,
//   @node-rs/argon2): their `.node` files are found relative to their own package;
// - large packages imported only on first use (the AI SDK and its providers, the MCP SDK, the
//   ACP SDK, just-bash, pg, the sign-in and terminal-UI libraries): bundling them gains nothing
//   at start, and some find files of their own package at run time.
//
// The compiled modules find files beside themselves through `import.meta.url` (prompts, tool
// descriptions, the sign-in page, the reindex worker, the package root). In the bundle every
// module's code runs from a chunk in dist/cli/, so each module's `import.meta.url` is rewritten
// to the address its compiled file has in dist/src/, computed from the chunk's own address at
// run time: the package keeps working wherever it is installed.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const compiled = path.join(root, 'dist', 'src');
const outputDirectory = path.join(root, 'dist', 'cli');

/** Packages loaded from node_modules at run time; every other import is bundled in. */
const EXTERNAL_PACKAGES = new Set([
  // native addons
  'better-sqlite3',
  'node-pty',
  'ssh2',
  'cpu-features',
  '@node-rs/argon2',
  // imported on first use only
  'ai',
  '@ai-sdk/anthropic',
  '@ai-sdk/google',
  '@ai-sdk/openai',
  '@ai-sdk/openai-compatible',
  '@ai-sdk/provider',
  '@ai-sdk/provider-utils',
  '@modelcontextprotocol/sdk',
  '@agentclientprotocol/sdk',
  'just-bash',
  'pg',
  'openid-client',
  'ink',
  'react',
]);

/** The package name of a bare import specifier (`@scope/name/sub` → `@scope/name`). */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Rewrites `import.meta.url` in modules of dist/src to their own compiled file's address. */
const compiledModuleAddress = {
  name: 'compiled-module-address',
  transform(code, id) {
    if (!id.startsWith(compiled + path.sep) || !code.includes('import.meta.url')) return null;
    const relative = path.relative(outputDirectory, id).split(path.sep).join('/');
    return { code: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(relative)}, import.meta.url).href`), map: null };
  },
};

const bundle = await rolldown({
  input: { main: path.join(compiled, 'cli', 'main.js') },
  platform: 'node',
  external: (specifier) => {
    if (specifier.startsWith('node:') || specifier.startsWith('.') || path.isAbsolute(specifier)) return false;
    return EXTERNAL_PACKAGES.has(packageName(specifier));
  },
  plugins: [compiledModuleAddress],
  logLevel: 'warn',
});
rmSync(outputDirectory, { recursive: true, force: true });
await bundle.write({
  dir: outputDirectory,
  format: 'esm',
  entryFileNames: '[name].js',
  chunkFileNames: '[name]-[hash].js',
});
await bundle.close();
