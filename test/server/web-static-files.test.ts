/**
 * The built web UI served at /web/v1/ by a real server over real HTTP (docs/web.md): content
 * types, client-side routes falling back to index.html, 404 for missing assets, caching rules,
 * the security headers, no way out of the web root with encoded `..`, the redirect of `/`, and
 * a 503 naming `npm run build` when the UI is not built.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { rawRequest } from '../helpers/http-exchange.js';
import { FIXTURE_SCRIPT, writeWebFixture } from '../helpers/web-fixture.js';

let environment: TestEnvironment;
let server: RunningServer;
let outside: string;
const SECRET = 'outside-the-web-root-7f3a';

beforeAll(async () => {
  environment = await createTestEnvironment('responses: []\n');
  outside = mkdtempSync(path.join(os.tmpdir(), 'openvaala-web-'));
  // A file beside the web root that no path may reach.
  writeFileSync(path.join(outside, 'secret.txt'), SECRET);
  const webRoot = writeWebFixture(path.join(outside, 'www'));
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent'), webRoot });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await environment?.dispose();
  rmSync(outside, { recursive: true, force: true });
});

describe('web UI files', () => {
  it('redirects / and /web/v1 to /web/v1/', async () => {
    for (const target of ['/', '/web/v1']) {
      const answer = await rawRequest(server.url, target);
      expect(answer.status, target).toBe(302);
      expect(answer.headers.location, target).toBe('/web/v1/');
    }
    const post = await rawRequest(server.url, '/', { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('serves index.html with no-cache and the security headers', async () => {
    const answer = await rawRequest(server.url, '/web/v1/');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-cache');
    expect(answer.body).toContain('fixture app');
    const policy = String(answer.headers['content-security-policy']);
    const host = new URL(server.url).host;
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain(`connect-src 'self' ws://${host} wss://${host}`);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe/);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
  });

  it('answers client-side routes with index.html', async () => {
    for (const target of ['/web/v1/conversations/conv_01ABC', '/web/v1/settings?tab=models', '/web/v1/index.html']) {
      const answer = await rawRequest(server.url, target);
      expect(answer.status, target).toBe(200);
      expect(answer.body, target).toContain('fixture app');
      expect(answer.headers['cache-control'], target).toBe('no-cache');
    }
  });

  it('serves files with their content type and caching rule', async () => {
    const cases: [string, string, string][] = [
      [`/web/v1/assets/${FIXTURE_SCRIPT}`, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'],
      ['/web/v1/assets/index-Def456.css', 'text/css; charset=utf-8', 'public, max-age=31536000, immutable'],
      ['/web/v1/service-worker.js', 'text/javascript; charset=utf-8', 'no-cache'],
      ['/web/v1/manifest.webmanifest', 'application/manifest+json', 'no-cache'],
      ['/web/v1/icon.svg', 'image/svg+xml', 'no-cache'],
    ];
    for (const [target, type, cache] of cases) {
      const answer = await rawRequest(server.url, target);
      expect(answer.status, target).toBe(200);
      expect(answer.headers['content-type'], target).toBe(type);
      expect(answer.headers['cache-control'], target).toBe(cache);
      expect(answer.headers['x-content-type-options'], target).toBe('nosniff');
    }
    const head = await rawRequest(server.url, `/web/v1/assets/${FIXTURE_SCRIPT}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('answers 404 for a missing asset instead of the page', async () => {
    const answer = await rawRequest(server.url, '/web/v1/assets/index-Missing.js');
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain('fixture app');
    expect(answer.body).toContain('No such asset: assets/index-Missing.js');
  });

  it('never serves a file outside the web root', async () => {
    const targets = [
      '/web/v1/..%2fsecret.txt',
      '/web/v1/..%2Fsecret.txt',
      '/web/v1/assets/..%2f..%2fsecret.txt',
      '/web/v1/%2e%2e%2fsecret.txt',
      '/web/v1/%2e%2e/secret.txt',
      '/web/v1/assets/%2e%2e/%2e%2e/secret.txt',
      '/web/v1/../secret.txt',
      '/web/v1/..%5csecret.txt',
      '/web/v1/%2e%2e%5c%2e%2e%5csecret.txt',
      '/web/v1/secret.txt%00.html',
      '/web/v1/%E0%A4%A',
    ];
    for (const target of targets) {
      const answer = await rawRequest(server.url, target);
      expect(answer.body, target).not.toContain(SECRET);
      expect([200, 404], target).toContain(answer.status);
    }
    // The encoded forms are refused outright, not taken for a route.
    expect((await rawRequest(server.url, '/web/v1/..%2fsecret.txt')).status).toBe(404);
    expect((await rawRequest(server.url, '/web/v1/assets/..%5c..%5csecret.txt')).status).toBe(404);
  });

  it('refuses methods other than GET and HEAD on files', async () => {
    const answer = await rawRequest(server.url, '/web/v1/', { method: 'PUT', body: 'x' });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });
});

describe('web UI not built', () => {
  it('answers 503 naming npm run build, and shows it once the folder appears', async () => {
    const other = await createTestEnvironment('responses: []\n');
    const webRoot = path.join(other.root, 'not-built');
    const missing = await startRuntimeServer({ paths: other.paths, port: 0, logger: createLogger('silent'), webRoot });
    try {
      const answer = await rawRequest(missing.url, '/web/v1/');
      expect(answer.status).toBe(503);
      expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(answer.body).toContain('npm run build');
      expect(answer.body).toContain(webRoot);
      expect(answer.headers['content-security-policy']).toContain("default-src 'self'");
      mkdirSync(webRoot);
      writeFileSync(path.join(webRoot, 'index.html'), '<!doctype html><p>built now</p>');
      expect((await rawRequest(missing.url, '/web/v1/')).body).toContain('built now');
    } finally {
      await missing.stop();
      await other.dispose();
    }
  });
});
