/**
 * `openvaala users claim --email <address>` (docs/platform.md, "Users and roles"): claims a
 * running platform-mode server by creating its first administrator, with the server token
 * (`users/claim`). The password is read from standard input (one line), never from the command
 * line, where other users of the machine could see it.
 */
import type { OpenVaalaPaths } from '../config/paths.js';
import { RuntimeClient, RuntimeClientError } from '../client/runtime-client.js';
import type { OutputStreams } from './exec-output.js';
import { findServer } from './server-discovery.js';
import { UsageError } from './usage-error.js';

/** Reads all of standard input; the first line is the password. */
async function readPassword(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input as AsyncIterable<Buffer | string>) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '').trimEnd();
}

/**
 * Claims the platform of the running server.
 * @returns 0 when the administrator was created
 * @throws UsageError when no server runs, or when standard input gives no password (empty, or an
 *   empty first line); Error with the server's message when it refuses
 */
export async function runUsersClaim(paths: OpenVaalaPaths, options: { email: string; displayName?: string }, input: NodeJS.ReadableStream, streams: OutputStreams): Promise<number> {
  const server = await findServer(paths);
  if (!server) throw new UsageError('no runtime server runs for this data directory; start one with `openvaala serve --platform`');
  if ((input as { isTTY?: boolean }).isTTY) streams.stderr.write('password of the new administrator (one line, then Enter and Ctrl-D): ');
  const password = await readPassword(input);
  // An empty password would reach the server and be refused as too short, which hides that nothing was read.
  if (password.trim() === '') throw new UsageError(`no password on standard input: give the new administrator's password as its first line, e.g. printf '%s\\n' "$PASSWORD" | openvaala users claim --email <address>`);
  const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'openvaala-users' });
  try {
    const { user } = await client.request('users/claim', { email: options.email, password, ...(options.displayName !== undefined ? { displayName: options.displayName } : {}) });
    streams.stdout.write(`administrator ${user.email} created (${user.id}); sign in at ${server.url}/web/v1/sign-in\n`);
    return 0;
  } catch (error) {
    if (error instanceof RuntimeClientError) throw new Error(error.message, { cause: error });
    throw error;
  } finally {
    await client.close();
  }
}
