/**
 * Every HTTP route a running server answers (single-user and platform mode, as
 * `RunningServer.httpRoutes` lists them) is in the table of docs/http.md, and every route of
 * that table is one the server answers: an undocumented route, or a documented one that is
 * gone, fails here. Each listed method of each route is also sent once, and must reach the
 * route (not the 404 of an unknown path, nor a 405 for a method the route does not take).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { CLUSTER_PATH } from '../../src/server/cluster/cluster-endpoint.js';
import type { HttpRouteEntry } from '../../src/server/http-routes.js';
import { API_PATH } from '../../src/server/http-server.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { startPlatformServer, type PlatformServer } from '../platform/platform-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { rawRequest } from '../helpers/http-exchange.js';
import { writeWebFixture } from '../helpers/web-fixture.js';

const DOCS = 'docs/http.md';
const documentation = readFileSync(path.resolve(import.meta.dirname, '..', '..', DOCS), 'utf8');

/** `METHOD path` of every row of the documentation's route table. */
function documentedRoutes(): Set<string> {
  const table = documentation.slice(documentation.indexOf('## All routes'));
  const routes = new Set<string>();
  for (const row of table.matchAll(/^\| ([A-Z, ]+) \| `([^`]+)` \|/gm)) {
    for (const method of row[1]!.split(',')) routes.add(`${method.trim()} ${row[2]}`);
  }
  return routes;
}

/** `METHOD path` of each method of each route. */
function pairs(routes: HttpRouteEntry[]): string[] {
  return routes.flatMap((route) => route.methods.map((method) => `${method} ${route.path}`));
}

let environment: TestEnvironment;
let single: RunningServer;
let platform: PlatformServer;

beforeAll(async () => {
  environment = await createTestEnvironment('responses: []\n');
  single = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent'), webRoot: writeWebFixture(path.join(environment.root, 'www')) });
  platform = await startPlatformServer();
}, 60_000);

afterAll(async () => {
  await single?.stop();
  await environment?.dispose();
  await platform?.stop();
});

describe(`the HTTP routes and ${DOCS}`, () => {
  it('documents every route the server answers, in either mode', () => {
    const documented = documentedRoutes();
    const listed = [...new Set([...pairs(single.httpRoutes()), ...pairs(platform.server.httpRoutes())])];
    expect(listed).toEqual(expect.arrayContaining(['GET /healthz', `GET ${API_PATH}`, 'POST /api/v1/uploads', 'POST /web/v1/api/platform/sign-in', 'GET /web/v1/api/platform/oidc/{name}/callback', 'GET /favicon.ico']));
    expect(listed.filter((route) => !documented.has(route)), `routes missing from the table of ${DOCS}`).toEqual([]);
  });

  it('documents no route the server does not answer (the cluster link only exists in a cluster)', () => {
    const listed = new Set([...pairs(single.httpRoutes()), ...pairs(platform.server.httpRoutes()), `GET ${CLUSTER_PATH}`]);
    expect([...documentedRoutes()].filter((route) => !listed.has(route))).toEqual([]);
  });

  it('reaches each listed route with each of its methods', async () => {
    const problems: string[] = [];
    for (const server of [single, platform.server]) {
      for (const route of server.httpRoutes()) {
        for (const method of route.methods) {
          if (route.path === API_PATH) continue;
          const target = route.path.replace(/\{[a-zA-Z]+\}/g, 'x');
          const answer = await rawRequest(server.url, target, { method });
          const unknown = answer.status === 404 && /"error":"no such (path|web API path|platform route)/.test(answer.body);
          if (unknown || answer.status === 405) problems.push(`${method} ${target} on ${server.url}: ${answer.status} ${answer.body.slice(0, 120)}`);
        }
      }
    }
    expect(problems).toEqual([]);
  }, 30_000);

  it('serves at /favicon.ico the web UI\'s own icon, byte for byte', async () => {
    const icon = readFileSync(path.resolve(import.meta.dirname, '..', '..', 'src', 'www', 'public', 'icons', 'icon.svg'), 'utf8');
    const answer = await rawRequest(single.url, '/favicon.ico');
    expect(answer.status).toBe(200);
    expect(answer.body.trim()).toBe(icon.trim());
  });

  it('answers a path no route lists with 404', async () => {
    expect((await rawRequest(single.url, '/no-such-route')).status).toBe(404);
    expect((await rawRequest(single.url, '/web/v1/api/platform/sign-in', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
  });
});
