/**
 * `fs/list`, `fs/read` and `fs/stat` over a real WebSocket against a real server, on each
 * executor kind: local, local in the bwrap sandbox, SSH (a real OpenSSH server) and virtual.
 * Escapes (`..`, absolute paths outside, symlinks leading out) are refused on every one.
 */
import { closeSync, mkdirSync, openSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FS_LIST_MAX_ENTRIES, FS_READ_MAX_BYTES } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { protocolFailure } from '../helpers/protocol-failure.js';
import { requireExecutable } from '../helpers/required-commands.js';
import { startSshServer, type TestSshServer } from '../helpers/ssh-server.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

const VARIANTS = ['local', 'sandboxed', 'box', 'scratch'] as const;
const BIG_BYTES = FS_READ_MAX_BYTES + 512 * 1024;
const BINARY = Buffer.from([0x00, 0xff, 0xfe, 0x10, 0x80, 0x81]);

let harness: InProcessServer;
let ssh: TestSshServer;
const conversations = new Map<string, { id: string; root: string; outsideSecret: string }>();

/** The files every workspace holds; the virtual executor gets the same tree as its seed. */
function writeWorkspaceTree(root: string): void {
  mkdirSync(path.join(root, 'sub'), { recursive: true });
  writeFileSync(path.join(root, 'hello.txt'), 'hello, wörld\n');
  writeFileSync(path.join(root, 'sub', 'a.txt'), 'A');
  writeFileSync(path.join(root, 'binary.dat'), BINARY);
  // Letters only, with a two-byte character placed across the cap, so the first piece must stop before it.
  const big = Buffer.alloc(BIG_BYTES, 'x');
  Buffer.from('é').copy(big, FS_READ_MAX_BYTES - 1);
  writeFileSync(path.join(root, 'big.txt'), big);
  mkdirSync(path.join(root, 'many'));
  for (let index = 0; index <= FS_LIST_MAX_ENTRIES; index++) writeFileSync(path.join(root, 'many', `f${String(index).padStart(5, '0')}`), '');
  symlinkSync('../outside/secret.txt', path.join(root, 'out-link'));
  symlinkSync('hello.txt', path.join(root, 'in-link'));
}

const previousTmpdir = process.env.TMPDIR;

beforeAll(async () => {
  requireExecutable('bwrap', 'bubblewrap');
  // The sandbox has a private /tmp: its workspace must live elsewhere to be seen at all.
  process.env.TMPDIR = '/var/tmp';
  ssh = await startSshServer();
  harness = await startInProcessServer('responses:\n  - text: "ok"\n', {
    beforeStart: (environment) => {
      const seed = path.join(environment.root, 'seed');
      for (const root of [environment.workDir, seed]) writeWorkspaceTree(root);
      mkdirSync(path.join(environment.root, 'outside'));
      writeFileSync(path.join(environment.root, 'outside', 'secret.txt'), 'outside secret\n');
      writeFileSync(
        path.join(environment.paths.configDir, 'executors.yaml'),
        [
          'executors:',
          '  sandboxed: { kind: local, sandbox: bwrap }',
          `  box: { kind: ssh, host: 127.0.0.1, port: ${ssh.port}, user: ${ssh.user}, identityFile: ${ssh.identityFile}, knownHostsFile: ${ssh.knownHostsFile} }`,
          `  scratch: { kind: virtual, seedDirectory: ${seed}, files: { "/outside/secret.txt": "outside secret\\n" } }`,
          '',
        ].join('\n'),
      );
    },
  });
  for (const executor of VARIANTS) {
    const root = executor === 'scratch' ? '/workspace' : harness.environment.workDir;
    const { conversation } = await harness.client.request('conversation/create', { cwd: root, executor });
    conversations.set(executor, { id: conversation.id, root, outsideSecret: executor === 'scratch' ? '/outside/secret.txt' : path.join(harness.environment.root, 'outside', 'secret.txt') });
  }
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await ssh?.dispose();
  if (previousTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmpdir;
});

describe('files over 64 MiB', () => {
  it('are read in pieces where the executor reads pieces, and refused naming the executor where it reads whole files', async () => {
    const size = 80 * 1024 * 1024;
    // Sparse: 80 MiB of size, a few bytes on disk, with a marker at its very end.
    const huge = path.join(harness.environment.workDir, 'huge.bin');
    const descriptor = openSync(huge, 'w');
    writeSync(descriptor, 'END', size - 3);
    closeSync(descriptor);
    try {
      for (const executor of ['local', 'sandboxed', 'box'] as const) {
        const { id } = conversations.get(executor) as { id: string };
        const tail = await harness.client.request('fs/read', { conversationId: id, path: 'huge.bin', offset: size - 3 });
        expect(tail, executor).toMatchObject({ size, offset: size - 3, length: 3, truncated: false, encoding: 'utf8', content: 'END' });
      }
    } finally {
      rmSync(huge);
    }
    const { id } = conversations.get('scratch') as { id: string };
    const live = await harness.server.runtime.getConversation(id);
    await live.workspace.executor.fs.writeFile('/workspace/huge.bin', Buffer.alloc(64 * 1024 * 1024 + 1));
    const refused = await protocolFailure(harness.client.request('fs/read', { conversationId: id, path: 'huge.bin', offset: 0, length: 10 }));
    expect(refused.message).toBe(`fs/read: "huge.bin" has ${64 * 1024 * 1024 + 1} bytes; executor "scratch" reads whole files, and files over 67108864 bytes (64 MiB) cannot be read through the protocol there`);
    await live.workspace.executor.fs.removeFile('/workspace/huge.bin');
  });
});

describe.each(VARIANTS)('workspace files on executor %s', (executor) => {
  const of = () => conversations.get(executor) as { id: string; root: string; outsideSecret: string };

  it('lists a directory, sorted, with kinds', async () => {
    const { id, root } = of();
    const listing = await harness.client.request('fs/list', { conversationId: id, path: '.' });
    expect(listing.path).toBe(root);
    expect(listing.truncated).toBe(false);
    expect(listing.entries).toEqual([
      { name: 'big.txt', kind: 'file' },
      { name: 'binary.dat', kind: 'file' },
      { name: 'hello.txt', kind: 'file' },
      { name: 'in-link', kind: 'symlink' },
      { name: 'many', kind: 'directory' },
      { name: 'out-link', kind: 'symlink' },
      { name: 'sub', kind: 'directory' },
    ]);
    const sub = await harness.client.request('fs/list', { conversationId: id, executor, path: `${root}/sub` });
    expect(sub.entries).toEqual([{ name: 'a.txt', kind: 'file' }]);
  });

  it('caps a listing and says so', async () => {
    const listing = await harness.client.request('fs/list', { conversationId: of().id, path: 'many' });
    expect(listing.entries).toHaveLength(FS_LIST_MAX_ENTRIES);
    expect(listing.entries[0]?.name).toBe('f00000');
    expect(listing.truncated).toBe(true);
  });

  it('reads text as UTF-8 and binary as base64', async () => {
    const { id, root } = of();
    const text = await harness.client.request('fs/read', { conversationId: id, path: 'hello.txt' });
    expect(text).toEqual({ path: `${root}/hello.txt`, size: 14, offset: 0, length: 14, truncated: false, encoding: 'utf8', content: 'hello, wörld\n' });
    const linked = await harness.client.request('fs/read', { conversationId: id, path: 'in-link' });
    expect(linked.content).toBe('hello, wörld\n');
    const binary = await harness.client.request('fs/read', { conversationId: id, path: 'binary.dat' });
    expect(binary.encoding).toBe('base64');
    expect(Buffer.from(binary.content, 'base64')).toEqual(BINARY);
    const piece = await harness.client.request('fs/read', { conversationId: id, path: 'hello.txt', offset: 7, length: 3 });
    // "wö" is three bytes: the piece ends on a character boundary.
    expect(piece).toMatchObject({ offset: 7, length: 3, truncated: true, encoding: 'utf8', content: 'wö' });
  });

  it('caps a read at 1 MiB and continues from an offset', async () => {
    allowInvalidSentMessages();
    const { id } = of();
    const first = await harness.client.request('fs/read', { conversationId: id, path: 'big.txt' });
    expect(first.size).toBe(BIG_BYTES);
    expect(first.truncated).toBe(true);
    expect(first.encoding).toBe('utf8');
    // The cap falls inside "é": the piece stops before it.
    expect(first.length).toBe(FS_READ_MAX_BYTES - 1);
    expect(first.content).toBe('x'.repeat(FS_READ_MAX_BYTES - 1));
    const rest = await harness.client.request('fs/read', { conversationId: id, path: 'big.txt', offset: first.length });
    expect(rest.truncated).toBe(false);
    expect(rest.length).toBe(BIG_BYTES - first.length);
    expect(rest.content.startsWith('éx')).toBe(true);
    const tooLong = await protocolFailure(harness.client.request('fs/read', { conversationId: id, path: 'big.txt', length: FS_READ_MAX_BYTES + 1 }));
    expect(tooLong.code).toBe(-32602);
    expect(tooLong.message).toContain('fs/read: params.length');
  });

  it('reads a piece from an offset, and one past the end as empty', async () => {
    const { id } = of();
    const piece = await harness.client.request('fs/read', { conversationId: id, path: 'big.txt', offset: FS_READ_MAX_BYTES - 3, length: 6 });
    expect(piece).toMatchObject({ size: BIG_BYTES, offset: FS_READ_MAX_BYTES - 3, length: 6, truncated: true, encoding: 'utf8', content: 'xxéxx' });
    const past = await harness.client.request('fs/read', { conversationId: id, path: 'big.txt', offset: BIG_BYTES + 10 });
    expect(past).toMatchObject({ size: BIG_BYTES, offset: BIG_BYTES, length: 0, truncated: false, content: '' });
  });

  it('stats files, directories and links without following them', async () => {
    const { id, root } = of();
    expect(await harness.client.request('fs/stat', { conversationId: id, path: 'hello.txt' })).toMatchObject({ path: `${root}/hello.txt`, kind: 'file', size: 14 });
    expect(await harness.client.request('fs/stat', { conversationId: id, path: 'sub' })).toMatchObject({ kind: 'directory' });
    expect(await harness.client.request('fs/stat', { conversationId: id, path: 'in-link' })).toMatchObject({ kind: 'symlink' });
    const gone = await protocolFailure(harness.client.request('fs/stat', { conversationId: id, path: 'nope.txt' }));
    expect(gone.code).toBe(-32004);
    expect(gone.message).toContain('fs/stat: params.path: "nope.txt" does not exist');
  });

  it.each([
    ['a .. escape', () => '../outside/secret.txt', 'is outside the workspace'],
    ['an absolute path outside', () => conversations.get(executor)?.outsideSecret ?? '', 'is outside the workspace'],
    ['a symlink leading out', () => 'out-link', 'leads outside the workspace'],
  ])('refuses %s on every method', async (_name, target, reason) => {
    for (const method of ['fs/read', 'fs/stat', 'fs/list'] as const) {
      const error = await protocolFailure(harness.client.request(method, { conversationId: of().id, path: target() }));
      expect(error.code, method).toBe(-32602);
      expect(error.message, method).toContain(`${method}: params.path:`);
      expect(error.message, method).toContain(reason);
      expect(error.message, method).not.toContain('outside secret');
    }
  });

  it('refuses wrong kinds and unknown executors naming the field', async () => {
    const { id } = of();
    const notFile = await protocolFailure(harness.client.request('fs/read', { conversationId: id, path: 'sub' }));
    expect(notFile.message).toBe('fs/read: params.path: "sub" is not a file (it is a directory)');
    const notDirectory = await protocolFailure(harness.client.request('fs/list', { conversationId: id, path: 'hello.txt' }));
    expect(notDirectory.message).toBe('fs/list: params.path: "hello.txt" is not a directory (it is a file)');
    const elsewhere = await protocolFailure(harness.client.request('fs/list', { conversationId: id, executor: 'nowhere', path: '.' }));
    expect(elsewhere.code).toBe(-32602);
    expect(elsewhere.message).toContain('fs/list: params.executor: executor "nowhere" is not in the work location');
  });
});

describe('workspace file params', () => {
  it('refuses malformed and unknown conversations', async () => {
    allowInvalidSentMessages();
    const malformed = await protocolFailure(harness.client.request('fs/list', { conversationId: '../etc', path: '.' }));
    expect(malformed.code).toBe(-32602);
    expect(malformed.message).toContain('fs/list: params.conversationId');
    const unknown = await protocolFailure(harness.client.request('fs/read', { conversationId: 'conv_nothere', path: 'hello.txt' }));
    expect(unknown.code).toBe(-32004);
    const nul = await protocolFailure(harness.client.request('fs/stat', { conversationId: conversations.get('local')?.id ?? '', path: 'a\0b' }));
    expect(nul.code).toBe(-32602);
    expect(nul.message).toContain('fs/stat: params.path: must not contain a NUL byte');
  });
});
