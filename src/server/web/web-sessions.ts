/**
 * Sign-in of the web UI (docs/web.md): one-time sign-in codes, exchanged once for a browser
 * session kept in an HttpOnly cookie. Both secrets are random 256-bit values; the server keeps
 * only their SHA-256 hashes (a leaked memory dump, log line or data directory gives no usable
 * secret) with an expiry. Sessions are kept in the data directory, so a restarted server keeps
 * its browsers signed in and their pages reconnect by themselves; codes are in memory only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { writeFileAtomicallySync } from '../../write-file-atomically.js';
import { jsonSyntaxProblem } from '../../printable-text.js';

/** The file in the data directory that keeps the web sessions' hashes and expiries. */
export const WEB_SESSIONS_FILE = 'web-sessions.json';

/** How long a sign-in code may be used after it was made, ms (5 minutes). */
export const SIGN_IN_CODE_TTL_MS = 5 * 60 * 1000;
/** How long a browser session lasts after sign-in, ms (7 days); the cookie's Max-Age says the same. */
export const WEB_SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Most sign-in codes waiting at once; the oldest is dropped when one more is made. */
const MAX_PENDING_CODES = 100;
/** Most sessions at once; the oldest is dropped (signed out) when one more starts. */
const MAX_SESSIONS = 1000;

function hashOf(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

/** A fresh random secret: 32 bytes, base64url (43 characters). */
function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Secrets with an expiry, stored by hash. Insertion order is age order (Map keeps it). */
class ExpiringSecrets {
  private readonly expiries = new Map<string, number>();

  /**
   * @param file where the hashes and expiries are kept across restarts (JSON, mode 0600); none = memory only
   * @param onProblem told, with a message naming the file, when the kept file exists but cannot be used
   */
  constructor(
    private readonly ttlMs: number,
    private readonly capacity: number,
    private readonly now: () => number,
    private readonly file?: string,
    onProblem: (message: string) => void = () => {},
  ) {
    if (file !== undefined) this.load(file, onProblem);
  }

  /**
   * Reads the kept hashes. A missing file starts empty quietly (a first start); one that cannot
   * be read or is damaged also starts empty, so everyone signs in again, and says why.
   */
  private load(file: string, onProblem: (message: string) => void): void {
    const consequence = 'the browsers signed in before must sign in again';
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') onProblem(`${file}: cannot be read (${(error as Error).message}); ${consequence}`);
      return;
    }
    let kept: unknown;
    try {
      kept = JSON.parse(text);
    } catch (error) {
      onProblem(`${file}: not valid JSON (${jsonSyntaxProblem(error)}); ${consequence}`);
      return;
    }
    if (kept === null || typeof kept !== 'object' || Array.isArray(kept)) {
      onProblem(`${file}: not an object of session hashes and expiries; ${consequence}`);
      return;
    }
    for (const [hash, expiresAt] of Object.entries(kept as Record<string, unknown>)) {
      if (typeof expiresAt === 'number' && expiresAt > this.now() && this.expiries.size < this.capacity) this.expiries.set(hash, expiresAt);
    }
  }

  /** Writes the hashes (never the secrets) to the file, replacing it atomically. */
  private save(): void {
    if (this.file === undefined) return;
    writeFileAtomicallySync(this.file, JSON.stringify(Object.fromEntries(this.expiries)), { mode: 0o600 });
  }

  /** Makes and remembers a new secret; returns it and when it expires (ms since the epoch). */
  create(): { secret: string; expiresAt: number } {
    this.prune();
    while (this.expiries.size >= this.capacity) {
      const oldest = this.expiries.keys().next().value as string;
      this.expiries.delete(oldest);
    }
    const secret = newSecret();
    const expiresAt = this.now() + this.ttlMs;
    this.expiries.set(hashOf(secret), expiresAt);
    this.save();
    return { secret, expiresAt };
  }

  /** Whether `secret` is known and not expired; removes it when `consume` is set. */
  check(secret: string, consume: boolean): boolean {
    const key = hashOf(secret);
    const expiresAt = this.expiries.get(key);
    if (expiresAt === undefined) return false;
    if (consume || expiresAt <= this.now()) {
      this.expiries.delete(key);
      this.save();
    }
    return expiresAt > this.now();
  }

  /** Forgets a secret (sign-out). */
  remove(secret: string): void {
    if (this.expiries.delete(hashOf(secret))) this.save();
  }

  private prune(): void {
    const now = this.now();
    for (const [key, expiresAt] of this.expiries) if (expiresAt <= now) this.expiries.delete(key);
  }
}

/** The outcome of exchanging a sign-in code. */
export type ExchangeResult = { ok: true; sessionId: string; expiresAt: number } | { ok: false; reason: string };

/**
 * Sign-in codes and browser sessions of one server. A code is single use and valid for
 * `SIGN_IN_CODE_TTL_MS`; a session id is valid for `WEB_SESSION_TTL_MS` or until signed out.
 */
export class WebSessions {
  private readonly codes: ExpiringSecrets;
  private readonly sessions: ExpiringSecrets;

  /**
   * @param now clock, ms since the epoch (tests move it)
   * @param sessionsFile where sessions are kept (their SHA-256 hashes and expiries, mode 0600),
   *   so a restarted server keeps its browsers signed in; sign-in codes stay in memory only
   * @param onProblem told when `sessionsFile` exists but cannot be read or is damaged (the
   *   sessions then start empty); the message names the file and what is wrong
   */
  constructor(now: () => number = Date.now, sessionsFile?: string, onProblem?: (message: string) => void) {
    this.codes = new ExpiringSecrets(SIGN_IN_CODE_TTL_MS, MAX_PENDING_CODES, now);
    this.sessions = new ExpiringSecrets(WEB_SESSION_TTL_MS, MAX_SESSIONS, now, sessionsFile, onProblem);
  }

  /** A new one-time sign-in code and when it expires (ms since the epoch). */
  createSignInCode(): { code: string; expiresAt: number } {
    const { secret, expiresAt } = this.codes.create();
    return { code: secret, expiresAt };
  }

  /** Uses up a sign-in code and starts a session for it; a code unknown, used or expired is refused. */
  exchange(code: string): ExchangeResult {
    if (!this.codes.check(code, true)) return { ok: false, reason: 'the sign-in code is unknown, already used or expired; run `openvaala open` for a new link' };
    const { secret, expiresAt } = this.sessions.create();
    return { ok: true, sessionId: secret, expiresAt };
  }

  /** Whether a session id (from the cookie) belongs to a live session. */
  isSession(sessionId: string): boolean {
    return this.sessions.check(sessionId, false);
  }

  /** Ends a session (sign-out). */
  endSession(sessionId: string): void {
    this.sessions.remove(sessionId);
  }
}

/**
 * Name of the session cookie. Cookies are not separated by port (RFC 6265 §8.5), so the port
 * is part of the name: two servers on one machine do not overwrite each other's session.
 */
export function sessionCookieName(port: number): string {
  return `openvaala_session_${port}`;
}

/**
 * Every value of cookie `name` in a request's `Cookie` header (RFC 6265 §5.4), in order: a
 * browser may send two cookies of one name (an old one beside a new one).
 */
export function cookieValues(request: IncomingMessage, name: string): string[] {
  const header = request.headers.cookie;
  if (header === undefined) return [];
  const values: string[] = [];
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator >= 0 && pair.slice(0, separator).trim() === name) values.push(pair.slice(separator + 1).trim());
  }
  return values;
}

/**
 * Whether the browser reached the server over https: directly (a TLS socket) or through a
 * reverse proxy that says so (`X-Forwarded-Proto: https`) or whose page origin is https. Used
 * only to add `Secure` to the cookie, so trusting the header can only make the cookie stricter.
 */
export function reachedOverHttps(request: IncomingMessage): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return (request.socket as { encrypted?: boolean }).encrypted === true || proto === 'https' || (request.headers.origin ?? '').toLowerCase().startsWith('https://');
}

/**
 * The `Set-Cookie` value that stores a session: HttpOnly (page scripts cannot read it),
 * SameSite=Strict, Path=/, Max-Age of the session, `Secure` over https (RFC 6265bis §4.1).
 * An empty `sessionId` with `maxAgeSeconds` 0 deletes the cookie.
 */
export function sessionCookie(name: string, sessionId: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${sessionId}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}
