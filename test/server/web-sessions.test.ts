/**
 * One-time sign-in codes and browser sessions (docs/web.md) with a clock the test moves: a
 * code works once and only for 5 minutes, a session for 7 days or until it ends; the cookie
 * header is parsed by name.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
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

describe('WebSessions kept in a file', () => {
  it('keeps sessions (as hashes only) across a restart, but not sign-in codes, and starts empty from a damaged file', () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-web-sessions-'));
    try {
      const file = path.join(directory, 'web-sessions.json');
      const before = new WebSessions(Date.now, file);
      const signedIn = before.exchange(before.createSignInCode().code);
      if (!signedIn.ok) throw new Error(signedIn.reason);
      const pendingCode = before.createSignInCode().code;
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file, 'utf8')).not.toContain(signedIn.sessionId);
      const after = new WebSessions(Date.now, file);
      expect(after.isSession(signedIn.sessionId)).toBe(true);
      expect(after.exchange(pendingCode).ok).toBe(false);
      after.endSession(signedIn.sessionId);
      expect(new WebSessions(Date.now, file).isSession(signedIn.sessionId)).toBe(false);
      // A first start (no file) is quiet; a damaged or wrong-shaped file starts empty and says so, naming the file.
      const problems: string[] = [];
      new WebSessions(Date.now, path.join(directory, 'missing.json'), (message) => problems.push(message));
      expect(problems).toEqual([]);
      writeFileSync(file, '{ not json');
      expect(new WebSessions(Date.now, file, (message) => problems.push(message)).isSession(signedIn.sessionId)).toBe(false);
      writeFileSync(file, '["a", "list"]');
      new WebSessions(Date.now, file, (message) => problems.push(message));
      expect(problems).toHaveLength(2);
      expect(problems[0]).toContain(`${file}: not valid JSON (`);
      expect(problems[0]).toMatch(/\); the browsers signed in before must sign in again$/);
      expect(problems[1]).toBe(`${file}: not an object of session hashes and expiries; the browsers signed in before must sign in again`);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('drops kept sessions that expired while the server was stopped', () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-web-sessions-'));
    try {
      const file = path.join(directory, 'web-sessions.json');
      let now = 1_000_000;
      const before = new WebSessions(() => now, file);
      const signedIn = before.exchange(before.createSignInCode().code);
      if (!signedIn.ok) throw new Error(signedIn.reason);
      now += WEB_SESSION_TTL_MS + 1;
      expect(new WebSessions(() => now, file).isSession(signedIn.sessionId)).toBe(false);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
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
