/**
 * Who is making a request to the runtime server (SPEC §9, "Platform layer"). Every connection
 * and every HTTP request is bound to one caller when it is authenticated; the platform's
 * access rules read only this, never the transport.
 *
 * Without platform mode every authenticated connection is the {@link LOCAL_OWNER}: the person
 * who holds the server token on their own machine, with every right.
 */

/** What an API token may reach (issue "The platform": scoped tokens for scripts and CI). */
export type TokenScope =
  | { kind: 'read-only' }
  | { kind: 'project'; projectId: string }
  | { kind: 'admin' };

/** A platform role: administrators manage users and every project; members reach the projects they belong to. */
export type PlatformRole = 'admin' | 'member';

/** The identity a request acts as. */
export type Caller =
  /** The holder of the server token (local CLI, adapters, the signed-in local web UI): every right. */
  | { kind: 'local-owner' }
  /** A signed-in platform user (web session cookie). */
  | { kind: 'user'; userId: string; role: PlatformRole; webSessionId: string }
  /** A script or CI job holding a scoped API token of `userId`. */
  | { kind: 'api-token'; userId: string; role: PlatformRole; tokenId: string; scope: TokenScope };

/** The caller of every connection when platform mode is off. */
export const LOCAL_OWNER: Caller = Object.freeze({ kind: 'local-owner' });

/** Whether `caller` has administrator rights: the local owner, an admin user, or an admin-scoped token of an admin. */
export function isAdministrator(caller: Caller): boolean {
  if (caller.kind === 'local-owner') return true;
  if (caller.kind === 'user') return caller.role === 'admin';
  return caller.role === 'admin' && caller.scope.kind === 'admin';
}

/** Whether `caller` may change anything at all (a read-only token may not). */
export function mayWrite(caller: Caller): boolean {
  return !(caller.kind === 'api-token' && caller.scope.kind === 'read-only');
}

/**
 * The one project a project-scoped API token may reach (docs/platform.md, "Sessions and
 * tokens"); undefined for every other caller, whose reach is not limited to one project.
 */
export function tokenProject(caller: Caller): string | undefined {
  return caller.kind === 'api-token' && caller.scope.kind === 'project' ? caller.scope.projectId : undefined;
}
