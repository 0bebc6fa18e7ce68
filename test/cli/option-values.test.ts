/**
 * Option values no command could use are refused by the real CLI before it does anything,
 * naming the option (exit 64): a --web-root that is no directory, an empty file to import.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/environment.js';
import { useIsolatedHome } from '../helpers/isolated-home.js';

const isolatedEnv = useIsolatedHome('option-values-');

it('refuses a --web-root that is missing or a file, before serving anything', async () => {
  const env = isolatedEnv();
  const missing = await runCli(['serve', '--port', '0', '--web-root', path.join(isolatedEnv.home(), 'nowhere')], { env });
  expect(missing.code).toBe(64);
  expect(missing.stderr).toContain(`--web-root ${path.join(isolatedEnv.home(), 'nowhere')}: no such directory`);
  const file = path.join(isolatedEnv.home(), 'file.txt');
  writeFileSync(file, 'x');
  const notDirectory = await runCli(['serve', '--port', '0', '--web-root', file], { env });
  expect(notDirectory.code).toBe(64);
  expect(notDirectory.stderr).toContain(`--web-root ${file}: not a directory`);
});

it('says an empty file to import is empty, for an archive and for a Codex rollout', async () => {
  const env = isolatedEnv();
  const empty = path.join(isolatedEnv.home(), 'empty.jsonl');
  writeFileSync(empty, '\n');
  const archive = await runCli(['import', empty], { env });
  expect(archive.code).toBe(64);
  expect(archive.stderr).toContain(`${empty}: the file is empty; an archive (from openvaala export) holds one JSON object per line`);
  const rollout = await runCli(['import', '--from', 'codex', empty], { env });
  expect(rollout.code).toBe(64);
  expect(rollout.stderr).toContain(`${empty}: the file is empty; a Codex rollout holds one JSON object per line`);
});

it('refuses an explicit --config-dir that does not exist for every command that takes one, before starting or changing anything', async () => {
  const env = isolatedEnv();
  const missing = path.join(isolatedEnv.home(), 'mistyped-config');
  const commands = [
    ['serve', '--port', '0'],
    ['exec', 'hello'],
    ['conversations', 'list'],
    ['app-server'],
    ['acp'],
    ['open', '--print'],
    ['server', 'restart'],
    ['auth', 'list'],
    ['plugin', 'list'],
  ];
  for (const args of commands) {
    const result = await runCli([...args, '--config-dir', missing], { env, timeoutMs: 15_000 });
    expect(result.code, args.join(' ')).toBe(64);
    expect(result.stderr, args.join(' ')).toContain(`--config-dir ${missing}: no such directory; give an existing configuration directory (only the default one is created when missing)`);
  }
  // Nothing was started or created on the way.
  expect(existsSync(missing)).toBe(false);
  expect(existsSync(path.join(isolatedEnv.home(), 'state', 'openvaala', 'server.log'))).toBe(false);
});

it('takes an integer option only in decimal digits, naming the option and the value otherwise', async () => {
  const env = isolatedEnv();
  for (const value of ['0x50', '8e1', ' 80 ', '80.0', '+']) {
    const refused = await runCli(['serve', '--port', value], { env });
    expect(refused.code, value).toBe(64);
    expect(refused.stderr).toContain(`--port must be an integer from 0 to 65535, got "${value}"`);
  }
});
