/**
 * credentials.json holds every stored API key, so it is replaced whole or not at all: a write
 * that fails part-way (a full disk) leaves the old keys readable and no temporary file, and the
 * file stays mode 0600 whatever mode it had.
 */
import fs, { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { CREDENTIALS_FILE, readStoredApiKey, removeApiKey, storeApiKey } from '../../src/config/credentials.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

it('keeps the stored keys when replacing the file fails part-way, and stays 0600', () => {
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'openvaala-credentials-'));
  directories.push(configDir);
  storeApiKey(configDir, 'openai', 'sk-first');
  const file = path.join(configDir, CREDENTIALS_FILE);
  chmodSync(file, 0o644);
  const realWrite = fs.writeFileSync;
  const failing = vi.spyOn(fs, 'writeFileSync').mockImplementation((target, data) => {
    realWrite(target as string, String(data).slice(0, 7));
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  });
  syncBuiltinESMExports();
  try {
    expect(() => storeApiKey(configDir, 'anthropic', 'sk-second')).toThrow('ENOSPC');
    expect(() => removeApiKey(configDir, 'openai')).toThrow('ENOSPC');
  } finally {
    failing.mockRestore();
    syncBuiltinESMExports();
  }
  expect(readStoredApiKey(configDir, 'openai')).toBe('sk-first');
  expect(readdirSync(configDir)).toEqual([CREDENTIALS_FILE]);
  storeApiKey(configDir, 'anthropic', 'sk-second');
  expect(readStoredApiKey(configDir, 'anthropic')).toBe('sk-second');
  expect(statSync(file).mode & 0o777).toBe(0o600);
});
