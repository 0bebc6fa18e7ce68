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
 * ```
 *
 * The connection string holds a password, so it is only accepted as `env:NAME`, read from the
 * server's environment when it starts.
 */
import { z } from 'zod';
import { ConfigError } from './yaml-file.js';

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
  })
  .superRefine((value, context) => {
    if (value.backend === 'postgres' && value.postgres === undefined) {
      context.addIssue({ code: 'custom', path: ['postgres'], message: 'backend postgres needs postgres.connectionString (env:NAME)' });
    }
  });

/** The whole `storage.yaml`. */
export type StorageSettings = z.infer<typeof StorageSettingsSchema>;

/** The storage the server opens, with secrets resolved. */
export type StorageSelection =
  | { backend: 'embedded' }
  | { backend: 'postgres'; connectionString: string; schema?: string; maxConnections?: number };

/**
 * Resolves `storage.yaml` against the environment.
 * @param file path of `storage.yaml`, named in errors
 * @throws ConfigError naming the file and `postgres.connectionString` when the variable is unset or empty
 */
export function resolveStorageSelection(settings: StorageSettings, file: string, environment: NodeJS.ProcessEnv = process.env): StorageSelection {
  if (settings.backend !== 'postgres' || settings.postgres === undefined) return { backend: 'embedded' };
  const name = settings.postgres.connectionString.slice('env:'.length);
  const connectionString = environment[name];
  if (connectionString === undefined || connectionString === '') {
    throw new ConfigError(file, [{ keyPath: 'postgres.connectionString', message: `the environment variable ${name} is not set (it must hold the PostgreSQL connection string)` }]);
  }
  return {
    backend: 'postgres',
    connectionString,
    ...(settings.postgres.schema !== undefined ? { schema: settings.postgres.schema } : {}),
    ...(settings.postgres.maxConnections !== undefined ? { maxConnections: settings.postgres.maxConnections } : {}),
  };
}
