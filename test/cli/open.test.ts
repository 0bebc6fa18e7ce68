/**
 * `openvaala serve` prints a one-time sign-in link; `openvaala open --print` prints a fresh one
 * from the running server (starting one in the background when none runs), each usable once
 * to get a web UI session (real processes, real HTTP on 127.0.0.1).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnvironment, runCli, startServe, stopBackgroundServer, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';
import { rawRequest } from '../helpers/http-exchange.js';

const LINK = /(http:\/\/127\.0\.0\.1:\d+)\/web\/v1\/sign-in#token=([A-Za-z0-9_-]{43})/;
let environment: TestEnvironment | undefined;

afterEach(async () => {
  if (environment) {
    await stopBackgroundServer(environment);
    await environment.dispose();
  }
  environment = undefined;
});

/** Exchanges the code of a printed link; returns the HTTP status. */
async function exchange(printed: string): Promise<number> {
  const match = LINK.exec(printed);
  if (!match) throw new Error(`no sign-in link in: ${printed}`);
  const [, base, code] = match as unknown as [string, string, string];
  const answer = await rawRequest(base, '/web/v1/api/session', { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: JSON.stringify({ code }) });
  return answer.status;
}

describe('sign-in links on the command line', () => {
  it('serve prints a link that works once, and open --print a fresh one', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const serve = await startServe(environment);
    try {
      await until(() => LINK.test(serve.output()), 10_000, 'the sign-in link');
      expect(serve.output()).toContain(`web UI: ${serve.info.url}/web/v1/\n`);
      expect(serve.output()).not.toContain(serve.info.token);
      expect(await exchange(serve.output())).toBe(200);
      expect(await exchange(serve.output())).toBe(401);
      const opened = await runCli(['open', '--print'], { env: environment.env });
      expect(opened.code).toBe(0);
      expect(opened.stdout).toMatch(new RegExp(`^${serve.info.url}/web/v1/sign-in#token=[A-Za-z0-9_-]{43}\n$`));
      expect(opened.stderr).toContain('single use, valid 5 min');
      expect(await exchange(opened.stdout)).toBe(200);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 60_000);

  it('open --print starts a server when none runs', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const opened = await runCli(['open', '--print'], { env: environment.env });
    expect(opened.code).toBe(0);
    expect(await exchange(opened.stdout)).toBe(200);
  }, 60_000);
});
