/** The command a configuration mismatch tells the person to run works as printed, whatever the data directory's path holds. */
import { execFileSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { ServerConfigMismatchError } from '../../src/cli/server-discovery.js';

it('quotes the data directory in the stop command it suggests', () => {
  const dataDir = "/srv/agent data/it's here";
  const error = new ServerConfigMismatchError({ url: 'http://127.0.0.1:1', token: 't', pid: 42, dataDir, configDir: '/etc/a', startedAt: 0 }, '/etc/b');
  const command = /stop it first \((openvaala server stop --data-dir .+)\) or give another --data-dir$/.exec(error.message)?.[1];
  expect(command).toBeDefined();
  // A shell splits the printed command back into the words meant: the path is one argument.
  const words = execFileSync('sh', ['-c', `printf '%s\\n' ${command as string}`], { encoding: 'utf8' }).trimEnd().split('\n');
  expect(words).toEqual(['openvaala', 'server', 'stop', '--data-dir', dataDir]);
});
