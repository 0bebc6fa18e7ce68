import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findServer } from '../../src/cli/server-discovery.js';
import { dataDirServerInfoFile, type OpenVaalaPaths } from '../../src/config/paths.js';
import { readServerInfo, serverInfoProblems, writeServerInfo, type ServerInfo } from '../../src/server/server-info.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-server-info-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const info = (overrides: Partial<ServerInfo> = {}): ServerInfo => ({ url: 'http://127.0.0.1:1', token: 'secret', pid: process.pid, dataDir: '/data', configDir: '/config', startedAt: 1_700_000_000_000, ...overrides });

describe('runtime-server.yaml', () => {
  it('reads back what it wrote, and only the known fields', () => {
    const file = path.join(root, 'runtime-server.yaml');
    writeServerInfo(file, info());
    expect(readServerInfo(file)).toEqual(info());
    writeFileSync(file, 'url: http://127.0.0.1:2\ntoken: t\npid: 7\ndataDir: /d\nstartedAt: 5\nfromANewerVersion: true\n');
    expect(readServerInfo(file)).toEqual({ url: 'http://127.0.0.1:2', token: 't', pid: 7, dataDir: '/d', startedAt: 5 });
  });

  it('names the file and every wrong or missing field of a malformed file', () => {
    const file = path.join(root, 'runtime-server.yaml');
    writeFileSync(file, 'url: 5\ntoken: t\npid: 1.5\nstartedAt: soon\n');
    expect(() => readServerInfo(file)).toThrow(`${file}: url: expected a string; pid: expected an integer; dataDir: missing; startedAt: expected a number`);
    writeFileSync(file, '- a list\n');
    expect(() => readServerInfo(file)).toThrow(`${file}: (root): expected a mapping`);
    expect(serverInfoProblems(info({ configDir: 3 as unknown as string }))).toEqual(['configDir: expected a string']);
  });

  it('is undefined when the file does not exist', () => {
    expect(readServerInfo(path.join(root, 'absent.yaml'))).toBeUndefined();
  });
});

describe('finding the running server', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** A server answering `/healthz` with `body` to the given token only, as the runtime server does; returns its url. */
  async function healthServer(body: object, token: string): Promise<string> {
    server = createServer((request, response) => {
      const authorized = request.headers.authorization === `Bearer ${token}`;
      response.writeHead(request.url === '/healthz' ? 200 : 404, { 'content-type': 'application/json' });
      response.end(JSON.stringify(authorized ? body : { status: 'ok' }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('takes the server whose /healthz names the pid of the file, and no other', async () => {
    const paths: OpenVaalaPaths = { configDir: path.join(root, 'config'), dataDir: path.join(root, 'data'), stateDir: path.join(root, 'state') };
    const url = await healthServer({ status: 'ok', pid: process.pid }, 'secret');
    writeServerInfo(dataDirServerInfoFile(paths), info({ url, dataDir: paths.dataDir }));
    expect((await findServer(paths))?.url).toBe(url);
    // Another token: the server does not say its pid, so it is not taken for ours.
    writeServerInfo(dataDirServerInfoFile(paths), info({ url, dataDir: paths.dataDir, token: 'another' }));
    expect(await findServer(paths)).toBeUndefined();
    // Nothing listens there.
    const closedUrl = url;
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    writeServerInfo(dataDirServerInfoFile(paths), info({ url: closedUrl, dataDir: paths.dataDir }));
    expect(await findServer(paths)).toBeUndefined();
    // A url that is not one.
    writeServerInfo(dataDirServerInfoFile(paths), info({ url: 'not a url', dataDir: paths.dataDir }));
    expect(await findServer(paths)).toBeUndefined();
  });
});
