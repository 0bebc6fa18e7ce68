/**
 * Handlers of `users/*` and `account/*` (docs/protocol.md, "Platform: users and accounts";
 * SPEC §9). Each checks platform mode and the connection's caller before doing anything.
 */
import { ErrorCodes, RpcError, type MethodParams, type MethodResult } from '../../protocol/index.js';
import { isAdministrator, type Caller } from '../../platform/caller.js';
import type { Platform } from '../../platform/platform.js';
import { summarizeToken } from '../../platform/sign-in/api-tokens.js';
import { checkEmail, summarizeUser } from '../../platform/users/user-store.js';
import { SIGN_IN_PATH } from '../web/web-routes.js';
import type { RpcConnection } from '../rpc-connection.js';

type Methods = 'users/list' | 'users/invite' | 'users/setRole' | 'users/remove' | 'users/claim' | 'account/get' | 'account/sessions/list' | 'account/sessions/revoke' | 'account/tokens/list' | 'account/tokens/create' | 'account/tokens/revoke' | 'account/pairing/create';
type Handlers = { [M in Methods]: (params: MethodParams<M>) => Promise<MethodResult<M>> };

/** The platform, or `conflict` `platform_off` naming the method. */
function platformOf(connection: RpcConnection, method: string): Platform {
  if (!connection.platform?.signInEnabled) throw RpcError.conflict(`${method}: platform mode is off; start the server with \`openvaala serve --platform\` or set platform.enabled in server.yaml`, 'platform_off');
  return connection.platform;
}

/** Refuses callers without administrator rights. */
function requireAdministrator(connection: RpcConnection, method: string): Platform {
  const platform = platformOf(connection, method);
  if (!isAdministrator(connection.caller)) throw new RpcError(ErrorCodes.forbidden, `${method}: only administrators may do this (an admin user, or an admin-scoped token of one)`);
  return platform;
}

/** The user the caller acts as; the local owner has no account. */
function userOf(connection: RpcConnection, method: string): { platform: Platform; caller: Exclude<Caller, { kind: 'local-owner' }> } {
  const platform = platformOf(connection, method);
  const caller = connection.caller;
  if (caller.kind === 'local-owner') throw new RpcError(ErrorCodes.forbidden, `${method}: the server token holder has no platform account; sign in as a user`);
  return { platform, caller };
}

/** Builds the handlers bound to one connection. */
export function createPlatformIdentityHandlers(connection: RpcConnection): Handlers {
  return {
    async 'users/list'() {
      const platform = requireAdministrator(connection, 'users/list');
      return { users: (await platform.users.list()).map(summarizeUser) };
    },
    async 'users/invite'(params) {
      const platform = requireAdministrator(connection, 'users/invite');
      const email = checkEmail(params.email);
      if (await platform.users.findByEmail(email)) throw RpcError.conflict(`users/invite: params.email: a user with email ${email} exists already`, 'email_taken');
      const invitedBy = connection.caller.kind === 'local-owner' ? 'local-owner' : connection.caller.userId;
      const { invitation, code } = await platform.invitations.create(email, params.role, invitedBy);
      return { invitationId: invitation.id, email, role: invitation.role, url: `${platform.linkBase}${SIGN_IN_PATH}#invitation=${code}`, expiresAt: invitation.expiresAt };
    },
    async 'users/setRole'(params) {
      const platform = requireAdministrator(connection, 'users/setRole');
      const before = await platform.users.get(params.userId);
      const user = await platform.users.setRole(params.userId, params.role);
      // Connections carry the role they were opened with: they end, and reconnect with the new one.
      if (before && before.role !== user.role) platform.endAccess({ userIds: [user.id], reason: `the user's role changed to ${user.role}; reconnect` });
      return { user: summarizeUser(user) };
    },
    async 'users/remove'(params) {
      const platform = requireAdministrator(connection, 'users/remove');
      await platform.removeUser(params.userId);
      return {};
    },
    async 'users/claim'(params) {
      const platform = platformOf(connection, 'users/claim');
      if (connection.caller.kind !== 'local-owner') throw new RpcError(ErrorCodes.forbidden, 'users/claim: only the holder of the server token may claim the platform (e.g. `openvaala users claim`)');
      return { user: summarizeUser(await platform.users.claim(params)) };
    },
    async 'account/get'() {
      const caller = connection.caller;
      if (!connection.platform?.signInEnabled || caller.kind === 'local-owner') return { platform: connection.platform?.signInEnabled === true, caller: 'local-owner' };
      const user = await connection.platform.users.get(caller.userId);
      return { platform: true, caller: caller.kind, ...(user ? { user: summarizeUser(user) } : {}), ...(caller.kind === 'api-token' ? { scope: caller.scope } : {}) };
    },
    async 'account/sessions/list'() {
      const { platform, caller } = userOf(connection, 'account/sessions/list');
      const sessions = await platform.sessions.listForUser(caller.userId);
      const current = caller.kind === 'user' ? caller.webSessionId : undefined;
      return { sessions: sessions.map(({ userId: _userId, secretHash: _secretHash, ...session }) => ({ ...session, current: session.id === current })) };
    },
    async 'account/sessions/revoke'(params) {
      const { platform, caller } = userOf(connection, 'account/sessions/revoke');
      const session = await platform.sessions.revoke(caller.userId, params.sessionId);
      platform.endAccess({ webSessionIds: [session.id], reason: 'the session was revoked' });
      return {};
    },
    async 'account/tokens/list'() {
      const { platform, caller } = userOf(connection, 'account/tokens/list');
      return { tokens: (await platform.tokens.listForUser(caller.userId)).map(summarizeToken) };
    },
    async 'account/tokens/create'(params) {
      const { platform, caller } = userOf(connection, 'account/tokens/create');
      // A token cannot mint a token with more reach than itself.
      if (caller.kind === 'api-token' && caller.scope.kind !== 'admin') throw new RpcError(ErrorCodes.forbidden, 'account/tokens/create: only a web session or an admin-scoped token may create tokens');
      // A token limited to a project its user cannot reach would reach nothing: a mistaken id.
      if (params.scope.kind === 'project') {
        platform.access.checkProjectExists(caller, 'account/tokens/create', params.scope.projectId, 'scope.projectId');
        const refusal = platform.access.projectRefusal(caller, params.scope.projectId);
        if (refusal !== undefined) throw new RpcError(ErrorCodes.invalidParams, `account/tokens/create: params.scope.projectId: ${refusal}`);
      }
      const { token, secret } = await platform.tokens.create(caller.userId, caller.role, params);
      return { token: secret, info: summarizeToken(token) };
    },
    async 'account/tokens/revoke'(params) {
      const { platform, caller } = userOf(connection, 'account/tokens/revoke');
      const token = await platform.tokens.revoke(caller.userId, params.tokenId);
      platform.endAccess({ tokenIds: [token.id], reason: 'the API token was revoked' });
      return {};
    },
    async 'account/pairing/create'() {
      const { platform, caller } = userOf(connection, 'account/pairing/create');
      if (caller.kind !== 'user') throw new RpcError(ErrorCodes.forbidden, 'account/pairing/create: pair a browser from a signed-in web session, not with an API token');
      const { code, expiresAt } = platform.pairing.create(caller.userId);
      return { url: `${platform.linkBase}${SIGN_IN_PATH}#pairing=${code}`, expiresAt };
    },
  };
}
