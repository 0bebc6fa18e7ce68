/**
 * `openvaala users claim` reads the password from standard input (docs/platform.md, "Users and
 * roles"): with nothing there (an empty pipe, `< /dev/null`, an empty first line) it says that no
 * password was given and how to give one, rather than passing an empty password on for the server
 * to call too short. Runs the command's function in the test process against a platform server.
 */
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runUsersClaim } from '../../src/cli/users.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { startPlatformServer, type PlatformServer } from './platform-server.js';

let server: PlatformServer;

beforeAll(async () => {
  server = await startPlatformServer();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

function streams() {
  const written = { stdout: '', stderr: '' };
  const sink = (key: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        written[key] += chunk.toString();
        done();
      },
    });
  return { written, streams: { stdout: sink('stdout'), stderr: sink('stderr') } };
}

const claim = (input: string[]) => runUsersClaim(server.environment.paths, { email: 'ada@example.com' }, Readable.from(input), streams().streams);

describe('openvaala users claim without a password on standard input', () => {
  it('says no password was given, for an empty input and for an empty first line', async () => {
    for (const input of [[], ['\n'], ['  \r\n', 'second line\n']]) {
      const error = await claim(input).then(() => undefined, (caught: unknown) => caught);
      expect(error, JSON.stringify(input)).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe("no password on standard input: give the new administrator's password as its first line, e.g. printf '%s\\n' \"$PASSWORD\" | openvaala users claim --email <address>");
    }
    expect(await server.server.platform.users.hasUsers()).toBe(false);
  });

  it('still lets the server judge a password that was given', async () => {
    await expect(claim(['short\n'])).rejects.toThrow('users/claim: params.password: too short: at least 8 characters');
    const { written, streams: output } = streams();
    expect(await runUsersClaim(server.environment.paths, { email: 'ada@example.com' }, Readable.from(['correct horse battery\n']), output)).toBe(0);
    expect(written.stdout).toMatch(/^administrator ada@example\.com created/);
  });
});
