/**
 * `storage.yaml` `cluster`: valid settings resolve with the secret read from the environment;
 * bad ones are refused naming the file, the line and the key.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TAKEOVER_TIMEOUT_MS, resolveStorageSelection, StorageSettingsSchema } from '../../src/config/storage-settings.js';
import { ConfigError, parseYamlFile } from '../../src/config/yaml-file.js';

const POSTGRES = 'backend: postgres\npostgres:\n  connectionString: env:DATABASE_URL\n';
const ENVIRONMENT = { DATABASE_URL: 'postgres://localhost/openvaala', CLUSTER_SECRET: 's3cret' };

function parse(text: string) {
  return parseYamlFile('storage.yaml', text, StorageSettingsSchema);
}

function problemOf(text: string): string {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('the file was accepted');
}

describe('storage.yaml cluster', () => {
  it('resolves the advertised URL (without a final slash), the secret and the default takeover timeout', () => {
    const settings = parse(`${POSTGRES}cluster:\n  advertiseUrl: http://10.0.0.5:8790/\n  secret: env:CLUSTER_SECRET\n`);
    expect(resolveStorageSelection(settings, 'storage.yaml', ENVIRONMENT)).toEqual({
      backend: 'postgres',
      connectionString: ENVIRONMENT.DATABASE_URL,
      cluster: { advertiseUrl: 'http://10.0.0.5:8790', secret: 's3cret', takeoverTimeoutMs: DEFAULT_TAKEOVER_TIMEOUT_MS },
    });
  });

  it('refuses cluster without backend postgres, naming the key', () => {
    expect(problemOf('cluster:\n  advertiseUrl: http://10.0.0.5:8790\n  secret: env:CLUSTER_SECRET\n')).toMatch(/storage\.yaml.*cluster: cluster needs backend postgres/s);
  });

  it('refuses a secret written in the file and an advertised URL that is not http(s), with line and key path', () => {
    const message = problemOf(`${POSTGRES}cluster:\n  advertiseUrl: ftp://10.0.0.5\n  secret: plain-text\n`);
    expect(message).toMatch(/storage\.yaml:5.*cluster\.advertiseUrl: give the http:\/\/ or https:\/\/ base URL/s);
    expect(message).toMatch(/storage\.yaml:6.*cluster\.secret: write the cluster secret as env:NAME/s);
  });

  it('stops when the secret\'s variable is unset, naming the file and the key', () => {
    const settings = parse(`${POSTGRES}cluster:\n  advertiseUrl: http://10.0.0.5:8790\n  secret: env:CLUSTER_SECRET\n`);
    expect(() => resolveStorageSelection(settings, 'storage.yaml', { DATABASE_URL: ENVIRONMENT.DATABASE_URL })).toThrow(/storage\.yaml.*cluster\.secret: the environment variable CLUSTER_SECRET is not set/s);
  });
});

describe('storage.yaml postgres.connectionString', () => {
  const settings = () => parse(POSTGRES);
  const problemWith = (value: string): string => {
    try {
      resolveStorageSelection(settings(), 'storage.yaml', { DATABASE_URL: value });
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
    return 'accepted';
  };

  it('accepts the forms node-postgres reads: URLs, socket: and a socket directory', () => {
    for (const value of [
      'postgres://app:p%40ss@127.0.0.1:5432/openvaala',
      'postgresql://app@db.internal/openvaala?sslmode=require',
      'postgresql:///openvaala?host=/var/run/postgresql',
      'postgres://app:secret@/openvaala?host=/tmp',
      'socket:/var/run/postgresql?db=openvaala',
      '/var/run/postgresql openvaala',
    ]) {
      expect(problemWith(value), value).toBe('accepted');
    }
  });

  it('names the key and the variable, never the value, for a string the driver would send to DNS or cannot parse', () => {
    for (const value of ['openvaala', 'localhost:5432/openvaala', 'mysql://app:hunter2@localhost/openvaala']) {
      const message = problemWith(value);
      expect(message, value).toMatch(/storage\.yaml.*postgres\.connectionString: the environment variable DATABASE_URL holds no PostgreSQL connection string/s);
      expect(message).not.toContain('hunter2');
    }
    const badPort = problemWith('postgres://app:hunter2@localhost:54x2/openvaala');
    expect(badPort).toMatch(/postgres\.connectionString: the environment variable DATABASE_URL holds a connection string that is not a valid URL \(is the port a number\?/);
    expect(badPort).not.toContain('hunter2');
  });
});
