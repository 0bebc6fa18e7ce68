/**
 * One-time sign-in codes and browser sessions (docs/web.md) with a clock the test moves: a
 * code works once and only for 5 minutes, a session for 7 days or until it ends; the cookie
 * header is parsed by name.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { cookieValues, SIGN_IN_CODE_TTL_MS, WEB_SESSION_TTL_MS, WebSessions } from '../../src/server/web/web-sessions.js';

describe('WebSessions', () => {
  it('accepts a code once, before it expires', () => {
    let now = 1_000_000;
    const sessions = new WebSessions(() => now);
    const first = sessions.createSignInCode();
    expect(first.expiresAt).toBe(now + SIGN_IN_CODE_TTL_MS);
    const used = sessions.exchange(first.code);
    expect(used.ok).toBe(true);
    expect(sessions.exchange(first.code)).toEqual({ ok: false, reason: 'the sign-in code is unknown, already used or expired; run `openvaala open` for a new link' });
    const late = sessions.createSignInCode();
    now += SIGN_IN_CODE_TTL_MS;
    expect(sessions.exchange(late.code).ok).toBe(false);
    const fresh = sessions.createSignInCode();
    now += SIGN_IN_CODE_TTL_MS - 1;
    expect(sessions.exchange(fresh.code).ok).toBe(true);
  });

  it('keeps a session for 7 days or until it ends', () => {
    let now = 0;
    const sessions = new WebSessions(() => now);
    const started = sessions.exchange(sessions.createSignInCode().code);
    if (!started.ok) throw new Error(started.reason);
    expect(started.expiresAt).toBe(WEB_SESSION_TTL_MS);
    expect(sessions.isSession(started.sessionId)).toBe(true);
    expect(sessions.isSession(`${started.sessionId}x`)).toBe(false);
    now = WEB_SESSION_TTL_MS - 1;
    expect(sessions.isSession(started.sessionId)).toBe(true);
    now = WEB_SESSION_TTL_MS;
    expect(sessions.isSession(started.sessionId)).toBe(false);
    now = 0;
    const other = sessions.exchange(sessions.createSignInCode().code);
    if (!other.ok) throw new Error(other.reason);
    sessions.endSession(other.sessionId);
    expect(sessions.isSession(other.sessionId)).toBe(false);
  });

  it('keeps at most 100 waiting codes, dropping the oldest', () => {
    const sessions = new WebSessions();
    const codes = Array.from({ length: 101 }, () => sessions.createSignInCode().code);
    expect(sessions.exchange(codes[0] as string).ok).toBe(false);
    expect(sessions.exchange(codes[1] as string).ok).toBe(true);
    expect(sessions.exchange(codes[100] as string).ok).toBe(true);
  });
});

describe('cookieValues', () => {
  it('finds every cookie of exactly that name', () => {
    const request = { headers: { cookie: 'a=1; openvaala_session_80=abc; openvaala_session_8=zzz;openvaala_session_80=def' } } as unknown as IncomingMessage;
    expect(cookieValues(request, 'openvaala_session_80')).toEqual(['abc', 'def']);
    expect(cookieValues(request, 'openvaala_session_8')).toEqual(['zzz']);
    expect(cookieValues(request, 'openvaala_session')).toEqual([]);
    expect(cookieValues({ headers: {} } as IncomingMessage, 'a')).toEqual([]);
  });
});
