/**
 * `hooks.yaml` validation: every mistake is named by file, line and key path, and a server
 * does not start with an invalid file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/config/configuration.js';
import { compileToolMatcher, DEFAULT_HOOK_TIMEOUT_MS, loadHooksFile } from '../../src/config/hooks.js';
import { ConfigError } from '../../src/config/yaml-file.js';
import { createLogger } from '../../src/logger.js';
import { startRuntimeServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

const directories: string[] = [];
let environment: TestEnvironment | undefined;
afterEach(async () => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  await environment?.dispose();
  environment = undefined;
});

function configDir(hooksYaml?: string): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-hooks-config-'));
  directories.push(directory);
  if (hooksYaml !== undefined) writeFileSync(path.join(directory, 'hooks.yaml'), hooksYaml);
  return directory;
}

async function problemsOf(hooksYaml: string): Promise<string> {
  const error = await loadHooksFile(configDir(hooksYaml)).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message;
}

describe('hooks.yaml', () => {
  it('means no hooks when missing, and fills in the default timeout', async () => {
    expect((await loadHooksFile(configDir())).hooks.pre_tool_use).toEqual([]);
    const file = await loadHooksFile(configDir('hooks:\n  stop:\n    - command: ./check.sh\n'));
    expect(file.hooks.stop).toEqual([{ command: './check.sh', timeoutMs: DEFAULT_HOOK_TIMEOUT_MS }]);
  });

  it('names the file, line and key path of an unknown event', async () => {
    const message = await problemsOf('hooks:\n  pre_tool_use: []\n  before_tool: []\n');
    expect(message).toMatch(/hooks\.yaml:\d+: hooks\.before_tool: Unrecognized key: "before_tool"/);
  });

  it('names a missing command and a timeout out of range', async () => {
    const message = await problemsOf('hooks:\n  pre_tool_use:\n    - matcher: exec_command\n    - command: ok\n      timeoutMs: 9999999\n');
    expect(message).toMatch(/hooks\.yaml:3: hooks\.pre_tool_use\[0\]\.command: /);
    expect(message).toMatch(/hooks\.yaml:5: hooks\.pre_tool_use\[1\]\.timeoutMs: /);
  });

  it('names a matcher that is not a valid regular expression, and a matcher on an event that is not about a tool', async () => {
    const message = await problemsOf('hooks:\n  post_tool_use:\n    - { matcher: "exec_(", command: x }\n  session_start:\n    - { matcher: "*", command: y }\n');
    expect(message).toMatch(/hooks\.yaml:3: hooks\.post_tool_use\[0\]\.matcher: not a valid glob or regular expression/);
    expect(message).toMatch(/hooks\.yaml:5: hooks\.session_start\[0\]\.matcher: only pre_tool_use and post_tool_use hooks take a matcher/);
  });

  it('names the line of a YAML syntax error', async () => {
    expect(await problemsOf('hooks:\n  stop:\n    - { command: "x"\n')).toMatch(/hooks\.yaml:\d+: \(YAML syntax\): /);
  });

  it('reads a matcher as a glob when it only has name characters and wildcards, else as a regular expression', () => {
    expect(compileToolMatcher('mcp__*').test('mcp__github__search')).toBe(true);
    expect(compileToolMatcher('exec_command').test('exec_command_2')).toBe(false);
    expect(compileToolMatcher('apply_patch|exec_command').test('exec_command')).toBe(true);
    expect(compileToolMatcher('(read|list)_.*').test('grep')).toBe(false);
  });

  it('stops a server from starting, naming file, line and key path', async () => {
    environment = await createTestEnvironment('responses: []\n');
    writeFileSync(path.join(environment.paths.configDir, 'hooks.yaml'), 'hooks:\n  pre_tool_use:\n    - command: ""\n');
    const error = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigurationError);
    const [problem] = (error as ConfigurationError).errors;
    expect(problem).toBeInstanceOf(ConfigError);
    expect(problem?.file).toBe(path.join(environment.paths.configDir, 'hooks.yaml'));
    expect(problem?.problems[0]).toMatchObject({ line: 3, keyPath: 'hooks.pre_tool_use[0].command' });
  });
});
