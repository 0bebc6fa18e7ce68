/**
 * The `platform:` section of `server.yaml` (SPEC §9, docs/platform.md): switches the
 * multi-user platform on and configures its sign-in. Without it (or with `enabled: false`) the
 * server stays a single-user one and nothing here applies.
 *
 * ```yaml
 * platform:
 *   enabled: true
 *   publicUrl: https://vaala.example.com      # the address browsers use (links, OIDC redirects)
 *   trustedProxies: [127.0.0.1, 10.0.0.0/8]   # X-Forwarded-For is read only from these
 *   sessionTtlHours: 168
 *   signInAttempts: { max: 10, windowSeconds: 300 }
 *   memberWorkspaces:                         # where members may make projects, per executor
 *     local: [/srv/projects]
 *   oidc:
 *     - name: company
 *       label: Company account
 *       issuer: https://id.example.com
 *       clientId: openvaala
 *       clientSecret: env:OPENVAALA_OIDC_SECRET
 * ```
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { httpUrl } from './web-addresses.js';

/** An IPv4 or IPv6 address, optionally with a prefix length (`10.0.0.0/8`, `fd00::/8`). */
const AddressOrRange = z.string().refine(
  (value) => {
    const [address, prefix, extra] = value.split('/');
    if (extra !== undefined || address === undefined) return false;
    const family = isIP(address);
    if (family === 0) return false;
    if (prefix === undefined) return true;
    const bits = Number(prefix);
    return /^\d{1,3}$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
  },
  { message: 'not an IP address or CIDR range (e.g. 127.0.0.1, 10.0.0.0/8, ::1)' },
);

/** One OpenID Connect issuer users may sign in with. */
export const OidcProviderSettingsSchema = z.strictObject({
  /** Short name used in the callback path: letters, digits, `-` and `_`. */
  name: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, { message: 'letters, digits, - and _ only (at most 40)' }),
  /** Button text on the sign-in page (default: the name). */
  label: z.string().min(1).max(80).optional(),
  /** Issuer URL; its `/.well-known/openid-configuration` is read at the first sign-in. */
  issuer: httpUrl(),
  clientId: z.string().min(1),
  /** Client secret, literally or (recommended) as `env:NAME`. */
  clientSecret: z.string().min(1),
  /** Scopes asked for; `openid` and `email` are always included. */
  scopes: z.array(z.string().min(1)).default([]),
});
/** One OpenID Connect issuer. */
export type OidcProviderSettings = z.infer<typeof OidcProviderSettingsSchema>;

/** The `platform:` section of `server.yaml`. */
export const PlatformSettingsSchema = z.strictObject({
  /** Platform mode: users, sign-in, roles. `openvaala serve --platform` switches it on too. */
  enabled: z.boolean().default(false),
  /** The address browsers reach the server at (behind a reverse proxy: its https address). */
  publicUrl: httpUrl().optional(),
  /** Addresses of reverse proxies whose `X-Forwarded-For` names the real client. */
  trustedProxies: z.array(AddressOrRange).default([]),
  /** How long a web session lasts, hours (default one week). */
  sessionTtlHours: z.number().int().min(1).max(24 * 90).default(168),
  /** Sign-in attempts (password, claim, invitation) one client address may make per window. */
  signInAttempts: z
    .strictObject({
      max: z.number().int().min(1).max(10_000).default(10),
      windowSeconds: z.number().int().min(1).max(86_400).default(300),
    })
    .default({ max: 10, windowSeconds: 300 }),
  oidc: z.array(OidcProviderSettingsSchema).default([]),
  /**
   * Directories members (not administrators) may make projects in, per executor name: a
   * member's project workspace on a listed executor must be one of them or lie inside one.
   * The plain `local` executor, which runs members' commands unsandboxed as the server's own
   * user, is refused to members unless it is listed (docs/platform.md, "Where members work").
   */
  memberWorkspaces: z
    .record(
      z.string().min(1).max(200),
      z.array(z.string().min(1).max(4096).refine((value) => value.startsWith('/') && !value.includes('\0'), { message: 'must be an absolute path (starting with /)' })).min(1, { message: 'list at least one directory, or leave the executor out' }),
    )
    .default({}),
});
/** The `platform:` section of `server.yaml`, defaults applied. */
export type PlatformSettings = z.infer<typeof PlatformSettingsSchema>;

/** The settings of a server without a `platform:` section. */
export const DEFAULT_PLATFORM_SETTINGS: PlatformSettings = PlatformSettingsSchema.parse({});
