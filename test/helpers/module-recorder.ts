/**
 * Records which modules a real `openvaala` process loads, in order: a module-loading hook
 * (`module.register` for ES modules, `Module._load` for CommonJS) writes `MODULE <address>` to
 * stderr for each, and `LISTENING` where a server starts to listen. The start-up and memory
 * figures of docs/performance.md depend on what each command loads.
 */
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HOOKS = `
export async function load(url, context, next) {
  const result = await next(url, context);
  process.stderr.write('MODULE ' + url + '\\n');
  return result;
}
`;
const RECORDER = `
import Module, { register } from 'node:module';
import net from 'node:net';
import { pathToFileURL } from 'node:url';
register('./hooks.mjs', import.meta.url);
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const loaded = load.apply(this, arguments);
  if (!Module.isBuiltin(request)) process.stderr.write('MODULE ' + pathToFileURL(Module._resolveFilename(request, parent, isMain)).href + '\\n');
  return loaded;
};
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once('listening', () => process.stderr.write('LISTENING\\n'));
  return listen.apply(this, args);
};
`;

/**
 * Writes the recorder into `directory` and returns the Node.js arguments that load it
 * (`['--import', <file URL>]`), to put before the command line's executable.
 */
export function moduleRecorderArguments(directory: string): string[] {
  writeFileSync(path.join(directory, 'hooks.mjs'), HOOKS);
  const recorder = path.join(directory, 'recorder.mjs');
  writeFileSync(recorder, RECORDER);
  return ['--import', pathToFileURL(recorder).href];
}

/** The `file:` addresses among recorded lines (`MODULE file:…`), in load order. */
export function recordedFiles(lines: string[]): string[] {
  return lines.filter((line) => line.startsWith('MODULE file:')).map((line) => line.slice('MODULE '.length));
}

/** The `node:` built-in modules among recorded lines, in load order. */
export function recordedBuiltins(lines: string[]): string[] {
  return lines.filter((line) => line.startsWith('MODULE node:')).map((line) => line.slice('MODULE '.length));
}

/** The package a module address belongs to (`@scope/name` or `name`), or undefined outside node_modules. */
export function packageOf(address: string): string | undefined {
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(address);
  return match?.[1];
}

/** Total size in bytes of the files at these `file:` addresses. */
export function totalBytes(addresses: string[]): number {
  return addresses.reduce((sum, address) => sum + statSync(fileURLToPath(address)).size, 0);
}
