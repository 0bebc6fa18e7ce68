/**
 * Installing plugins refuses bad sources and bad files with a message naming what was wrong,
 * and leaves the configuration directory and the project's file as they were.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { updateConfigurationFiles } from '../../src/config/config-writer.js';
import { loadConfiguration } from '../../src/config/configuration.js';
import { addPlugin, npmErrorReason, setPluginEnabled, type ApplyChanges } from '../../src/plugins/install.js';
import { writePlugin } from './plugin-fixtures.js';

let root: string;
let configDir: string;
let apply: ApplyChanges;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-plugin-install-'));
  configDir = path.join(root, 'config');
  mkdirSync(configDir);
  apply = (changes) => updateConfigurationFiles(configDir, changes);
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('addPlugin', () => {
  it('refuses a missing path, a file that is not a tarball and a damaged tarball, installing nothing', async () => {
    await expect(addPlugin(configDir, './no-such-folder', apply, root)).rejects.toThrow(`${path.join(root, 'no-such-folder')} does not exist`);
    writeFileSync(path.join(root, 'notes.txt'), 'hello');
    await expect(addPlugin(configDir, 'notes.txt', apply, root)).rejects.toThrow(`${path.join(root, 'notes.txt')} is a file but not a tarball (.tgz, .tar.gz or .tar)`);
    writeFileSync(path.join(root, 'damaged.tgz'), 'not gzip at all');
    await expect(addPlugin(configDir, 'damaged.tgz', apply, root)).rejects.toThrow(`cannot extract ${path.join(root, 'damaged.tgz')}:`);
    expect(readdirSync(configDir)).toEqual([]);
  });

  it('refuses a plugins.yaml that is not a plugin list, before copying anything', async () => {
    writeFileSync(path.join(configDir, 'plugins.yaml'), 'plugins: [not, a, map]\n');
    await expect(addPlugin(configDir, writePlugin(path.join(root, 'kit'), 'kit'), apply, root)).rejects.toThrow(`${path.join(configDir, 'plugins.yaml')}:1: plugins:`);
    expect(existsSync(path.join(configDir, 'plugins', 'kit'))).toBe(false);
    expect(readFileSync(path.join(configDir, 'plugins.yaml'), 'utf8')).toBe('plugins: [not, a, map]\n');
  });

  it('restores the files and removes the copied folder when the configuration does not load afterwards', async () => {
    // Another file of the directory is broken: the load after the edit fails, so nothing may stay.
    writeFileSync(path.join(configDir, 'agents.yaml'), 'agents: 5\n');
    await expect(addPlugin(configDir, writePlugin(path.join(root, 'kit'), 'kit'), apply, root)).rejects.toThrow('the change was not applied, the files are restored');
    expect(existsSync(path.join(configDir, 'plugins', 'kit'))).toBe(false);
    expect(existsSync(path.join(configDir, 'plugins.yaml'))).toBe(false);
  });
});

describe('references to plugin MCP servers', () => {
  it('accepts an approval rule on an installed plugin\'s server, and still names one of no plugin', async () => {
    writeFileSync(path.join(configDir, 'agents.yaml'), 'agents:\n  default:\n    approvals:\n      rules:\n        - { tool: "mcp__kit_files__*", decision: ask }\n');
    await expect(loadConfiguration(configDir)).rejects.toThrow('names MCP server "kit_files", which is not defined in mcp.yaml (defined: none), so it never applies');
    writeFileSync(path.join(configDir, 'plugins.yaml'), 'plugins:\n  kit: { enabled: true }\n');
    await expect(loadConfiguration(configDir)).resolves.toMatchObject({ plugins: { plugins: { kit: { enabled: true } } } });
  });
});

describe('setPluginEnabled', () => {
  it('refuses a bad name and leaves a project file that does not parse unchanged', async () => {
    await addPlugin(configDir, writePlugin(path.join(root, 'kit'), 'kit'), apply, root);
    await expect(setPluginEnabled(configDir, 'Kit!', false, { kind: 'user' }, apply)).rejects.toThrow('"Kit!": plugin names are 1-24 lowercase letters');
    const project = path.join(root, 'project');
    mkdirSync(path.join(project, '.openvaala'), { recursive: true });
    const projectFile = path.join(project, '.openvaala', 'plugins.yaml');
    writeFileSync(projectFile, 'plugins: {\n');
    await expect(setPluginEnabled(configDir, 'kit', false, { kind: 'project', directory: project }, apply)).rejects.toThrow(`${projectFile}: not changed:`);
    expect(readFileSync(projectFile, 'utf8')).toBe('plugins: {\n');
  });
});

describe('writes of the project plugin file', () => {
  it('leave the file whole and no temporary file behind when the disk fills part-way', async () => {
    const { default: fsPromises } = await import('node:fs/promises');
    const { syncBuiltinESMExports } = await import('node:module');
    const { vi } = await import('vitest');
    await addPlugin(configDir, writePlugin(path.join(root, 'kit'), 'kit'), apply, root);
    const project = path.join(root, 'project');
    mkdirSync(path.join(project, '.openvaala'), { recursive: true });
    const projectFile = path.join(project, '.openvaala', 'plugins.yaml');
    const original = '# the team keeps this file in git\nplugins:\n  kit:\n    enabled: true\n';
    writeFileSync(projectFile, original);
    const realWrite = fsPromises.writeFile;
    // Named imports of node:fs/promises see the spy only after the built-in's exports are synced.
    const failing = vi.spyOn(fsPromises, 'writeFile').mockImplementation(async (file, data) => {
      await realWrite(file as string, String(data).slice(0, 10));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    syncBuiltinESMExports();
    try {
      await expect(setPluginEnabled(configDir, 'kit', false, { kind: 'project', directory: project }, apply)).rejects.toThrow('ENOSPC');
    } finally {
      failing.mockRestore();
      syncBuiltinESMExports();
    }
    expect(readFileSync(projectFile, 'utf8')).toBe(original);
    expect(readdirSync(path.dirname(projectFile))).toEqual(['plugins.yaml']);
    await setPluginEnabled(configDir, 'kit', false, { kind: 'project', directory: project }, apply);
    expect(readFileSync(projectFile, 'utf8')).toContain('enabled: false');
    expect(readFileSync(projectFile, 'utf8')).toContain('# the team keeps this file in git');
  });
});

describe('a project plugins.yaml that is a link', () => {
  it('stays a link, and the file it points to gets the change', async () => {
    const { symlinkSync, lstatSync } = await import('node:fs');
    await addPlugin(configDir, writePlugin(path.join(root, 'kit'), 'kit'), apply, root);
    const shared = path.join(root, 'shared-plugins.yaml');
    writeFileSync(shared, 'plugins:\n  kit:\n    enabled: true\n');
    const project = path.join(root, 'project');
    mkdirSync(path.join(project, '.openvaala'), { recursive: true });
    const projectFile = path.join(project, '.openvaala', 'plugins.yaml');
    symlinkSync(shared, projectFile);
    await setPluginEnabled(configDir, 'kit', false, { kind: 'project', directory: project }, apply);
    expect(lstatSync(projectFile).isSymbolicLink()).toBe(true);
    expect(readFileSync(shared, 'utf8')).toContain('enabled: false');
  });
});

describe('npmErrorReason', () => {
  it('keeps the lines of npm pack that say why, not its bookkeeping', () => {
    const notFound = [
      'npm error code E404',
      'npm error 404 Not Found - GET https://registry.npmjs.org/no-such-plugin-xyz - Not found',
      'npm error 404',
      "npm error 404  'no-such-plugin-xyz@*' is not in this registry.",
      'npm error A complete log of this run can be found in: /home/user/.npm/_logs/debug-0.log',
    ].join('\n');
    expect(npmErrorReason(notFound)).toBe("404 Not Found - GET https://registry.npmjs.org/no-such-plugin-xyz - Not found; 404  'no-such-plugin-xyz@*' is not in this registry.");
    const missing = ['npm error code ENOENT', 'npm error syscall open', 'npm error path /w/p/package.json', 'npm error errno -2', "npm error enoent Could not read package.json: Error: ENOENT: no such file or directory, open '/w/p/package.json'", 'npm error enoent'].join('\n');
    expect(npmErrorReason(missing)).toBe("enoent Could not read package.json: Error: ENOENT: no such file or directory, open '/w/p/package.json'");
    expect(npmErrorReason('')).toBeUndefined();
    expect(npmErrorReason(undefined)).toBeUndefined();
  });
});
