/**
 * The pieces under project secrets (docs/platform.md, "Secrets"): AES-256-GCM sealing bound to
 * the secret's name, the key file's checks, the `.env` managed block that keeps the user's
 * lines, and the redactor.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { ENV_BLOCK_BEGIN, ENV_BLOCK_END, withManagedBlock, writeEnvFile } from '../../src/platform/secrets/env-file.js';
import { SecretCipher, SecretDecryptionError, SECRETS_KEY_FILE } from '../../src/platform/secrets/secret-cipher.js';
import { SecretRedactor } from '../../src/platform/secrets/secret-redactor.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});
function temporaryDirectory(): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-secrets-'));
  directories.push(directory);
  return directory;
}

it('seals with a 0600 key file, opens only under the same name, and refuses a bad key file naming it', () => {
  const dataDir = temporaryDirectory();
  const cipher = SecretCipher.open(dataDir);
  expect(statSync(path.join(dataDir, SECRETS_KEY_FILE)).mode & 0o777).toBe(0o600);
  const sealed = cipher.encrypt('hunter2-value', 'proj_a/TOKEN');
  expect(sealed).not.toContain('hunter2');
  expect(cipher.encrypt('hunter2-value', 'proj_a/TOKEN')).not.toBe(sealed);
  expect(SecretCipher.open(dataDir).decrypt(sealed, 'proj_a/TOKEN')).toBe('hunter2-value');
  expect(() => cipher.decrypt(sealed, 'proj_b/TOKEN')).toThrow(SecretDecryptionError);
  expect(() => cipher.decrypt(`${sealed.slice(0, -2)}AA`, 'proj_a/TOKEN')).toThrow('cannot be decrypted');
  expect(() => cipher.decrypt('garbage', 'proj_a/TOKEN')).toThrow('not a sealed value');
  chmodSync(path.join(dataDir, SECRETS_KEY_FILE), 0o644);
  expect(() => SecretCipher.open(dataDir)).toThrow(`${path.join(dataDir, SECRETS_KEY_FILE)}: the secrets key is readable by other users (mode 644)`);
  writeFileSync(path.join(dataDir, SECRETS_KEY_FILE), 'short', { mode: 0o600 });
  chmodSync(path.join(dataDir, SECRETS_KEY_FILE), 0o600);
  expect(() => SecretCipher.open(dataDir)).toThrow('a secrets key holds 32 bytes, this file holds 5');
});

it('the managed block keeps the user lines, is replaced whole, and disappears with the last secret', () => {
  const user = 'A=1\n# comment\n\nB="two words"\n';
  const once = withManagedBlock(user, new Map([['Z_KEY', 'zz-value'], ['A_KEY', "it's $x"]]));
  expect(once).toBe(`${user}${ENV_BLOCK_BEGIN}\nA_KEY="it's \\$x"\nZ_KEY=zz-value\n${ENV_BLOCK_END}\n`);
  const edited = `${once}C=after\n`;
  const twice = withManagedBlock(edited, new Map([['Z_KEY', 'new value']]));
  expect(twice).toBe(`${user}C=after\n${ENV_BLOCK_BEGIN}\nZ_KEY='new value'\n${ENV_BLOCK_END}\n`);
  expect(withManagedBlock(twice, new Map())).toBe(`${user}C=after\n`);
  expect(withManagedBlock('', new Map())).toBe('');
  expect(withManagedBlock('NO_NEWLINE=1', new Map([['K', 'value-1']]))).toBe(`NO_NEWLINE=1\n${ENV_BLOCK_BEGIN}\nK=value-1\n${ENV_BLOCK_END}\n`);
});

it('writes .env atomically with mode 0600 and leaves nothing behind when it cannot', async () => {
  const workspace = temporaryDirectory();
  const executor = new LocalExecutor({ name: 'local' });
  writeFileSync(path.join(workspace, '.env'), 'MINE=1\n', { mode: 0o644 });
  await writeEnvFile(executor, workspace, new Map([['TOKEN', 'value-123']]));
  expect(statSync(path.join(workspace, '.env')).mode & 0o777).toBe(0o600);
  expect(readFileSync(path.join(workspace, '.env'), 'utf8')).toContain('MINE=1\n');
  expect(readdirSync(workspace)).toEqual(['.env']);
  // A workspace that is gone: the error names the file, and nothing is created.
  const missing = path.join(workspace, 'missing');
  await expect(writeEnvFile(executor, missing, new Map([['TOKEN', 'value-123']]))).rejects.toThrow(`${missing}/.env: could not be replaced`);
  expect(readdirSync(workspace)).toEqual(['.env']);
  // No secrets and no file: nothing is created.
  const empty = temporaryDirectory();
  await writeEnvFile(executor, empty, new Map());
  expect(readdirSync(empty)).toEqual([]);
  await executor.close();
});

it('the redactor replaces values longest first, in keys and errors too, and returns the same object when nothing matched', () => {
  const redactor = new SecretRedactor();
  const payload = { a: 'nothing here', list: ['x'] };
  expect(redactor.redact(payload)).toBe(payload);
  redactor.setValues(['abc-secret', 'abc-secret-longer']);
  expect(redactor.redact(payload)).toBe(payload);
  expect(redactor.redact({ text: 'see abc-secret-longer and abc-secret', ['key abc-secret']: 1 })).toEqual({ text: 'see *** and ***', 'key ***': 1 });
  expect(redactor.redact(new Error('failed with abc-secret')).message).toBe('failed with ***');
  redactor.setValues(['a.b*c']);
  expect(redactor.redactText('x a.b*c y aXbbc')).toBe('x *** y aXbbc');
});

it('redacts an object shared by many connections once, and again after the values change', () => {
  const redactor = new SecretRedactor();
  redactor.setValues(['shared-secret-1']);
  const event = { method: 'item/delta', params: { delta: { text: 'has shared-secret-1' } } };
  const first = redactor.redactShared(event);
  expect(first).toEqual({ method: 'item/delta', params: { delta: { text: 'has ***' } } });
  expect(redactor.redactShared(event)).toBe(first);
  redactor.setValues(['has']);
  expect(redactor.redactShared(event)).toEqual({ method: 'item/delta', params: { delta: { text: '*** shared-secret-1' } } });
});

it('leaves no secrets.key at all, and no temporary file, when writing a new key fails part-way', async () => {
  const { default: fs } = await import('node:fs');
  const { vi } = await import('vitest');
  const dataDir = temporaryDirectory();
  const realWrite = fs.writeFileSync;
  // A full disk: the first few bytes reach the file, then the write fails.
  const failing = vi.spyOn(fs, 'writeFileSync').mockImplementation((file, data) => {
    realWrite(file as string, Buffer.from(data as Uint8Array).subarray(0, 5), { mode: 0o600 });
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  });
  try {
    expect(() => SecretCipher.open(dataDir)).toThrow('ENOSPC');
  } finally {
    failing.mockRestore();
  }
  expect(readdirSync(dataDir)).toEqual([]);
  // The next start makes a whole key, which then stays the key.
  const sealed = SecretCipher.open(dataDir).encrypt('value', 'proj_a/TOKEN');
  expect(statSync(path.join(dataDir, SECRETS_KEY_FILE)).size).toBe(32);
  expect(SecretCipher.open(dataDir).decrypt(sealed, 'proj_a/TOKEN')).toBe('value');
  expect(readdirSync(dataDir)).toEqual([SECRETS_KEY_FILE]);
});

it('creates the key on a file system without hard links, by a rename', async () => {
  const { default: fs } = await import('node:fs');
  const { vi } = await import('vitest');
  const dataDir = temporaryDirectory();
  const noLinks = vi.spyOn(fs, 'linkSync').mockImplementation(() => {
    throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
  });
  try {
    const sealed = SecretCipher.open(dataDir).encrypt('value', 'proj_a/TOKEN');
    expect(SecretCipher.open(dataDir).decrypt(sealed, 'proj_a/TOKEN')).toBe('value');
  } finally {
    noLinks.mockRestore();
  }
  expect(readdirSync(dataDir)).toEqual([SECRETS_KEY_FILE]);
  expect(statSync(path.join(dataDir, SECRETS_KEY_FILE)).mode & 0o777).toBe(0o600);
});

it('a server starting with a secrets.key readable by others tightens it to 0600, logs from and to, and starts', async () => {
  const { createTestEnvironment } = await import('../helpers/environment.js');
  const { startPlatformServer } = await import('./two-users.js');
  const { pino } = await import('pino');
  const environment = await createTestEnvironment('responses: []\n');
  const dataDir = environment.paths.dataDir;
  const key = path.join(dataDir, SECRETS_KEY_FILE);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const sealed = SecretCipher.open(dataDir).encrypt('value-before', 'proj_a/TOKEN');
  chmodSync(key, 0o644);
  const serverLog = path.join(environment.root, 'server.log');
  const harness = await startPlatformServer('responses: []\n', { environment, logger: pino({ level: 'info' }, pino.destination({ dest: serverLog, sync: true })) });
  try {
    expect(statSync(key).mode & 0o777).toBe(0o600);
    const lines = readFileSync(serverLog, 'utf8')
      .split('\n')
      .filter((line) => line.includes('permissions were open to other users: tightened'))
      .map((line) => JSON.parse(line) as { path: string; from: string; to: string });
    expect(lines).toContainEqual(expect.objectContaining({ path: key, from: '0644', to: '0600' }));
    // The same key: what it sealed before still opens.
    expect(SecretCipher.open(dataDir).decrypt(sealed, 'proj_a/TOKEN')).toBe('value-before');
  } finally {
    await harness.stop();
    await environment.dispose();
  }
});

it('a secrets.key that cannot be tightened (a symbolic link to a file readable by others) is still refused', async () => {
  const { symlinkSync } = await import('node:fs');
  const { tightenPermissions } = await import('../../src/server/private-files.js');
  const { createLogger } = await import('../../src/logger.js');
  const root = temporaryDirectory();
  const dataDir = path.join(root, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  const elsewhere = path.join(root, 'key-elsewhere');
  writeFileSync(elsewhere, Buffer.alloc(32, 7), { mode: 0o644 });
  chmodSync(elsewhere, 0o644);
  symlinkSync(elsewhere, path.join(dataDir, SECRETS_KEY_FILE));
  tightenPermissions({ dataDir, stateDir: path.join(root, 'state'), configDir: path.join(root, 'config') }, createLogger('silent'));
  expect(statSync(elsewhere).mode & 0o777).toBe(0o644);
  expect(() => SecretCipher.open(dataDir)).toThrow('the secrets key is readable by other users (mode 644)');
});
