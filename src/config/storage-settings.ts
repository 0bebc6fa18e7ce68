/**
 * `storage.yaml`: where the runtime server keeps conversations (SPEC §4). Read at start only;
 * a change takes effect at the next start.
 *
 * ```yaml
 * backend: postgres            # or embedded (the default: JSONL logs and metadata.db in the data directory)
 * postgres:
 *   connectionString: env:OPENVAALA_DATABASE_URL
 *   schema: openvaala          # optional, default public
 *   maxConnections: 10         # optional
 * cluster:                     # optional: several servers serving this schema at once
 *   advertiseUrl: http://10.0.0.5:8790   # where the other servers reach this one
 *   secret: env:OPENVAALA_CLUSTER_SECRET # shared by every server of the schema
 * ```
 *
 * Without `cluster`, one server serves a PostgreSQL schema at a time (the others stand by);
 * with it, every server serves and each conversation is owned by one of them
 * (docs/deployment.md, "Several servers on PostgreSQL").
 *
 * The connection string holds a password, so it is only accepted as `env:NAME`, read from the
 * server's environment when it starts.
 */
import { z } from 'zod';
import { ConfigError, EVEN_WITH_OTHER_PROBLEMS, isRecord } from './yaml-file.js';
import { formatKeyPath } from '../key-path.js';

const ENVIRONMENT_REFERENCE = /^env:[A-Za-z_][A-Za-z0-9_]*$/;

/** The whole `storage.yaml`. */
export const StorageSettingsSchema = z
  .strictObject({
    /** `embedded` (files and SQLite in the data directory) or `postgres` (one PostgreSQL database, which several servers may share). */
    backend: z.enum(['embedded', 'postgres']).default('embedded'),
    postgres: z
      .strictObject({
        /** libpq connection string, as `env:NAME` (it holds a password). */
        connectionString: z.string().regex(ENVIRONMENT_REFERENCE, 'write the connection string as env:NAME and set the environment variable NAME to it (it holds a password, so it is not written in the file)'),
        /** Schema holding the tables (created if missing). Default `public`. */
        schema: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'use letters, digits and "_", not starting with a digit').optional(),
        /** Most connections of the server's pool. Default 10. */
        maxConnections: z.number().int().min(1).max(1000).optional(),
      })
      .optional(),
    /** Shared serving of one PostgreSQL schema by several servers (docs/deployment.md). */
    cluster: z
      .strictObject({
        /** The base URL (`http://host:port`) the other servers of the schema reach this one on. */
        advertiseUrl: z.url({ protocol: /^https?$/, error: 'give the http:// or https:// base URL (host and port) the other servers reach this one on' }),
        /** Secret every server of the schema shares for server-to-server calls, as `env:NAME`. */
        secret: z.string().regex(ENVIRONMENT_REFERENCE, 'write the cluster secret as env:NAME and set the environment variable NAME to it'),
        /** How long a server waits for a dead owner's lock to be freed before giving up a takeover, ms. Default 30000. */
        takeoverTimeoutMs: z.number().int().min(100).max(600_000).optional(),
      })
      .optional(),
  })
  .superRefine((value: unknown, context) => {
    // Runs also when other keys have problems, so one run names these too.
    if (!isRecord(value)) return;
    const backend = value.backend ?? 'embedded';
    if (backend === 'postgres' && value.postgres === undefined) {
      context.addIssue({ code: 'custom', path: ['postgres'], message: 'backend postgres needs postgres.connectionString (env:NAME)' });
    }
    if (value.cluster !== undefined && backend !== 'postgres') {
      context.addIssue({ code: 'custom', path: ['cluster'], message: 'cluster needs backend postgres (the servers share one database)' });
    }
  }, EVEN_WITH_OTHER_PROBLEMS);

/** The whole `storage.yaml`. */
export type StorageSettings = z.infer<typeof StorageSettingsSchema>;

/** The storage the server opens, with secrets resolved. */
export type StorageSelection =
  | { backend: 'embedded' }
  | { backend: 'postgres'; connectionString: string; schema?: string; maxConnections?: number; cluster?: ClusterSelection };

/** `storage.yaml` `cluster` with its secret read from the environment. */
export interface ClusterSelection {
  /** Base URL other servers reach this one on (`http://host:port`, no path). */
  advertiseUrl: string;
  /** The shared secret of server-to-server calls. */
  secret: string;
  /** How long a takeover waits for a dead owner's lock, ms. */
  takeoverTimeoutMs: number;
}

const CONNECTION_STRING_SCHEMES = new Set(['postgres:', 'postgresql:', 'socket:']);

/**
 * What is wrong with a PostgreSQL connection string, or undefined when the driver can read it.
 * node-postgres reads a URL (`postgres://` or `postgresql://`, libpq's URI form), `socket:` or a
 * Unix socket directory starting with `/`; anything else it resolves against a placeholder host
 * and fails later with a DNS error that names neither the setting nor the variable. The message
 * never repeats the value: it holds a password.
 */
export function connectionStringProblem(connectionString: string): string | undefined {
  if (connectionString.startsWith('/')) return undefined;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(connectionString)?.[0].toLowerCase();
  if (scheme === undefined || !CONNECTION_STRING_SCHEMES.has(scheme)) {
    const found = scheme === undefined ? 'no scheme' : `the scheme ${scheme}`;
    return `holds no PostgreSQL connection string (${found}): write it as postgres://user:password@host:port/database, or a Unix socket directory starting with /`;
  }
  // Spaces and stray % signs are escaped as node-postgres does before its own URL parse.
  const escaped = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(connectionString) ? encodeURI(connectionString).replace(/%25(\d\d)/g, '%$1') : connectionString;
  try {
    new URL(escaped.replace('@/', '@placeholder/'));
  } catch {
    return 'holds a connection string that is not a valid URL (is the port a number? write @ : / ? # in the user name or password percent-encoded, e.g. @ as %40)';
  }
  return undefined;
}

/** Default of `cluster.takeoverTimeoutMs`, ms. */
export const DEFAULT_TAKEOVER_TIMEOUT_MS = 30_000;

/** One problem of `storage.yaml` with the environment: the key path and what is wrong. */
export interface StorageEnvironmentProblem {
  keyPath: string[];
  message: string;
}

/** The variable a value names as `env:NAME`, or undefined for anything else. */
function referencedVariable(value: unknown): string | undefined {
  return typeof value === 'string' && ENVIRONMENT_REFERENCE.test(value) ? value.slice('env:'.length) : undefined;
}

/**
 * What the `env:NAME` references of `storage.yaml` lack in an environment: a variable that is
 * unset or empty, or a connection string the driver cannot read. Takes the file's values
 * unchecked, so the configuration load names these problems together with the file's other
 * ones, and the start reports them in the same words (both call this).
 * @param settings what `storage.yaml` holds (validated or not)
 * @param environment the environment the server runs with
 * @returns one problem per reference, in the order of the keys; empty for the embedded backend
 */
export function storageEnvironmentProblems(settings: unknown, environment: NodeJS.ProcessEnv = process.env): StorageEnvironmentProblem[] {
  if (!isRecord(settings) || settings.backend !== 'postgres' || !isRecord(settings.postgres)) return [];
  const problems: StorageEnvironmentProblem[] = [];
  const name = referencedVariable(settings.postgres.connectionString);
  if (name !== undefined) {
    const connectionString = environment[name];
    const problem = connectionString === undefined || connectionString === '' ? 'is not set (it must hold the PostgreSQL connection string)' : connectionStringProblem(connectionString);
    if (problem !== undefined) problems.push({ keyPath: ['postgres', 'connectionString'], message: `the environment variable ${name} ${problem}` });
  }
  const secretName = isRecord(settings.cluster) ? referencedVariable(settings.cluster.secret) : undefined;
  if (secretName !== undefined && !environment[secretName]) {
    problems.push({ keyPath: ['cluster', 'secret'], message: `the environment variable ${secretName} is not set (it must hold the secret shared by the servers of the cluster)` });
  }
  return problems;
}

/**
 * Resolves `storage.yaml` against the environment.
 * @param file path of `storage.yaml`, named in errors
 * @throws ConfigError naming the file and `postgres.connectionString` (or `cluster.secret`) when its variable is unset or empty,
 *   or `postgres.connectionString` when its variable holds no PostgreSQL connection string (see {@link storageEnvironmentProblems})
 */
export function resolveStorageSelection(settings: StorageSettings, file: string, environment: NodeJS.ProcessEnv = process.env): StorageSelection {
  if (settings.backend !== 'postgres' || settings.postgres === undefined) return { backend: 'embedded' };
  const problems = storageEnvironmentProblems(settings, environment);
  if (problems.length > 0) throw new ConfigError(file, problems.map((problem) => ({ keyPath: formatKeyPath(problem.keyPath), message: problem.message })));
  const connectionString = environment[settings.postgres.connectionString.slice('env:'.length)] as string;
  let cluster: ClusterSelection | undefined;
  if (settings.cluster !== undefined) {
    const secret = environment[settings.cluster.secret.slice('env:'.length)] as string;
    cluster = { advertiseUrl: settings.cluster.advertiseUrl.replace(/\/+$/, ''), secret, takeoverTimeoutMs: settings.cluster.takeoverTimeoutMs ?? DEFAULT_TAKEOVER_TIMEOUT_MS };
  }
  return {
    backend: 'postgres',
    connectionString,
    ...(settings.postgres.schema !== undefined ? { schema: settings.postgres.schema } : {}),
    ...(settings.postgres.maxConnections !== undefined ? { maxConnections: settings.postgres.maxConnections } : {}),
    ...(cluster ? { cluster } : {}),
  };
}
