/**
 * Host key verification against an OpenSSH `known_hosts` file (format of sshd(8), section
 * "SSH_KNOWN_HOSTS FILE FORMAT"): a server whose key is not listed, or listed differently, is
 * refused with a message naming the host, the file and the key fingerprints.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** One key line of a known_hosts file. */
export interface KnownHostEntry {
  /** 1-based line number in the file, for messages. */
  line: number;
  /** `@revoked` (the key must be refused) or `@cert-authority` (not supported, ignored). */
  marker: 'revoked' | 'cert-authority' | undefined;
  /** The comma-separated host patterns, or a hashed name `|1|salt|hash`. */
  hosts: string;
  /** Key type as written (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`…). */
  keyType: string;
  /** The public key blob (base64-decoded). */
  key: Buffer;
}

/**
 * Parses known_hosts text; comments, blank lines and lines that are not `hosts type key` are
 * skipped (OpenSSH skips them too).
 */
export function parseKnownHosts(text: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  text.split('\n').forEach((raw, index) => {
    const fields = raw.trim().split(/\s+/);
    if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) return;
    let marker: KnownHostEntry['marker'];
    if (fields[0].startsWith('@')) {
      const name = fields.shift()?.slice(1);
      if (name !== 'revoked' && name !== 'cert-authority') return;
      marker = name;
    }
    const [hosts, keyType, keyText] = fields;
    if (hosts === undefined || keyType === undefined || keyText === undefined || !/^[A-Za-z0-9+/]+=*$/.test(keyText)) return;
    entries.push({ line: index + 1, marker, hosts, keyType, key: Buffer.from(keyText, 'base64') });
  });
  return entries;
}

/** How OpenSSH names a host in known_hosts: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function wildcardMatches(pattern: string, name: string): boolean {
  const expression = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${expression}$`, 'i').test(name);
}

function hashedMatches(hashed: string, name: string): boolean {
  const [, kind, salt, hash] = hashed.split('|');
  if (kind !== '1' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * Whether an entry's host field names `host:port`: a hashed name, or comma-separated
 * patterns with `*`/`?` wildcards where a matching `!pattern` excludes the host.
 */
export function hostFieldMatches(hosts: string, host: string, port: number): boolean {
  const name = knownHostsName(host, port);
  if (hosts.startsWith('|')) return hashedMatches(hosts, name);
  let matched = false;
  for (const pattern of hosts.split(',')) {
    if (pattern.startsWith('!')) {
      if (wildcardMatches(pattern.slice(1), name)) return false;
    } else if (wildcardMatches(pattern, name)) {
      matched = true;
    }
  }
  return matched;
}

/** The key type named inside a public key blob (its first SSH string). */
export function keyTypeOf(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const length = key.readUInt32BE(0);
  return key.subarray(4, 4 + length).toString('latin1');
}

/** OpenSSH's fingerprint of a public key blob: `SHA256:` + unpadded base64 of its SHA-256. */
export function fingerprintOf(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The host key algorithms to offer for a host, so the server presents a key type we know. */
export function hostKeyAlgorithmsFor(entries: KnownHostEntry[], host: string, port: number): string[] {
  const algorithms = new Set<string>();
  for (const entry of entries) {
    if (entry.marker !== undefined || !hostFieldMatches(entry.hosts, host, port)) continue;
    if (entry.keyType === 'ssh-rsa') ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'].forEach((name) => algorithms.add(name));
    else algorithms.add(entry.keyType);
  }
  return [...algorithms];
}

/** Outcome of `verifyHostKey`: accepted, or refused with a message for the user. */
export type HostKeyVerdict = { accepted: true } | { accepted: false; reason: string };

/**
 * Checks the key a server presented against the known_hosts entries for `host:port`.
 * Accepted only when a non-revoked entry for the host holds exactly this key.
 * @param entries the parsed file (`parseKnownHosts`)
 * @param file the file's path, named in refusals
 * @returns the verdict; a refusal names the host, the presented key's type and fingerprint,
 *   and for a changed key the file line and fingerprint of the key on record
 */
export function verifyHostKey(entries: KnownHostEntry[], host: string, port: number, key: Buffer, file: string): HostKeyVerdict {
  const where = `${host}:${port}`;
  const presented = `${keyTypeOf(key)} key ${fingerprintOf(key)}`;
  const matching = entries.filter((entry) => entry.marker !== 'cert-authority' && hostFieldMatches(entry.hosts, host, port));
  const revoked = entries.find((entry) => entry.marker === 'revoked' && entry.key.equals(key));
  if (revoked !== undefined) {
    return { accepted: false, reason: `host key verification failed for ${where}: its ${presented} is marked @revoked in ${file} line ${revoked.line}` };
  }
  const known = matching.filter((entry) => entry.marker === undefined);
  if (known.some((entry) => entry.key.equals(key))) return { accepted: true };
  if (known.length > 0) {
    const recorded = known.map((entry) => `${entry.keyType} ${fingerprintOf(entry.key)} (line ${entry.line})`).join(', ');
    return {
      accepted: false,
      reason:
        `host key verification failed for ${where}: the HOST KEY HAS CHANGED. The server presented ${presented}, ` +
        `but ${file} records ${recorded} for this host. This can be an attack, or the server was reinstalled; ` +
        'refusing to connect. Check the new fingerprint with the server administrator, then update the file',
    };
  }
  return {
    accepted: false,
    reason:
      `host key verification failed for ${where}: the server's ${presented} is not in ${file}. ` +
      `Check the fingerprint, then add the key, e.g. with: ssh-keyscan -p ${port} ${host} >> ${file}`,
  };
}
