/**
 * Users, accounts, web sessions and API tokens of the platform (SPEC §9, docs/platform.md,
 * docs/protocol.md "Platform: users and accounts"). Every method needs platform mode (else
 * `conflict` with reason `platform_off`) and checks the caller: `users/*` are for
 * administrators (`users/claim` for the server token holder), `account/*` act on the caller's
 * own user. Spread into `methods` of `methods.ts`.
 */
import { z } from 'zod';

/** A platform role. */
export const PlatformRoleSchema = z.enum(['admin', 'member']);

/** A user as listed. */
export const UserSchema = z.object({
  /** `user_` and 20 hex digits. */
  id: z.string(),
  /** Lowercased email address (unique). */
  email: z.string(),
  displayName: z.string(),
  role: PlatformRoleSchema,
  /** Whether the user can sign in with a password (else only with OpenID Connect). */
  hasPassword: z.boolean(),
  /** ms since the epoch. */
  createdAt: z.number().int(),
});

/** What an API token may reach. */
export const TokenScopeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('read-only') }),
  z.object({ kind: z.literal('project'), projectId: z.string().min(1).max(200) }),
  z.object({ kind: z.literal('admin') }),
]);

/** A web session as its user sees it (never its secret). */
export const WebSessionSchema = z.object({
  /** `wsess_` and 20 hex digits. */
  id: z.string(),
  /** ms since the epoch. */
  createdAt: z.number().int(),
  expiresAt: z.number().int(),
  lastUsedAt: z.number().int(),
  userAgent: z.string(),
  /** Client address at sign-in. */
  address: z.string(),
  /** `password`, `oidc:<name>`, `invitation`, `pairing` or `claim`. */
  method: z.string(),
  /** Whether this is the session of the connection asking. */
  current: z.boolean(),
});

/** An API token as its owner sees it (never the token itself after creation). */
export const ApiTokenSchema = z.object({
  /** `tok_` and 20 hex digits. */
  id: z.string(),
  name: z.string(),
  scope: TokenScopeSchema,
  /** ms since the epoch. */
  createdAt: z.number().int(),
  /** ms since the epoch; absent until first used. */
  lastUsedAt: z.number().int().optional(),
});

const userIdParam = z.string().regex(/^user_[0-9a-f]{1,64}$/, { message: 'not a user id (expected user_ followed by hex digits)' });
const email = z.string().min(3).max(254);

/** Request methods of users and accounts: name → params and result schemas. */
export const platformIdentityMethods = {
  /** Every user (administrators only). */
  'users/list': {
    params: z.object({}).optional(),
    result: z.object({ users: z.array(UserSchema) }),
  },
  /**
   * Invites an email address with a role (administrators only). The link (its code in the
   * fragment) is shown once; it works once, for 7 days. A new invitation of the same address
   * replaces the pending one.
   */
  'users/invite': {
    params: z.object({ email, role: PlatformRoleSchema.default('member') }),
    result: z.object({ invitationId: z.string(), email: z.string(), role: PlatformRoleSchema, url: z.string(), expiresAt: z.number().int() }),
  },
  /** Changes a user's role (administrators only); the last administrator cannot be demoted (`conflict`, `last_administrator`). Their connections end. */
  'users/setRole': {
    params: z.object({ userId: userIdParam, role: PlatformRoleSchema }),
    result: z.object({ user: UserSchema }),
  },
  /** Removes a user with their sessions, tokens and memberships (administrators only); never the last administrator. */
  'users/remove': {
    params: z.object({ userId: userIdParam }),
    result: z.object({}),
  },
  /**
   * Claims a new platform: creates its first administrator. Only for the server token holder
   * (`openvaala users claim`), only while there are no users (`conflict`, `already_claimed`).
   */
  'users/claim': {
    params: z.object({ email, password: z.string(), displayName: z.string().optional() }),
    result: z.object({ user: UserSchema }),
  },
  /** Who the connection acts as: the local owner, or a user (with the token's scope for an API token). */
  'account/get': {
    params: z.object({}).optional(),
    result: z.object({
      platform: z.boolean(),
      caller: z.enum(['local-owner', 'user', 'api-token']),
      user: UserSchema.optional(),
      scope: TokenScopeSchema.optional(),
    }),
  },
  /** The caller's live web sessions, newest first. */
  'account/sessions/list': {
    params: z.object({}).optional(),
    result: z.object({ sessions: z.array(WebSessionSchema) }),
  },
  /** Revokes one of the caller's web sessions: its connections end at once. */
  'account/sessions/revoke': {
    params: z.object({ sessionId: z.string().min(1).max(200) }),
    result: z.object({}),
  },
  /** The caller's API tokens, newest first. */
  'account/tokens/list': {
    params: z.object({}).optional(),
    result: z.object({ tokens: z.array(ApiTokenSchema) }),
  },
  /** Creates an API token; `token` is shown this once (only its hash is kept). An `admin` scope needs an administrator. */
  'account/tokens/create': {
    params: z.object({ name: z.string().min(1).max(100), scope: TokenScopeSchema }),
    result: z.object({ token: z.string(), info: ApiTokenSchema }),
  },
  /** Revokes one of the caller's API tokens: its connections end at once. */
  'account/tokens/revoke': {
    params: z.object({ tokenId: z.string().min(1).max(200) }),
    result: z.object({}),
  },
  /** A one-time link (5 minutes) that signs another browser (a phone) in as the caller. */
  'account/pairing/create': {
    params: z.object({}).optional(),
    result: z.object({ url: z.string(), expiresAt: z.number().int() }),
  },
} as const;
