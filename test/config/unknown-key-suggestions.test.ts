/**
 * An unknown key in a configuration file is told at its own line and key path, with the known
 * key of its mapping it most likely meant, at any depth: in a file's top level, in an entry of
 * a mapping of names, in a form of a discriminated union chosen by its tag, in lists and in
 * unions of a boolean and a mapping.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentsFileSchema } from '../../src/config/agents.js';
import { ExecutorsFileSchema } from '../../src/config/executors.js';
import { HooksFileSchema } from '../../src/config/hooks.js';
import { McpFileSchema } from '../../src/config/mcp.js';
import { ProvidersFileSchema } from '../../src/config/providers.js';
import { ServerSettingsSchema } from '../../src/config/server-settings.js';
import { ConfigError, parseYamlFile } from '../../src/config/yaml-file.js';
import { knownKeysAt } from '../../src/validation-issues.js';

/** The lines of the error a file's text is refused with. */
function problems(file: string, text: string, schema: z.ZodType): string[] {
  try {
    parseYamlFile(file, text, schema);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message.split('\n');
  }
  throw new Error(`${file} was accepted`);
}

describe('unknown keys in configuration files', () => {
  it.each([
    ['providers.yaml', 'provider:\n  a: { kind: openai }\n', ProvidersFileSchema, 'providers.yaml:1: provider: Unrecognized key: "provider" (did you mean "providers"?)'],
    ['providers.yaml', 'providers:\n  a:\n    kind: openai-compatible\n    baseUrl: http://127.0.0.1:9/v1\n', ProvidersFileSchema, 'providers.yaml:4: providers.a.baseUrl: Unrecognized key: "baseUrl" (did you mean "baseURL"?)'],
    ['providers.yaml', 'providers:\n  a:\n    kind: openai\n    models:\n      m: { reasoning: { efort: high } }\n', ProvidersFileSchema, 'providers.yaml:5: providers.a.models.m.reasoning.efort: Unrecognized key: "efort" (did you mean "effort"?)'],
    ['executors.yaml', 'executors:\n  box:\n    kind: ssh\n    host: h\n    user: u\n    identityfile: ~/.ssh/id\n', ExecutorsFileSchema, 'executors.yaml:6: executors.box.identityfile: Unrecognized key: "identityfile" (did you mean "identityFile"?)'],
    ['executors.yaml', 'executors:\n  box: { kind: local, sandbox: bwrap, writeablePaths: [/tmp] }\n', ExecutorsFileSchema, 'executors.yaml:2: executors.box.writeablePaths: Unrecognized key: "writeablePaths" (did you mean "writablePaths"?)'],
    ['executors.yaml', 'executors:\n  box: { kind: local, environment: { includes: [A] } }\n', ExecutorsFileSchema, 'executors.yaml:2: executors.box.environment.includes: Unrecognized key: "includes" (did you mean "include"?)'],
    ['agents.yaml', 'agents:\n  default:\n    approvals:\n      rules:\n        - tool: exec_command\n          decison: deny\n', AgentsFileSchema, 'agents.yaml:6: agents.default.approvals.rules[0].decison: Unrecognized key: "decison" (did you mean "decision"?)'],
    ['mcp.yaml', 'servers:\n  files: { transport: stdio, command: x, arg: [a] }\n', McpFileSchema, 'mcp.yaml:2: servers.files.arg: Unrecognized key: "arg" (did you mean "args"?)'],
    ['mcp.yaml', 'servers:\n  web: { transport: http, url: "http://127.0.0.1:9/mcp", header: { A: b } }\n', McpFileSchema, 'mcp.yaml:2: servers.web.header: Unrecognized key: "header" (did you mean "headers"?)'],
    ['hooks.yaml', 'hooks:\n  pre_tool_use:\n    - { command: "true", timeout: 5 }\n', HooksFileSchema, 'hooks.yaml:3: hooks.pre_tool_use[0].timeout: Unrecognized key: "timeout" (did you mean "timeoutMs"?)'],
    ['hooks.yaml', 'hooks:\n  pre_tool_us:\n    - { command: "true" }\n', HooksFileSchema, 'hooks.yaml:2: hooks.pre_tool_us: Unrecognized key: "pre_tool_us" (did you mean "pre_tool_use"?)'],
    ['server.yaml', 'limits:\n  retry:\n    maxRetry: 3\n', ServerSettingsSchema, 'server.yaml:3: limits.retry.maxRetry: Unrecognized key: "maxRetry" (did you mean "maxRetries"?)'],
    ['server.yaml', 'notifications:\n  webhooks:\n    - { url: "http://127.0.0.1:9/", secret: env:S, event: [turn_failed] }\n', ServerSettingsSchema, 'server.yaml:3: notifications.webhooks[0].event: Unrecognized key: "event" (did you mean "events"?)'],
  ])('%s: %j', (file, text, schema, expected) => {
    expect(problems(file, text, schema)).toContain(expected);
  });

  it.each([
    ['agents.yaml', 'agents:\n  default:\n    kind: codex-app-server\n    command: [codex]\n    codex: { approvalPolicy: on-requst }\n', AgentsFileSchema, 'agents.yaml:5: agents.default.codex.approvalPolicy: "on-requst" is not one of "untrusted", "on-failure", "on-request", "never" (did you mean "on-request"?)'],
    ['agents.yaml', 'agents:\n  default:\n    approvals:\n      default: aks\n', AgentsFileSchema, 'agents.yaml:4: agents.default.approvals.default: "aks" is not one of "allow", "ask", "deny" (did you mean "ask"?)'],
    ['agents.yaml', 'agents:\n  default:\n    approvals:\n      rules:\n        - { tool: exec_command, decision: dney }\n', AgentsFileSchema, 'agents.yaml:5: agents.default.approvals.rules[0].decision: "dney" is not one of "allow", "ask", "deny" (did you mean "deny"?)'],
    ['executors.yaml', 'executors:\n  box: { kind: local, sandbox: bwarp }\n', ExecutorsFileSchema, 'executors.yaml:2: executors.box.sandbox: "bwarp" is not "bwrap" (did you mean "bwrap"?)'],
    ['providers.yaml', 'providers:\n  a:\n    kind: openai\n    models:\n      m: { reasoning: { effort: hgih } }\n', ProvidersFileSchema, 'providers.yaml:5: providers.a.models.m.reasoning.effort: "hgih" is not one of'],
  ])('a misspelt value in %s is told the allowed values and the one meant: %j', (file, text, schema, expected) => {
    expect(problems(file, text, schema).some((line) => line.startsWith(expected)), problems(file, text, schema).join('\n')).toBe(true);
    expect(problems(file, text, schema).join('\n')).not.toContain('Invalid option');
  });

  it('suggests nothing when no known key is near, and never the unknown key itself', () => {
    expect(problems('agents.yaml', 'agents:\n  default: { colour: red }\n', AgentsFileSchema)).toContain('agents.yaml:2: agents.default.colour: Unrecognized key: "colour"');
    // Two unknown keys near each other: each is told the known key, not the other unknown one.
    const both = problems('mcp.yaml', 'servers:\n  files: { transport: stdio, command: x, arg: [a], argz: [b] }\n', McpFileSchema);
    expect(both).toContain('mcp.yaml:2: servers.files.arg: Unrecognized key: "arg" (did you mean "args"?)');
    expect(both).toContain('mcp.yaml:2: servers.files.argz: Unrecognized key: "argz" (did you mean "args"?)');
  });

  it('finds the known keys of the form a tag selects, through lists, records and defaults', () => {
    const root = { executors: { box: { kind: 'virtual' } } };
    expect(knownKeysAt(ExecutorsFileSchema, ['executors', 'box'], root).sort()).toEqual(['files', 'kind', 'seedDirectory']);
    expect(knownKeysAt(ExecutorsFileSchema, [], root)).toEqual(['executors']);
    // A path that leads to no mapping of fixed keys (a record's names) knows none.
    expect(knownKeysAt(ExecutorsFileSchema, ['executors'], root)).toEqual([]);
    expect(knownKeysAt(HooksFileSchema, ['hooks', 'stop', 0], { hooks: { stop: [{}] } }).sort()).toEqual(['command', 'matcher', 'timeoutMs']);
  });
});
