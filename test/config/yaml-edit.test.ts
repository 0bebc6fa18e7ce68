/**
 * `config/update` edits only the values it changes: every other byte of the file (comments,
 * blank lines, CRLF, odd indentation, flow mappings, quoting) is kept.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { updateConfigurationFiles } from '../../src/config/config-writer.js';
import { editYamlText } from '../../src/config/yaml-edit.js';

const PROVIDERS = [
  '# Providers of the team.',
  '',
  'providers:',
  '   # three-space indentation, kept',
  "   openai: { kind: openai, apiKey: 'env:OPENAI_API_KEY' }   # flow mapping, single quotes",
  '',
  '',
  '   local:',
  '      kind:    openai-compatible',
  '      baseURL: "http://127.0.0.1:11434/v1"  # double quotes',
  'defaultModel: openai/gpt-5.5 # the usual one',
  '',
].join('\n');

describe('editing YAML text in place', () => {
  it('replaces one scalar and keeps every other byte', () => {
    const edited = editYamlText(PROVIDERS, ['defaultModel'], { value: 'local/qwen3-coder' });
    expect(edited).toBe(PROVIDERS.replace('defaultModel: openai/gpt-5.5 #', 'defaultModel: local/qwen3-coder #'));
  });

  it('edits inside a flow mapping', () => {
    expect(editYamlText(PROVIDERS, ['providers', 'openai', 'apiKey'], { value: 'env:OTHER_KEY' })).toBe(PROVIDERS.replace("apiKey: 'env:OPENAI_API_KEY'", 'apiKey: env:OTHER_KEY'));
    expect(editYamlText(PROVIDERS, ['providers', 'openai', 'baseURL'], { value: 'https://example.org/v1' })).toBe(PROVIDERS.replace("apiKey: 'env:OPENAI_API_KEY' }", "apiKey: 'env:OPENAI_API_KEY', baseURL: https://example.org/v1 }"));
    expect(editYamlText(PROVIDERS, ['providers', 'openai', 'apiKey'], { remove: true })).toBe(PROVIDERS.replace(", apiKey: 'env:OPENAI_API_KEY'", ''));
  });

  it('adds a key to a block mapping with its own indentation, after the last entry', () => {
    const edited = editYamlText(PROVIDERS, ['providers', 'claude'], { value: { kind: 'anthropic', apiKey: 'env:ANTHROPIC_API_KEY' } });
    expect(edited).toBe(PROVIDERS.replace('  # double quotes\n', '  # double quotes\n   claude: { kind: anthropic, apiKey: env:ANTHROPIC_API_KEY }\n'));
    expect(editYamlText(PROVIDERS, ['providers', 'local', 'headers', 'X-Team'], { value: 'a, b' })).toBe(PROVIDERS.replace('  # double quotes\n', '  # double quotes\n      headers: { X-Team: "a, b" }\n'));
  });

  it('removes a block entry with its lines only', () => {
    expect(editYamlText(PROVIDERS, ['providers', 'local'], { remove: true })).toBe(PROVIDERS.replace('   local:\n      kind:    openai-compatible\n      baseURL: "http://127.0.0.1:11434/v1"  # double quotes\n', ''));
    expect(editYamlText(PROVIDERS, ['providers', 'local', 'kind'], { remove: true })).toBe(PROVIDERS.replace('      kind:    openai-compatible\n', ''));
  });

  it('keeps CRLF line endings and writes new lines with CRLF', () => {
    const crlf = PROVIDERS.replace(/\n/g, '\r\n');
    expect(editYamlText(crlf, ['defaultModel'], { value: 'local/x' })).toBe(crlf.replace('openai/gpt-5.5', 'local/x'));
    expect(editYamlText(crlf, ['providers', 'gemini'], { value: { kind: 'google' } })).toBe(crlf.replace('# double quotes\r\n', '# double quotes\r\n   gemini: { kind: google }\r\n'));
    expect(editYamlText(crlf, ['limits'], { value: { maxStepsPerTurn: 5 } })).toBe(`${crlf}limits: { maxStepsPerTurn: 5 }\r\n`);
  });

  it('writes strings that need quoting quoted, and multi-line strings as JSON strings', () => {
    const text = 'agents:\n  default:\n    instructions: "short"\n';
    expect(editYamlText(text, ['agents', 'default', 'instructions'], { value: 'line one\nline two: yes' })).toBe('agents:\n  default:\n    instructions: "line one\\nline two: yes"\n');
    expect(editYamlText(text, ['agents', 'default', 'model'], { value: '#not-a-comment' })).toBe(`${text}    model: "#not-a-comment"\n`);
  });

  it('fills an empty file, a file of comments only, and a key left empty', () => {
    expect(editYamlText('', ['defaultModel'], { value: 'a/b' })).toBe('defaultModel: a/b\n');
    expect(editYamlText('# nothing yet', ['defaultModel'], { value: 'a/b' })).toBe('# nothing yet\ndefaultModel: a/b\n');
    expect(editYamlText('providers:\n# later\n', ['providers', 'x'], { value: { kind: 'openai' } })).toBe('providers: { x: { kind: openai } }\n# later\n');
  });

  it('edits lists, block and flow', () => {
    const text = 'allowedOrigins:\n  - http://a.example   # first\n  - http://b.example\nother: [1, 2]\n';
    expect(editYamlText(text, ['allowedOrigins', 2], { value: 'http://c.example' })).toBe(text.replace('  - http://b.example\n', '  - http://b.example\n  - http://c.example\n'));
    expect(editYamlText(text, ['allowedOrigins', 0], { remove: true })).toBe(text.replace('  - http://a.example   # first\n', ''));
    expect(editYamlText(text, ['other', 2], { value: 3 })).toBe(text.replace('[1, 2]', '[1, 2, 3]'));
    expect(editYamlText(text, ['other', 0], { remove: true })).toBe(text.replace('[1, 2]', '[2]'));
  });
});

describe('editing nested values in place', () => {
  const AGENTS = 'agents:\n  default:\n    approvals:\n      rules:\n        - tool: exec_command   # keep\n          decision: ask\n        - { tool: x, decision: deny }\n  other:\n    maxSteps: 3\n';

  it('replaces a block mapping by a flow one, keeping the lines around it', () => {
    expect(editYamlText(AGENTS, ['agents', 'default', 'approvals'], { value: { default: 'ask' } })).toBe(
      'agents:\n  default:\n    approvals:\n      { default: ask }\n  other:\n    maxSteps: 3\n',
    );
  });

  it('adds a key to a mapping that is a list item, at the column of its first key', () => {
    expect(editYamlText(AGENTS, ['agents', 'default', 'approvals', 'rules', 0, 'match'], { value: { command: ['git push*'] } })).toBe(
      AGENTS.replace('          decision: ask\n', '          decision: ask\n          match: { command: [ git push* ] }\n'),
    );
  });
});

describe('config/update on the files', () => {
  let directory: string | undefined;
  afterEach(() => {
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it('leaves untouched lines of every edited file byte for byte', async () => {
    directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-writer-'));
    const providers = PROVIDERS.replace(/\n/g, '\r\n');
    const agents = '# agents\n\nagents:\n  default:\n      default: true      # odd indentation\n      maxSteps: 50\n';
    writeFileSync(path.join(directory, 'providers.yaml'), providers);
    writeFileSync(path.join(directory, 'agents.yaml'), agents);
    await updateConfigurationFiles(directory, [
      { file: 'providers', path: ['defaultModel'], value: 'local/qwen3-coder' },
      { file: 'agents', path: ['agents', 'default', 'maxSteps'], value: 80 },
      { file: 'agents', path: ['agents', 'reviewer'], value: { model: 'openai/gpt-5.5' } },
    ]);
    expect(readFileSync(path.join(directory, 'providers.yaml'), 'utf8')).toBe(providers.replace('openai/gpt-5.5 #', 'local/qwen3-coder #'));
    expect(readFileSync(path.join(directory, 'agents.yaml'), 'utf8')).toBe(agents.replace('maxSteps: 50\n', 'maxSteps: 80\n  reviewer: { model: openai/gpt-5.5 }\n'));
  });
});
