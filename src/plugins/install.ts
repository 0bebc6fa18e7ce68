/**
 * Installing, removing, enabling and disabling plugins (docs/plugins.md). A plugin is copied
 * into `<configDir>/plugins/<name>/` from a folder, a tarball (`.tgz`, `.tar.gz`, `.tar`,
 * extracted with `tar`) or an npm package (fetched with `npm pack` into a temporary folder,
 * then extracted), after its manifest and parts were checked; then `plugins.yaml` is edited
 * through the configuration writer, which loads the result and restores the file if that load
 * fails (SPEC §8) — the copied folder is removed again then.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ConfigurationChange } from '../config/config-writer.js';
import { decodeConfigText } from '../config/config-text.js';
import { isPluginName, PLUGIN_NAME_RULE, PLUGINS_FILE, PluginsFileSchema, type PluginsFile } from '../config/plugins.js';
import { editYamlText } from '../config/yaml-edit.js';
import { makeDirectory } from '../make-directory.js';
import { writeFileAtomically } from '../write-file-atomically.js';
import { loadYamlFile, parseYamlFile } from '../config/yaml-file.js';
import { describePluginProblem, loadPlugin, type LoadedPlugin } from './plugin-loader.js';
import { pluginDirectory } from './plugin-set.js';

const run = promisify(execFile);

/**
 * The lines of npm's error output that say why (`npm error 404 Not Found - GET …`), without its
 * bookkeeping (`code`, `errno`, `syscall`, the debug log's path); undefined when there are none.
 * @param stderr what npm wrote on stderr
 */
export function npmErrorReason(stderr: string | undefined): string | undefined {
  const lines = (stderr ?? '')
    .split('\n')
    .map((line) => line.replace(/^npm (?:error|ERR!)\s*/, '').trim())
    .filter((line) => line !== '' && !/^(code|errno|syscall|path) /.test(line) && !line.startsWith('A complete log of this run') && !/^\w+$/.test(line));
  return lines.length > 0 ? lines.slice(0, 3).join('; ') : undefined;
}

/** Time allowed for `npm pack` or `tar`, ms. */
const TOOL_TIMEOUT_MS = 120_000;

/** A plugin operation that was refused; nothing was changed. */
export class PluginOperationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PluginOperationError';
  }
}

/** How an operation changes configuration files: the server's configuration service, or the writer directly. */
export type ApplyChanges = (changes: ConfigurationChange[]) => Promise<unknown>;

/** Where a plugin's enabled state is written. */
export type PluginScope = { kind: 'user' } | { kind: 'project'; directory: string };

const isTarball = (source: string): boolean => /\.(?:tgz|tar\.gz|tar)$/.test(source);

async function extract(tarball: string, into: string): Promise<string> {
  try {
    await run('tar', ['-xf', tarball, '-C', into], { timeout: TOOL_TIMEOUT_MS });
  } catch (error) {
    throw new PluginOperationError(`cannot extract ${tarball}: ${((error as { stderr?: string }).stderr || (error as Error).message).trim()}`, { cause: error });
  }
  // npm tarballs hold one top folder (`package/`); take the single folder when there is one.
  const entries = await readdir(into, { withFileTypes: true });
  const only = entries.length === 1 ? entries[0] : undefined;
  return only?.isDirectory() ? path.join(into, only.name) : into;
}

/**
 * Fetches `source` into a folder: a folder is used where it is, a tarball is extracted, any
 * other text is an npm package (`npm pack`).
 * @returns the folder and the temporary folder to remove afterwards
 */
async function stage(source: string, cwd: string): Promise<{ folder: string; temporary?: string }> {
  const local = path.resolve(cwd, source);
  const info = await stat(local).catch(() => undefined);
  if (info?.isDirectory()) return { folder: local };
  const temporary = await mkdtemp(path.join(os.tmpdir(), 'openvaala-plugin-'));
  try {
    if (info?.isFile()) {
      if (!isTarball(local)) throw new PluginOperationError(`${local} is a file but not a tarball (.tgz, .tar.gz or .tar)`);
      return { folder: await extract(local, temporary), temporary };
    }
    if (isTarball(source) || source.startsWith('.') || source.startsWith('/')) throw new PluginOperationError(`${local} does not exist`);
    let packed: string;
    try {
      // Errors only: they say why (a 404 from the registry, a missing package.json); --silent said nothing.
      const { stdout } = await run('npm', ['pack', source, '--pack-destination', temporary, '--loglevel=error'], { cwd: temporary, timeout: TOOL_TIMEOUT_MS });
      packed = stdout.trim().split('\n').pop() ?? '';
    } catch (error) {
      throw new PluginOperationError(`npm pack ${source} failed: ${npmErrorReason((error as { stderr?: string }).stderr) ?? (error as Error).message}`, { cause: error });
    }
    const unpacked = path.join(temporary, 'unpacked');
    await mkdir(unpacked);
    return { folder: await extract(path.join(temporary, packed), unpacked), temporary };
  } catch (error) {
    await rm(temporary, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Installs a plugin from a folder, a tarball or an npm package name and enables it.
 * @param cwd the directory a relative `source` is taken from
 * @returns the plugin as loaded from its installed folder
 * @throws PluginOperationError naming the file and key when the plugin does not load, when a
 *   plugin of that name is already installed, or when fetching fails; nothing is left behind
 */
export async function addPlugin(configDir: string, source: string, apply: ApplyChanges, cwd = process.cwd()): Promise<LoadedPlugin> {
  const staged = await stage(source, cwd);
  try {
    const checked = await loadPlugin(staged.folder);
    if (checked.problem || !checked.plugin) throw new PluginOperationError(`the plugin was not installed: ${describePluginProblem(checked.problem as NonNullable<typeof checked.problem>)}`);
    const name = checked.plugin.name;
    const target = pluginDirectory(configDir, name);
    const listed = (await readPluginsFile(configDir)).plugins[name] !== undefined;
    if (listed || (await stat(target).catch(() => undefined))) throw new PluginOperationError(`a plugin named "${name}" is already installed (${target}); remove it first`);
    await makeDirectory(path.dirname(target), 0o700);
    await cp(staged.folder, target, { recursive: true, verbatimSymlinks: true });
    try {
      const recorded = isTarball(source) || (await stat(path.resolve(cwd, source)).catch(() => undefined)) ? path.resolve(cwd, source) : source;
      await apply([{ file: 'plugins', path: ['plugins', name], value: { enabled: true, source: recorded } }]);
    } catch (error) {
      await rm(target, { recursive: true, force: true });
      throw error;
    }
    const installed = await loadPlugin(target, name);
    return installed.plugin as LoadedPlugin;
  } finally {
    if (staged.temporary) await rm(staged.temporary, { recursive: true, force: true });
  }
}

/**
 * Removes an installed plugin: its entry in `plugins.yaml`, then its folder.
 * @throws PluginOperationError when no plugin of that name is installed
 */
export async function removePlugin(configDir: string, name: string, apply: ApplyChanges): Promise<void> {
  const file = await readPluginsFile(configDir);
  const target = pluginDirectory(configDir, name);
  if (file.plugins[name] === undefined) throw new PluginOperationError(`no plugin named "${name}" is installed (installed: ${Object.keys(file.plugins).join(', ') || 'none'})`);
  await apply([{ file: 'plugins', path: ['plugins', name], remove: true }]);
  await rm(target, { recursive: true, force: true });
}

/**
 * Enables or disables an installed plugin for the user (`plugins.yaml` of the configuration
 * directory) or for one project (`<project>/.openvaala/plugins.yaml`, which wins for
 * conversations working in that directory).
 * @throws PluginOperationError when the plugin is not installed, or the project file cannot be edited
 */
export async function setPluginEnabled(configDir: string, name: string, enabled: boolean, scope: PluginScope, apply: ApplyChanges): Promise<void> {
  if (!isPluginName(name)) throw new PluginOperationError(`"${name}": ${PLUGIN_NAME_RULE}`);
  const file = await readPluginsFile(configDir);
  if (file.plugins[name] === undefined) throw new PluginOperationError(`no plugin named "${name}" is installed (installed: ${Object.keys(file.plugins).join(', ') || 'none'})`);
  if (scope.kind === 'user') {
    await apply([{ file: 'plugins', path: ['plugins', name, 'enabled'], value: enabled }]);
    return;
  }
  const projectFile = projectPluginsFile(scope.directory);
  const original = await readFile(projectFile).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new PluginOperationError(`cannot read ${projectFile}: ${error.message}`);
  });
  const decoded = decodeConfigText(original ?? new Uint8Array());
  if (decoded.problems[0]) throw new PluginOperationError(`${projectFile}:${decoded.problems[0].line}: ${decoded.problems[0].message}`);
  let text: string;
  try {
    text = editYamlText(decoded.text, ['plugins', name, 'enabled'], { value: enabled });
    // The result must still be a valid plugin list, or the file is left as it was.
    parseYamlFile(projectFile, text, PluginsFileSchema);
  } catch (error) {
    throw new PluginOperationError(`${projectFile}: not changed: ${(error as Error).message}`, { cause: error });
  }
  await makeDirectory(path.dirname(projectFile));
  await writeFileAtomically(projectFile, text, { modeForNewFile: 0o644 });
}

/** The project scope's plugin file of a project directory. */
export function projectPluginsFile(projectDirectory: string): string {
  return path.join(projectDirectory, '.openvaala', PLUGINS_FILE);
}

/**
 * Reads `plugins.yaml` of the configuration directory (missing = no plugins).
 * @throws ConfigError naming the file, line and key path of a problem, or why it cannot be read
 */
export function readPluginsFile(configDir: string): Promise<PluginsFile> {
  return loadYamlFile(path.join(configDir, PLUGINS_FILE), PluginsFileSchema, () => ({ plugins: {} }));
}
