/**
 * Reads one plugin folder (Claude Code plugin format, see `manifest.ts`) into the parts the
 * runtime uses, each named after the plugin: skills and prompt commands as
 * `<plugin>:<name>`, agents as `<plugin>:<name>`, MCP servers as `<plugin>_<name>` (MCP server
 * names become part of tool names, where ":" is not allowed). The first problem found stops
 * the load of that plugin only, and is reported with the file and key at fault.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import type { AgentDefinition } from '../config/agents.js';
import { DEFAULT_HOOK_TIMEOUT_MS, MAX_HOOK_TIMEOUT_MS, TOOL_HOOK_EVENTS, compileToolMatcher, type HookDefinition, type HookEvent } from '../config/hooks.js';
import { McpServerConfigSchema, type McpServerConfig } from '../config/mcp.js';
import { expandPluginRoot, keyPathOf, KNOWN_MANIFEST_KEYS, MANIFEST_PATH, PluginHooksFileSchema, PluginManifestSchema, PluginMcpServerSchema, type PluginManifest } from './manifest.js';
import { jsonSyntaxProblem } from '../printable-text.js';
import { locateYamlError } from '../config/yaml-syntax-errors.js';
import { formatKeyPath } from '../key-path.js';
import { explainIssue } from '../validation-issues.js';

/** Claude Code hook event names and the events they run as here. */
const HOOK_EVENT_NAMES: Record<string, HookEvent> = {
  PreToolUse: 'pre_tool_use',
  PostToolUse: 'post_tool_use',
  UserPromptSubmit: 'user_prompt_submit',
  SessionStart: 'session_start',
  Stop: 'stop',
  PreCompact: 'pre_compact',
};

/** A prompt command: a Markdown file whose body becomes the prompt (`$ARGUMENTS` replaced). */
export interface PluginCommand {
  /** `<plugin>:<file name without .md>`. */
  name: string;
  description?: string;
  /** The prompt text after the front matter. */
  body: string;
  /** Absolute path of the Markdown file. */
  file: string;
}

/** A plugin whose parts loaded. */
export interface LoadedPlugin {
  name: string;
  /** Absolute path of the plugin folder. */
  directory: string;
  version?: string;
  description?: string;
  /** Folders holding one skill folder each; skills are named `<plugin>:<skill>`. */
  skillDirectories: string[];
  /** Agent definitions by `<plugin>:<agent>`. */
  agents: Record<string, AgentDefinition>;
  /** Hooks by event, `${CLAUDE_PLUGIN_ROOT}` replaced by the folder. */
  hooks: Partial<Record<HookEvent, HookDefinition[]>>;
  /** MCP servers by `<plugin>_<server>`. */
  mcpServers: Record<string, McpServerConfig>;
  /** Prompt commands by `<plugin>:<command>`. */
  commands: Record<string, PluginCommand>;
  /** Parts of the folder that were not loaded because this runtime has no use for them. */
  notes: string[];
}

/** Why a plugin was not loaded: the file and key at fault. */
export interface PluginProblem {
  plugin: string;
  /** Absolute path of the file at fault (or the folder). */
  file: string;
  /** Key path inside that file (`hooks.PreToolUse[0].hooks[0].type`, see `formatKeyPath`); empty for the whole file. */
  keyPath: string;
  message: string;
}

/** Thrown inside the loader to stop at the first problem. */
class ProblemFound extends Error {
  constructor(readonly problem: Omit<PluginProblem, 'plugin'>) {
    super(problem.message);
  }
}

/** One line naming the file, key and problem, as configuration errors are written. */
export function describePluginProblem(problem: PluginProblem): string {
  return `plugin "${problem.plugin}": ${problem.file}: ${problem.keyPath ? `${problem.keyPath}: ` : ''}${problem.message}`;
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined)) !== undefined;
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ProblemFound({ file, keyPath: '', message: `cannot be read: ${(error as Error).message}` });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProblemFound({ file, keyPath: '', message: `is not valid JSON: ${jsonSyntaxProblem(error)}` });
  }
}

function validate<T>(schema: z.ZodType<T>, value: unknown, file: string, prefix: (string | number)[] = []): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // Told as a configuration file's problems are: a misspelt value or key with the one meant.
  const issue = result.error.issues.flatMap((each) => explainIssue(each, { root: value, schema }))[0];
  throw new ProblemFound({ file, keyPath: keyPathOf([...prefix, ...(issue?.keyPath ?? [])]), message: issue?.message ?? 'invalid' });
}

/** Resolves a manifest path inside the plugin folder; a path leading outside is a problem. */
function inside(directory: string, relative: string, file: string, keyPath: string): string {
  const resolved = path.resolve(directory, relative);
  if (resolved !== directory && !resolved.startsWith(`${directory}${path.sep}`)) throw new ProblemFound({ file, keyPath, message: `"${relative}" leads outside the plugin folder` });
  return resolved;
}

const asList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** Splits `---` front matter from a Markdown body. */
function frontMatter(text: string, file: string): { fields: Record<string, unknown>; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!match) return { fields: {}, body: text.trim() };
  const yamlText = match[1] as string;
  const lineCounter = new LineCounter();
  const document = parseDocument(yamlText, { lineCounter });
  const [error] = document.errors;
  if (error) {
    // The front matter's YAML begins on the file's second line, after "---".
    const { line, message } = locateYamlError(error, document, yamlText, lineCounter);
    throw new ProblemFound({ file, keyPath: '(front matter)', message: `is not valid YAML (line ${line + 1}): ${message}` });
  }
  const fields: unknown = document.toJS();
  if (fields !== null && (typeof fields !== 'object' || Array.isArray(fields))) throw new ProblemFound({ file, keyPath: '(front matter)', message: 'must be a mapping of fields' });
  return { fields: (fields ?? {}) as Record<string, unknown>, body: text.slice(match[0].length).trim() };
}

/** Markdown files of the default folder and the manifest's extra paths (files or folders). */
async function markdownFiles(directory: string, defaultFolder: string, extra: string[], manifestFile: string, key: string): Promise<string[]> {
  const files: string[] = [];
  const candidates = [path.join(directory, defaultFolder), ...extra.map((entry, index) => inside(directory, entry, manifestFile, Array.isArray(extra) && extra.length > 1 ? formatKeyPath([key, index]) : key))];
  for (const candidate of candidates) {
    const info = await stat(candidate).catch(() => undefined);
    if (info?.isFile() && candidate.endsWith('.md')) files.push(candidate);
    else if (info?.isDirectory()) for (const name of (await readdir(candidate)).sort()) if (name.endsWith('.md')) files.push(path.join(candidate, name));
    else if (info === undefined && candidate !== path.join(directory, defaultFolder)) throw new ProblemFound({ file: manifestFile, keyPath: key, message: `${path.relative(directory, candidate)} does not exist` });
  }
  return [...new Set(files)];
}

const PART_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const baseName = (file: string): string => path.basename(file, '.md');

async function loadAgents(plugin: string, directory: string, manifest: PluginManifest, manifestFile: string): Promise<Record<string, AgentDefinition>> {
  const agents: Record<string, AgentDefinition> = {};
  for (const file of await markdownFiles(directory, 'agents', asList(manifest.agents), manifestFile, 'agents')) {
    const { fields, body } = frontMatter(await readFile(file, 'utf8'), file);
    const name = typeof fields.name === 'string' ? fields.name : baseName(file);
    if (!PART_NAME.test(name)) throw new ProblemFound({ file, keyPath: 'name', message: `"${name}": agent names use lowercase letters, digits and single "-"` });
    if (fields.description !== undefined && typeof fields.description !== 'string') throw new ProblemFound({ file, keyPath: 'description', message: 'expected a string' });
    // Claude Code's model names (`sonnet`, `inherit`) name no provider; only `<provider>/<model>` is taken.
    const model = typeof fields.model === 'string' && /^[^/]+\/.+$/.test(fields.model) ? fields.model : undefined;
    agents[`${plugin}:${name}`] = { ...(fields.description !== undefined ? { description: fields.description as string } : {}), ...(model ? { model } : {}), ...(body !== '' ? { instructions: body } : {}) };
  }
  return agents;
}

async function loadCommands(plugin: string, directory: string, manifest: PluginManifest, manifestFile: string): Promise<Record<string, PluginCommand>> {
  const commands: Record<string, PluginCommand> = {};
  for (const file of await markdownFiles(directory, 'commands', asList(manifest.commands), manifestFile, 'commands')) {
    const name = baseName(file);
    if (!PART_NAME.test(name)) throw new ProblemFound({ file, keyPath: '', message: `"${name}": command file names use lowercase letters, digits and single "-"` });
    const { fields, body } = frontMatter(await readFile(file, 'utf8'), file);
    const description = typeof fields.description === 'string' ? fields.description : undefined;
    commands[`${plugin}:${name}`] = { name: `${plugin}:${name}`, ...(description !== undefined ? { description } : {}), body, file };
  }
  return commands;
}

async function hooksSources(directory: string, manifest: PluginManifest, manifestFile: string): Promise<{ file: string; value: unknown; prefix: string[] }[]> {
  const sources: { file: string; value: unknown; prefix: string[] }[] = [];
  const defaultFile = path.join(directory, 'hooks', 'hooks.json');
  if (await exists(defaultFile)) sources.push({ file: defaultFile, value: await readJson(defaultFile), prefix: [] });
  const declared = manifest.hooks;
  if (declared !== undefined && typeof declared === 'object' && !Array.isArray(declared)) sources.push({ file: manifestFile, value: declared, prefix: ['hooks'] });
  else for (const entry of asList(declared as string | string[] | undefined)) {
    const file = inside(directory, entry, manifestFile, 'hooks');
    if (file !== defaultFile) sources.push({ file, value: await readJson(file), prefix: [] });
  }
  return sources;
}

async function loadHooks(directory: string, manifest: PluginManifest, manifestFile: string, notes: string[]): Promise<Partial<Record<HookEvent, HookDefinition[]>>> {
  const hooks: Partial<Record<HookEvent, HookDefinition[]>> = {};
  for (const source of await hooksSources(directory, manifest, manifestFile)) {
    const file = validate(PluginHooksFileSchema, source.value, source.file, source.prefix);
    for (const [eventName, groups] of Object.entries(file.hooks)) {
      const event = HOOK_EVENT_NAMES[eventName];
      if (event === undefined) {
        notes.push(`${path.relative(directory, source.file)}: ${eventName} hooks are not run (events run here: ${Object.keys(HOOK_EVENT_NAMES).join(', ')})`);
        continue;
      }
      groups.forEach((group, groupIndex) => {
        const at = (...rest: (string | number)[]) => keyPathOf([...source.prefix, 'hooks', eventName, groupIndex, ...rest]);
        const matcher = group.matcher === undefined || group.matcher === '' || group.matcher === '*' ? undefined : group.matcher;
        if (matcher !== undefined) {
          if (!TOOL_HOOK_EVENTS.has(event)) throw new ProblemFound({ file: source.file, keyPath: at('matcher'), message: `only PreToolUse and PostToolUse hooks take a matcher (${eventName} is not about one tool)` });
          try {
            compileToolMatcher(matcher);
          } catch (error) {
            throw new ProblemFound({ file: source.file, keyPath: at('matcher'), message: `not a valid pattern: ${(error as Error).message}` });
          }
        }
        group.hooks.forEach((hook, hookIndex) => {
          if (hook.type !== 'command') {
            notes.push(`${path.relative(directory, source.file)}: ${at('hooks', hookIndex)}: hooks of type "${hook.type}" are not run (only "command")`);
            return;
          }
          if (hook.command === undefined || hook.command.trim() === '') throw new ProblemFound({ file: source.file, keyPath: at('hooks', hookIndex, 'command'), message: 'required: the command to run' });
          const timeoutMs = hook.timeout === undefined ? DEFAULT_HOOK_TIMEOUT_MS : Math.min(MAX_HOOK_TIMEOUT_MS, Math.ceil(hook.timeout * 1000));
          (hooks[event] ??= []).push({ command: expandPluginRoot(hook.command, directory), timeoutMs, ...(matcher !== undefined ? { matcher } : {}) });
        });
      });
    }
  }
  return hooks;
}

async function loadMcpServers(plugin: string, directory: string, manifest: PluginManifest, manifestFile: string): Promise<Record<string, McpServerConfig>> {
  const sources: { file: string; value: unknown; prefix: string[] }[] = [];
  const defaultFile = path.join(directory, '.mcp.json');
  if (await exists(defaultFile)) sources.push({ file: defaultFile, value: await readJson(defaultFile), prefix: [] });
  const declared = manifest.mcpServers;
  if (declared !== undefined && typeof declared === 'object' && !Array.isArray(declared)) sources.push({ file: manifestFile, value: { mcpServers: declared }, prefix: [] });
  else for (const entry of asList(declared as string | string[] | undefined)) {
    const file = inside(directory, entry, manifestFile, 'mcpServers');
    if (file !== defaultFile) sources.push({ file, value: await readJson(file), prefix: [] });
  }
  const servers: Record<string, McpServerConfig> = {};
  for (const source of sources) {
    const value = source.value as Record<string, unknown>;
    const wrapped = value !== null && typeof value === 'object' && 'mcpServers' in value;
    const map = (wrapped ? value.mcpServers : value) as unknown;
    if (map === null || typeof map !== 'object' || Array.isArray(map)) throw new ProblemFound({ file: source.file, keyPath: wrapped ? 'mcpServers' : '', message: 'expected an object of MCP servers by name' });
    for (const [name, raw] of Object.entries(map as Record<string, unknown>)) {
      const prefix = [...(wrapped ? ['mcpServers'] : []), name];
      if (!/^[A-Za-z0-9-]+$/.test(name)) throw new ProblemFound({ file: source.file, keyPath: keyPathOf(prefix), message: 'MCP server names in a plugin use letters, digits and "-"' });
      const entry = validate(PluginMcpServerSchema, raw, source.file, prefix);
      const expand = (text: string) => expandPluginRoot(text, directory);
      const kind = entry.type ?? (entry.url !== undefined ? 'http' : 'stdio');
      if (kind === 'sse') throw new ProblemFound({ file: source.file, keyPath: keyPathOf([...prefix, 'type']), message: 'the HTTP+SSE transport is not supported; use "http" (Streamable HTTP)' });
      const { type: _type, command, args, env, cwd, url, headers, ...rest } = entry;
      const config =
        kind === 'http'
          ? { transport: 'http', url, ...(headers ? { headers } : {}), ...rest }
          : { transport: kind, command: command === undefined ? undefined : expand(command), ...(args ? { args: args.map(expand) } : {}), ...(env ? { env: Object.fromEntries(Object.entries(env).map(([key, text]) => [key, expand(text)])) } : {}), ...(cwd ? { cwd: expand(cwd) } : {}), ...rest };
      const server = validate(McpServerConfigSchema, config, source.file, prefix);
      const fullName = `${plugin}_${name}`;
      if (fullName.length > 32) throw new ProblemFound({ file: source.file, keyPath: keyPathOf(prefix), message: `"${fullName}" is longer than 32 characters (MCP server names become part of tool names)` });
      servers[fullName] = server;
    }
  }
  return servers;
}

async function skillDirectories(directory: string, manifest: PluginManifest, manifestFile: string): Promise<string[]> {
  const directories = [path.join(directory, 'skills')];
  asList(manifest.skills).forEach((entry, index, all) => directories.push(inside(directory, entry, manifestFile, all.length > 1 ? formatKeyPath(['skills', index]) : 'skills')));
  const found: string[] = [];
  for (const candidate of [...new Set(directories)]) {
    const info = await stat(candidate).catch(() => undefined);
    if (!info?.isDirectory()) continue;
    // A path that is itself a skill folder stands for that one skill: its parent is the root searched.
    found.push(await exists(path.join(candidate, 'SKILL.md')) ? path.dirname(candidate) : candidate);
  }
  return [...new Set(found)];
}

/**
 * Loads the plugin in `directory`.
 * @param expectedName the name it is installed under; a manifest naming another plugin is a problem
 * @returns the plugin, or the first problem found (file and key path)
 */
export async function loadPlugin(directory: string, expectedName?: string): Promise<{ plugin?: LoadedPlugin; problem?: PluginProblem }> {
  const manifestFile = path.join(directory, MANIFEST_PATH);
  const label = expectedName ?? path.basename(directory);
  try {
    if (!(await stat(directory).catch(() => undefined))?.isDirectory()) throw new ProblemFound({ file: directory, keyPath: '', message: 'the plugin folder does not exist' });
    if (!(await exists(manifestFile))) throw new ProblemFound({ file: manifestFile, keyPath: '', message: `missing: a plugin folder needs ${MANIFEST_PATH}` });
    const manifest = validate(PluginManifestSchema, await readJson(manifestFile), manifestFile);
    if (expectedName !== undefined && manifest.name !== expectedName) throw new ProblemFound({ file: manifestFile, keyPath: 'name', message: `"${manifest.name}" is not the name the plugin is installed under ("${expectedName}")` });
    const notes = Object.keys(manifest).filter((key) => !KNOWN_MANIFEST_KEYS.has(key)).map((key) => `${MANIFEST_PATH}: ${key} is not used here`);
    const plugin: LoadedPlugin = {
      name: manifest.name,
      directory,
      ...(manifest.version !== undefined ? { version: manifest.version } : {}),
      ...(manifest.description !== undefined ? { description: manifest.description } : {}),
      skillDirectories: await skillDirectories(directory, manifest, manifestFile),
      agents: await loadAgents(manifest.name, directory, manifest, manifestFile),
      hooks: await loadHooks(directory, manifest, manifestFile, notes),
      mcpServers: await loadMcpServers(manifest.name, directory, manifest, manifestFile),
      commands: await loadCommands(manifest.name, directory, manifest, manifestFile),
      notes,
    };
    return { plugin };
  } catch (error) {
    if (error instanceof ProblemFound) return { problem: { plugin: label, ...error.problem } };
    return { problem: { plugin: label, file: directory, keyPath: '', message: `cannot be loaded: ${(error as Error).message}` } };
  }
}
