import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultAgentName, loadAgentsFile } from '../../src/config/agents.js';
import { ConfigError } from '../../src/config/yaml-file.js';
import { evaluatePolicy, globToRegExp } from '../../src/runtime/approvals/policy.js';

const directories: string[] = [];
afterEach(() => directories.splice(0).forEach((directory) => rmSync(directory, { recursive: true, force: true })));
function configDir(text?: string): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-agents-'));
  directories.push(directory);
  if (text !== undefined) writeFileSync(path.join(directory, 'agents.yaml'), text);
  return directory;
}

describe('agents.yaml', () => {
  it('has one built-in default agent when the file is missing', async () => {
    const file = await loadAgentsFile(configDir());
    expect(defaultAgentName(file)).toBe('default');
  });

  it('names the file, line and key path of mistakes', async () => {
    const directory = configDir(`agents:
  coder:
    default: true
    approvals:
      default: maybe
  reviewer:
    default: true
`);
    const error = await loadAgentsFile(directory).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(`${path.join(directory, 'agents.yaml')}:5: agents.coder.approvals.default:`);
  });

  it('refuses two default agents', async () => {
    const error = await loadAgentsFile(configDir('agents:\n  a: { default: true }\n  b: { default: true }\n')).catch((caught: unknown) => caught);
    expect((error as ConfigError).message).toMatch(/agents\.b: only one agent may be the default/);
  });
});

describe('approval policy', () => {
  const policy = {
    default: 'allow' as const,
    rules: [
      { tool: 'exec_command', match: { command: ['git push*'] }, decision: 'ask' as const },
      { tool: 'exec_command', match: { command: 'rm -rf *' }, decision: 'deny' as const },
      { tool: 'mcp__*', decision: 'ask' as const },
    ],
  };

  it('lets the first matching rule decide, then the default', () => {
    expect(evaluatePolicy(policy, 'exec_command', { command: 'git push origin main' })).toEqual({ decision: 'ask', ruleIndex: 0 });
    expect(evaluatePolicy(policy, 'exec_command', { command: '  rm -rf /  ' })).toEqual({ decision: 'deny', ruleIndex: 1 });
    expect(evaluatePolicy(policy, 'exec_command', { command: 'git status' })).toEqual({ decision: 'allow' });
    expect(evaluatePolicy(policy, 'mcp__files__read', {})).toEqual({ decision: 'ask', ruleIndex: 2 });
    expect(evaluatePolicy(policy, 'exec_command', { command: 42 })).toEqual({ decision: 'allow' });
  });

  it('gates a tool without side effects only by a rule naming it exactly', () => {
    const askAll = { default: 'ask' as const, rules: [{ tool: '*', decision: 'deny' as const }, { tool: 'request_*', decision: 'ask' as const }] };
    expect(evaluatePolicy(askAll, 'request_user_input', { question: 'x' }, { sideEffects: false })).toEqual({ decision: 'allow' });
    expect(evaluatePolicy(askAll, 'request_user_input', { question: 'x' })).toEqual({ decision: 'deny', ruleIndex: 0 });
    const named = { default: 'allow' as const, rules: [{ tool: 'request_user_input', match: { question: 'Deploy*' }, decision: 'deny' as const }, { tool: 'request_user_input', decision: 'ask' as const }] };
    expect(evaluatePolicy(named, 'request_user_input', { question: 'Deploy now?' }, { sideEffects: false })).toEqual({ decision: 'deny', ruleIndex: 0 });
    expect(evaluatePolicy(named, 'request_user_input', { question: 'Which db?' }, { sideEffects: false })).toEqual({ decision: 'ask', ruleIndex: 1 });
  });

  it('treats glob characters only as globs', () => {
    expect(globToRegExp('a.b*').test('a.bcd')).toBe(true);
    expect(globToRegExp('a.b*').test('axbcd')).toBe(false);
    expect(globToRegExp('run (x)?').test('run (x)1')).toBe(true);
  });
});
