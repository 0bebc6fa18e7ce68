import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findServer } from '../../src/cli/server-discovery.js';
import { dataDirServerInfoFile, type OpenVaalaPaths } from '../../src/config/paths.js';
import { DamagedServerInfoError, readServerInfo, readServerInfoIfSound, serverInfoProblems, writeServerInfo, type ServerInfo } from '../../src/server/server-info.js';

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

  it('names the file when it is not YAML, empty, or cannot be read', () => {
    const file = path.join(root, 'runtime-server.yaml');
    writeFileSync(file, 'url: [broken\n');
    expect(() => readServerInfo(file)).toThrow(new RegExp(`^${file}: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a \\] at line 2, column 1$`));
    expect(() => readServerInfo(file)).toThrow(DamagedServerInfoError);
    writeFileSync(file, '\n');
    expect(() => readServerInfo(file)).toThrow(`${file}: empty`);
    const directory = path.join(root, 'a-directory.yaml');
    mkdirSync(directory);
    expect(() => readServerInfo(directory)).toThrow(`${directory}: cannot read: EISDIR`);
  });

  it('a damaged file is taken as describing no server, saying once what is wrong', () => {
    const file = path.join(root, 'runtime-server.yaml');
    const damaged: [content: string, problem: string][] = [
      ['url: [broken\n', 'not valid YAML'],
      ['', 'empty'],
      ['url: http://127.0.0.1:1\n', 'token: missing; pid: missing; dataDir: missing; startedAt: missing'],
    ];
    for (const [content, problem] of damaged) {
      writeFileSync(file, content);
      const said: string[] = [];
      expect(readServerInfoIfSound(file, (damaged) => said.push(damaged.message))).toBeUndefined();
      expect(said).toHaveLength(1);
      expect(said[0]).toContain(`${file}: ${problem}`);
    }
    writeServerInfo(file, info());
    expect(readServerInfoIfSound(file, () => expect.fail('a sound file was called damaged'))).toEqual(info());
    expect(readServerInfoIfSound(path.join(root, 'absent.yaml'), () => expect.fail('a missing file was called damaged'))).toBeUndefined();
  });

  it('is written whole with mode 0600 through a temporary file, and a failed write names the file and leaves nothing behind', () => {
    const file = path.join(root, 'state', 'runtime-server.yaml');
    mkdirSync(path.dirname(file));
    // A wider temporary file left by a dead process that had this pid.
    writeFileSync(`${file}.${process.pid}.tmp`, 'half', { mode: 0o644 });
    chmodSync(`${file}.${process.pid}.tmp`, 0o644);
    writeServerInfo(file, info());
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(path.dirname(file))).toEqual(['runtime-server.yaml']);
    const blocked = path.join(root, 'a-file', 'runtime-server.yaml');
    writeFileSync(path.join(root, 'a-file'), '');
    expect(() => writeServerInfo(blocked, info())).toThrow(`cannot write the server file ${blocked}: EEXIST`);
    // A directory where the file should be: the temporary file is written, the rename fails, and it is removed.
    mkdirSync(path.join(root, 'taken', 'runtime-server.yaml'), { recursive: true });
    expect(() => writeServerInfo(path.join(root, 'taken', 'runtime-server.yaml'), info())).toThrow('cannot write the server file');
    expect(readdirSync(path.join(root, 'taken'))).toEqual(['runtime-server.yaml']);
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
