/**
 * What `config check` warns about (the check still passes: a server starts without them):
 * provider keys this shell lacks and configured paths this machine lacks. Warnings are printed
 * with the problems too, so fixing the problems never reveals more to fix.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runConfigCheck } from '../../src/cli/config-check.js';

const UNSET = 'OPENVAALA_TEST_CONFIG_CHECK_WARNINGS_KEY';
let directory: string;
beforeEach(() => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-config-check-warnings-'));
  delete process.env[UNSET];
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(directory, name), content);
}

/** Runs the check on a path (default: the directory) and returns its exit code and output. */
async function check(target = directory): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        output[name] += chunk.toString();
        done();
      },
    });
  const code = await runConfigCheck({ configDir: directory, path: target }, { stdout: stream('stdout'), stderr: stream('stderr') });
  return { code, ...output };
}

const PROVIDERS = `providers:\n  remote: { kind: openai, apiKey: env:${UNSET} }\ndefaultModel: remote/m\n`;
const EXECUTORS = 'executors:\n  build: { kind: ssh, host: build.example.org, user: dev, identityFile: keys/id_missing }\n  sandboxed: { kind: local, sandbox: bwrap, readablePaths: [/nowhere/.gitconfig] }\n';
const KEY_WARNING = `warning: providers.yaml: providers.remote.apiKey: the environment variable ${UNSET} is not set in this shell`;

describe('config check warnings', () => {
  it('warns about each configured path the machine lacks, with the file and key path, and passes', async () => {
    write({ 'executors.yaml': EXECUTORS });
    const result = await check();
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${directory}: valid`);
    expect(result.stderr).toContain(`warning: executors.yaml: executors.build.identityFile: ${path.join(directory, 'keys', 'id_missing')} does not exist; the executor cannot connect`);
    expect(result.stderr).toContain('warning: executors.yaml: executors.sandboxed.readablePaths[0]: /nowhere/.gitconfig does not exist; every command of this executor fails');
    // Once the key is there, nothing is said about it.
    write({ 'executors.yaml': `executors:\n  build: { kind: ssh, host: build.example.org, user: dev, identityFile: ${path.join(directory, 'executors.yaml')} }\n` });
    expect((await check()).stderr).toBe('');
  });

  it('prints every warning and every problem when there are both', async () => {
    write({ 'providers.yaml': PROVIDERS, 'executors.yaml': EXECUTORS, 'mcp.yaml': 'servers:\n  web: { transport: http }\n' });
    const result = await check();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(KEY_WARNING);
    expect(result.stderr).toContain('warning: executors.yaml: executors.build.identityFile:');
    expect(result.stderr).toContain(`${path.join(directory, 'mcp.yaml')}:2: servers.web.url: required`);
    expect(result.stderr).toMatch(/\n1 problem in .*\n$/);
  });

  it('warns about the values of the very file that has problems', async () => {
    write({ 'providers.yaml': PROVIDERS.replace('defaultModel', '  other: { kind: nope }\ndefaultModel'), 'executors.yaml': `${EXECUTORS}  broken: { kind: ssh, host: h }\n` });
    const result = await check();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(KEY_WARNING);
    expect(result.stderr).toContain('warning: executors.yaml: executors.build.identityFile:');
    expect(result.stderr).toContain('executors.broken.user: required, but missing');
    expect(result.stderr).toContain('providers.other.kind:');
  });

  it('shows only the warnings of the file checked alone', async () => {
    write({ 'providers.yaml': PROVIDERS, 'executors.yaml': EXECUTORS, 'mcp.yaml': 'servers:\n  web: { transport: http }\n' });
    const executors = await check(path.join(directory, 'executors.yaml'));
    expect(executors.code).toBe(0);
    expect(executors.stderr).toContain('warning: executors.yaml: executors.build.identityFile:');
    expect(executors.stderr).not.toContain('providers.yaml');
    expect(executors.stderr).toContain('1 problem in other files of');
    const providers = await check(path.join(directory, 'providers.yaml'));
    expect(providers.stderr).toContain(KEY_WARNING);
    expect(providers.stderr).not.toContain('executors.yaml');
  });

  it('warns about each personal skill every turn would skip, naming its SKILL.md, line and field', async () => {
    write({ 'providers.yaml': 'providers: {}\n' });
    for (const [folder, text] of [
      ['broken', '---\nname: [oops\n---\nbody\n'],
      ['renamed', '---\nname: other-name\ndescription: fine\n---\nbody\n'],
      ['good', '---\nname: good\ndescription: fine\n---\nbody\n'],
    ]) {
      mkdirSync(path.join(directory, 'skills', folder as string), { recursive: true });
      writeFileSync(path.join(directory, 'skills', folder as string, 'SKILL.md'), text as string);
    }
    const result = await check();
    expect(result.code).toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines).toContain(`warning: skill skipped by every turn: ${path.join(directory, 'skills', 'renamed', 'SKILL.md')}:2: name: "other-name" does not match the folder name "renamed"`);
    expect(lines.find((line) => line.includes(path.join('broken', 'SKILL.md')))).toMatch(/:2: \(front matter\): invalid YAML: [^\n]*[^:]$/);
  });

  it('suggests the known key an unknown one most likely meant', async () => {
    write({ 'executors.yaml': 'executors:\n  build:\n    kind: ssh\n    host: h\n    user: u\n    agent: true\n    identiyFile: ~/.ssh/id\n' });
    const result = await check();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${path.join(directory, 'executors.yaml')}:7: executors.build.identiyFile: Unrecognized key: "identiyFile" (did you mean "identityFile"?)`);
  });
});
