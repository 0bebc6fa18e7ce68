/**
 * What `openvaala auth` prints for a person to run next acts on the configuration directory it
 * was given: `auth set`'s note on an unreadable `providers.yaml` (with each problem on its own
 * line) and `auth list`'s hint when no key is stored.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runAuthList, runAuthSet } from '../../src/cli/auth.js';
import { readCredentials } from '../../src/config/credentials.js';
import { capturedStreams } from './exec-harness.js';

let configDir: string;
beforeEach(() => {
  configDir = mkdtempSync(path.join(os.tmpdir(), 'openvaala-auth-notes-'));
});
afterEach(() => rmSync(configDir, { recursive: true, force: true }));

it('names the directory in the config check it suggests for an unreadable providers.yaml, and lists one problem per line', async () => {
  writeFileSync(path.join(configDir, 'providers.yaml'), 'providers:\n  mock: { kind: openai-compatible, baseUrl: http://127.0.0.1:1/v1 }\n  local: { kind: nope }\n');
  const output = capturedStreams();
  const stdin = Readable.from([Buffer.from('sk-test-key\n')]) as unknown as NodeJS.ReadStream;
  expect(await runAuthSet(configDir, 'other', output.streams, stdin)).toBe(0);
  expect(readCredentials(configDir).providers.other?.apiKey).toBe('sk-test-key');
  const lines = output.stderr().trimEnd().split('\n');
  expect(lines[0]).toBe(`note: providers.yaml cannot be read; fix it with: openvaala config check --config-dir ${configDir}`);
  const problems = lines.slice(1);
  expect(problems.length).toBeGreaterThanOrEqual(2);
  for (const line of problems) expect(line).toMatch(new RegExp(`^${path.join(configDir, 'providers.yaml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: providers\\.`));
});

it('names the directory in the auth set it suggests when no key is stored', () => {
  const output = capturedStreams();
  expect(runAuthList(configDir, output.streams)).toBe(0);
  expect(output.stdout()).toBe('');
  expect(output.stderr()).toBe(`no keys stored (store one with: openvaala auth set --config-dir ${configDir} <provider>)\n`);
});
