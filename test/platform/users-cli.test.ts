/**
 * `openvaala serve --platform` and `openvaala users claim` as real processes (built `dist/`):
 * the server says on its first start that no administrator exists, the CLI claims it with the
 * password on standard input, the new administrator signs in over HTTP, a second claim is
 * refused with the server's reason, and a short password is refused naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, runCli, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';
import { BrowserLike } from './platform-client.js';

let environment: TestEnvironment;
let serve: ServeProcess;

beforeAll(async () => {
  environment = await createTestEnvironment('responses: []\n');
  serve = await startServe(environment, ['--platform']);
  await until(() => serve.output().includes('platform mode: no administrator yet'), 10_000, 'the claim hint on the output of openvaala serve --platform');
}, 60_000);

afterAll(async () => {
  await serve?.stop();
  await environment?.dispose();
});

describe('openvaala users claim', () => {
  it('refuses a short password naming the field, then claims the platform once', async () => {
    const short = await runCli(['users', 'claim', '--email', 'ada@example.com'], { env: environment.env, input: 'short\n' });
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('openvaala: users claim: users/claim: params.password: too short: at least 8 characters');
    const claimed = await runCli(['users', 'claim', '--email', 'ada@example.com', '--display-name', 'Ada'], { env: environment.env, input: 'correct horse battery\n' });
    expect(claimed.stderr).toBe('');
    expect(claimed.code).toBe(0);
    expect(claimed.stdout).toMatch(/^administrator ada@example\.com created \(user_[0-9a-f]{20}\); sign in at http:\/\/127\.0\.0\.1:\d+\/web\/v1\/sign-in\n$/);
    const again = await runCli(['users', 'claim', '--email', 'eve@example.com'], { env: environment.env, input: 'another long password\n' });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('the platform already has an administrator');
    const browser = new BrowserLike(serve.info.url);
    expect((await browser.state()).claimed).toBe(true);
    expect((await browser.post('sign-in', { email: 'ada@example.com', password: 'correct horse battery' })).status).toBe(200);
  });
});

describe('openvaala serve without platform mode', () => {
  it('does not tell the user to claim an administrator, which users claim would refuse', async () => {
    const plain = await createTestEnvironment('responses: []\n');
    const server = await startServe(plain);
    try {
      // The platform hint would follow the sign-in link, after one query of the users table.
      await until(() => server.output().includes('sign in (link works once'), 10_000, 'the start-up lines of openvaala serve');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(server.output()).not.toContain('no administrator yet');
      const claim = await runCli(['users', 'claim', '--email', 'ada@example.com'], { env: plain.env, input: 'correct horse battery\n' });
      expect(claim.code).toBe(1);
      expect(claim.stderr).toContain('platform mode is off');
    } finally {
      await server.stop();
      await plain.dispose();
    }
  }, 60_000);
});
