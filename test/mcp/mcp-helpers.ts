/**
 * Helpers for the MCP tests: where the real MCP server packages' programs are, the fixture
 * servers, and writing `mcp.yaml` into a test installation.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Item } from '../../src/protocol/index.js';
import type { TestEnvironment } from '../helpers/environment.js';

const require = createRequire(import.meta.url);

/**
 * The absolute path of an installed package's program (its `bin` entry), to be run with
 * `process.execPath` so the tests do not depend on `npx` or a shell.
 */
export function packageBin(packageName: string): string {
  const manifestFile = require.resolve(`${packageName}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (bin === undefined) throw new Error(`${packageName} has no bin entry`);
  return path.join(path.dirname(manifestFile), bin);
}

/** The fixture server of `fixtures/growing-server.mjs`. */
export const GROWING_SERVER = fileURLToPath(new URL('./fixtures/growing-server.mjs', import.meta.url));

/** The fixture server of `fixtures/lax-server.mjs`, which never checks its arguments. */
export const LAX_SERVER = fileURLToPath(new URL('./fixtures/lax-server.mjs', import.meta.url));

/** YAML for a string (JSON is valid YAML and quotes everything that needs it). */
export const yamlString = (value: string): string => JSON.stringify(value);

/** A `beforeStart` that writes `mcp.yaml` (and optionally `agents.yaml`) into the configuration directory. */
export function writeConfig(files: { mcp: string; agents?: string }): (environment: TestEnvironment) => void {
  return (environment) => {
    writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), files.mcp);
    if (files.agents !== undefined) writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), files.agents);
  };
}

/** The completed `tool_call` items, in order. */
export function toolCalls(items: Item[]): Extract<Item, { kind: 'tool_call' }>[] {
  return items.filter((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call');
}

/** The function tools offered in one recorded Responses API request, by name. */
export function offeredTools(body: unknown): Map<string, { name: string; description?: string; parameters?: Record<string, unknown> }> {
  const tools = ((body as { tools?: { type: string; name: string; description?: string; parameters?: Record<string, unknown> }[] }).tools ?? []).filter((tool) => tool.type === 'function');
  return new Map(tools.map((tool) => [tool.name, tool]));
}
