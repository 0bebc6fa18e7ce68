/**
 * Sign-in with OpenID Connect (OpenID Connect Core 1.0, authorization code flow with PKCE,
 * RFC 7636) through `openid-client`, for any issuer configured in `server.yaml`
 * (`platform.oidc`). The issuer's metadata is discovered once (OpenID Connect Discovery 1.0)
 * and kept. A sign-in is accepted only with a verified email address (`email_verified: true`,
 * Core §5.1): the address is what ties the identity to a user.
 */
import type * as OpenIdClient from 'openid-client';
import type { OidcProviderSettings } from '../../config/platform-settings.js';
import { resolveSecret } from '../../config/providers.js';
import { isLoopbackName } from '../../server/http-server.js';

/** How long a started sign-in may take before its callback is refused, ms (10 minutes). */
export const OIDC_TRANSACTION_TTL_MS = 10 * 60 * 1000;
/** Most sign-ins waiting for their callback at once. */
const MAX_PENDING = 1000;

/** What a finished sign-in says about the person. */
export interface OidcIdentity {
  /** `<issuer>#<subject>`: stable for the person at this issuer. */
  identity: string;
  /** Lowercased verified email address. */
  email: string;
  /** `name` claim, when given. */
  name?: string;
}

/** A sign-in that did not give a usable identity (the message says why, for the person). */
export class OidcSignInError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OidcSignInError';
  }
}

interface Pending {
  provider: string;
  codeVerifier: string;
  nonce: string;
  redirectUri: string;
  expiresAt: number;
}

let loadedOpenIdClient: typeof OpenIdClient | undefined;

/** `openid-client`, imported on the first sign-in through an issuer (most servers never use it). */
async function openIdClient(): Promise<typeof OpenIdClient> {
  return (loadedOpenIdClient ??= await import('openid-client'));
}

/** The configured issuers and the sign-ins in flight. */
export class OidcSignIn {
  private readonly configurations = new Map<string, Promise<OpenIdClient.Configuration>>();
  private readonly pending = new Map<string, Pending>();

  /**
   * @param providers the `platform.oidc` entries
   * @param environment where `env:NAME` client secrets are read
   */
  constructor(
    private readonly providers: OidcProviderSettings[],
    private readonly environment: NodeJS.ProcessEnv = process.env,
  ) {}

  /** Name and button label of each configured issuer. */
  list(): { name: string; label: string }[] {
    return this.providers.map((provider) => ({ name: provider.name, label: provider.label ?? provider.name }));
  }

  /** Whether an issuer of that name is configured. */
  has(name: string): boolean {
    return this.providers.some((provider) => provider.name === name);
  }

  /**
   * Starts a sign-in: the issuer's authorization URL to send the browser to, and the `state`
   * value the browser must bring back (the caller binds it to the browser with a cookie).
   * @throws OidcSignInError when the issuer is unknown, its secret is unset or its discovery fails
   */
  async start(name: string, redirectUri: string): Promise<{ url: string; state: string }> {
    const provider = this.providers.find((candidate) => candidate.name === name);
    if (!provider) throw new OidcSignInError(`no OpenID Connect issuer named ${JSON.stringify(name.slice(0, 50))} is configured`);
    const client = await openIdClient();
    const configuration = await this.configuration(provider, client);
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const scope = [...new Set(['openid', 'email', 'profile', ...provider.scopes])].join(' ');
    const url = client.buildAuthorizationUrl(configuration, { redirect_uri: redirectUri, scope, state, nonce, code_challenge: await client.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256' });
    this.prune();
    this.pending.set(state, { provider: name, codeVerifier, nonce, redirectUri, expiresAt: Date.now() + OIDC_TRANSACTION_TTL_MS });
    return { url: url.href, state };
  }

  /**
   * Finishes a sign-in at the callback: checks state, PKCE and nonce, redeems the code and
   * reads the verified email (from the ID token, else from the UserInfo endpoint).
   * @param callbackUrl the full URL the browser was sent back to (with `code` and `state`)
   * @param state the state value bound to this browser (its cookie)
   * @throws OidcSignInError naming what was wrong (unknown or expired state, issuer error, no verified email)
   */
  async finish(name: string, callbackUrl: URL, state: string): Promise<OidcIdentity> {
    const pending = this.pending.get(state);
    this.pending.delete(state);
    if (!pending || pending.provider !== name || pending.expiresAt <= Date.now() || callbackUrl.searchParams.get('state') !== state) {
      throw new OidcSignInError('this sign-in was not started here, took too long or was already used; start it again');
    }
    const issuerError = callbackUrl.searchParams.get('error');
    if (issuerError) throw new OidcSignInError(`the identity provider refused: ${issuerError.slice(0, 100)} ${callbackUrl.searchParams.get('error_description')?.slice(0, 200) ?? ''}`.trim());
    const provider = this.providers.find((candidate) => candidate.name === name) as OidcProviderSettings;
    const client = await openIdClient();
    const configuration = await this.configuration(provider, client);
    let claims: Record<string, unknown>;
    let accessToken: string;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, { pkceCodeVerifier: pending.codeVerifier, expectedState: state, expectedNonce: pending.nonce, idTokenExpected: true });
      claims = { ...(tokens.claims() ?? {}) };
      accessToken = tokens.access_token;
    } catch (error) {
      throw new OidcSignInError(`the identity provider's answer was not accepted: ${(error as Error).message}`, { cause: error });
    }
    const subject = String(claims.sub);
    if (typeof claims.email !== 'string' || claims.email_verified === undefined) {
      try {
        claims = { ...claims, ...(await client.fetchUserInfo(configuration, accessToken, subject)) };
      } catch (error) {
        throw new OidcSignInError(`the identity provider's user information could not be read: ${(error as Error).message}`, { cause: error });
      }
    }
    if (typeof claims.email !== 'string' || claims.email === '') throw new OidcSignInError('the identity provider gave no email address; allow the email scope for this client');
    if (claims.email_verified !== true) throw new OidcSignInError(`the identity provider has not verified ${claims.email}; verify the address there first`);
    return { identity: `${provider.issuer}#${subject}`, email: claims.email.trim().toLowerCase(), ...(typeof claims.name === 'string' ? { name: claims.name } : {}) };
  }

  /** The issuer's configuration, discovered once; a failed discovery is retried next time. */
  private configuration(provider: OidcProviderSettings, client: typeof OpenIdClient): Promise<OpenIdClient.Configuration> {
    let configuration = this.configurations.get(provider.name);
    if (!configuration) {
      const secret = resolveSecret(provider.clientSecret, `server.yaml platform.oidc ${provider.name} clientSecret`, this.environment) as string;
      const issuer = new URL(provider.issuer);
      // Plain http only to an issuer on this machine (a test or a local identity provider).
      const execute = issuer.protocol === 'http:' && isLoopbackName(issuer.hostname.replace(/^\[|\]$/g, '')) ? [client.allowInsecureRequests] : [];
      configuration = client.discovery(issuer, provider.clientId, undefined, client.ClientSecretBasic(secret), { execute }).catch((error: unknown) => {
        this.configurations.delete(provider.name);
        throw new OidcSignInError(`the identity provider ${provider.issuer} could not be reached or described: ${(error as Error).message}`, { cause: error });
      });
      this.configurations.set(provider.name, configuration);
    }
    return configuration;
  }

  private prune(): void {
    const now = Date.now();
    for (const [state, pending] of this.pending) if (pending.expiresAt <= now) this.pending.delete(state);
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value as string);
  }
}
