import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprintOf, hostFieldMatches, hostKeyAlgorithmsFor, keyTypeOf, knownHostsName, parseKnownHosts, verifyHostKey } from '../../src/executors/ssh/known-hosts.js';

/** A syntactically valid public key blob of `type` with random key material. */
function fakeKey(type: string): Buffer {
  const name = Buffer.from(type, 'latin1');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(name.length);
  return Buffer.concat([length, name, randomBytes(36)]);
}

function line(hosts: string, key: Buffer, marker = ''): string {
  return `${marker}${marker ? ' ' : ''}${hosts} ${keyTypeOf(key)} ${key.toString('base64')}`;
}

describe('known_hosts', () => {
  const key = fakeKey('ssh-ed25519');
  const other = fakeKey('ssh-ed25519');

  it('names hosts as OpenSSH does: bare on port 22, [host]:port otherwise', () => {
    expect(knownHostsName('example.org', 22)).toBe('example.org');
    expect(knownHostsName('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
  });

  it('parses entries with line numbers and markers, skipping comments and junk', () => {
    const entries = parseKnownHosts(['# comment', '', line('a.example', key), 'garbage', line('b.example', other, '@revoked'), '@unknown-marker x y z'].join('\n'));
    expect(entries.map((entry) => [entry.line, entry.hosts, entry.marker])).toEqual([
      [3, 'a.example', undefined],
      [5, 'b.example', 'revoked'],
    ]);
    expect(entries[0]?.key.equals(key)).toBe(true);
  });

  it('matches patterns with wildcards and negation, and hashed names', () => {
    expect(hostFieldMatches('a.example,b.example', 'b.example', 22)).toBe(true);
    expect(hostFieldMatches('*.example', 'build.example', 22)).toBe(true);
    expect(hostFieldMatches('*.example,!secret.example', 'secret.example', 22)).toBe(false);
    expect(hostFieldMatches('build.example', 'build.example', 2222)).toBe(false);
    expect(hostFieldMatches('[build.example]:2222', 'build.example', 2222)).toBe(true);
    expect(hostFieldMatches('[127.0.0.?]:2222', '127.0.0.1', 2222)).toBe(true);
    const salt = randomBytes(20);
    const hashed = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update('[127.0.0.1]:2222').digest('base64')}`;
    expect(hostFieldMatches(hashed, '127.0.0.1', 2222)).toBe(true);
    expect(hostFieldMatches(hashed, '127.0.0.1', 2223)).toBe(false);
  });

  it('accepts the recorded key and refuses changed, unknown and revoked keys with fingerprints', () => {
    const entries = parseKnownHosts(`${line('[127.0.0.1]:2222', key)}\n${line('*', other, '@revoked')}\n`);
    expect(verifyHostKey(entries, '127.0.0.1', 2222, key, '/k')).toEqual({ accepted: true });
    const changed = verifyHostKey(parseKnownHosts(line('[127.0.0.1]:2222', key)), '127.0.0.1', 2222, other, '/k');
    expect(changed).toMatchObject({ accepted: false });
    expect(!changed.accepted && changed.reason).toContain(`HOST KEY HAS CHANGED. The server presented ssh-ed25519 key ${fingerprintOf(other)}, but /k records ssh-ed25519 ${fingerprintOf(key)} (line 1)`);
    const unknown = verifyHostKey(entries, '10.1.1.1', 22, key, '/k');
    expect(!unknown.accepted && unknown.reason).toContain(`the server's ssh-ed25519 key ${fingerprintOf(key)} is not in /k`);
    const revoked = verifyHostKey(entries, '127.0.0.1', 2222, other, '/k');
    expect(!revoked.accepted && revoked.reason).toContain('is marked @revoked in /k line 2');
  });

  it('offers only the key types recorded for the host', () => {
    const rsa = fakeKey('ssh-rsa');
    const entries = parseKnownHosts(`${line('[h]:2', rsa)}\n${line('[h]:2', fakeKey('ecdsa-sha2-nistp256'))}\n${line('other', key)}`);
    expect(hostKeyAlgorithmsFor(entries, 'h', 2)).toEqual(['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa', 'ecdsa-sha2-nistp256']);
    expect(hostKeyAlgorithmsFor(entries, 'nowhere', 22)).toEqual([]);
  });

  it('prints fingerprints as SHA256 with unpadded base64', () => {
    expect(fingerprintOf(key)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });
});
