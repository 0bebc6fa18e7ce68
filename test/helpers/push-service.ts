/**
 * A local stand-in for a Web Push service (RFC 8030) on 127.0.0.1, written independently of the
 * `web-push` package so it checks the server's output rather than the package against itself:
 *
 * - the VAPID `Authorization: vapid t=<JWT>, k=<public key>` header (RFC 8292 §3): an ES256 JWT
 *   whose signature verifies against `k`, whose `aud` is the push service's origin, whose `exp`
 *   is in the future and at most 24 hours away, and whose `sub` is a mailto: or https: URL;
 * - the body, decrypted as `aes128gcm` (RFC 8188) with the keys derived per RFC 8291 §3.4 from
 *   the browser's private key and authentication secret, which only this stand-in holds.
 *
 * Each subscription it makes is what a browser's `PushSubscription.toJSON()` gives.
 */
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a browser hands the server. */
export interface BrowserSubscription {
  endpoint: string;
  expirationTime: null;
  keys: { p256dh: string; auth: string };
}

/** One message the stand-in accepted or refused, verified and decrypted. */
export interface ReceivedPush {
  /** The subscription it was sent to (the last path segment). */
  subscription: string;
  /** The VAPID public key the JWT was verified with (base64url). */
  vapidPublicKey: string;
  claims: { aud: string; exp: number; sub: string };
  /** `TTL` header, seconds. */
  ttl: number;
  /** The decrypted payload, as text. */
  plaintext: string;
  /** The status the stand-in answered. */
  status: number;
}

/** A running stand-in. */
export interface PushService {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Makes a subscription (a new browser key pair and secret). */
  subscribe(name: string): BrowserSubscription;
  /** Messages that passed every check, in arrival order. */
  received: ReceivedPush[];
  /** Requests refused because a check failed, with the reason. */
  rejected: string[];
  /** The status to answer valid messages with (default 201). */
  answerWith: number;
  close(): Promise<void>;
}

function base64url(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/** Verifies the VAPID header; returns the claims and the key, or throws naming what failed. */
function verifyVapid(header: string | undefined, origin: string, now: number): { claims: ReceivedPush['claims']; key: string } {
  const match = /^vapid t=([A-Za-z0-9_.-]+), ?k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!match) throw new Error(`Authorization is not "vapid t=…, k=…": ${header}`);
  const [token, key] = [match[1]!, match[2]!];
  const [encodedHeader, encodedClaims, encodedSignature] = token.split('.');
  if (!encodedHeader || !encodedClaims || !encodedSignature) throw new Error('the JWT does not have three parts');
  const jwtHeader = JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8')) as { alg?: string; typ?: string };
  if (jwtHeader.alg !== 'ES256') throw new Error(`JWT alg is ${jwtHeader.alg}, not ES256`);
  const point = Buffer.from(key, 'base64url');
  if (point.length !== 65 || point[0] !== 0x04) throw new Error('k is not an uncompressed P-256 point');
  const publicKey = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: base64url(point.subarray(1, 33)), y: base64url(point.subarray(33)) }, format: 'jwk' });
  // JWS ES256 signatures are r || s, 32 bytes each (RFC 7518 §3.4).
  const signed = verify('sha256', Buffer.from(`${encodedHeader}.${encodedClaims}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(encodedSignature, 'base64url'));
  if (!signed) throw new Error('the JWT signature does not verify against k');
  const claims = JSON.parse(Buffer.from(encodedClaims, 'base64url').toString('utf8')) as ReceivedPush['claims'];
  if (claims.aud !== origin) throw new Error(`aud is ${claims.aud}, not ${origin}`);
  const seconds = Math.floor(now / 1000);
  if (!(claims.exp > seconds)) throw new Error(`exp ${claims.exp} is not in the future`);
  if (claims.exp > seconds + 24 * 3600) throw new Error(`exp ${claims.exp} is more than 24 hours away (RFC 8292 §2)`);
  if (!/^(mailto:|https:)/.test(claims.sub)) throw new Error(`sub ${claims.sub} is not a mailto: or https: URL`);
  return { claims, key };
}

/** Decrypts an aes128gcm body (one record) sent to the browser holding `browserKeys` and `authSecret`. */
export function decryptAes128gcm(body: Buffer, browserKeys: ECDH, authSecret: Buffer): string {
  // RFC 8188 §2.1: salt (16) | record size (4) | key id length (1) | key id.
  if (body.length < 21) throw new Error('the body is shorter than the aes128gcm header');
  const salt = body.subarray(0, 16);
  const recordSize = body.readUInt32BE(16);
  const keyIdLength = body[20]!;
  const serverPublicKey = body.subarray(21, 21 + keyIdLength);
  if (keyIdLength !== 65) throw new Error(`the key id is ${keyIdLength} bytes, not the server's 65-byte public key (RFC 8291 §4)`);
  const record = body.subarray(21 + keyIdLength);
  if (record.length > recordSize) throw new Error('more than one record: not expected for a small payload');
  // RFC 8291 §3.4.
  const sharedSecret = browserKeys.computeSecret(serverPublicKey);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), browserKeys.getPublicKey(), serverPublicKey]);
  const inputKey = Buffer.from(hkdfSync('sha256', sharedSecret, authSecret, keyInfo, 32));
  const contentKey = Buffer.from(hkdfSync('sha256', inputKey, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', inputKey, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', contentKey, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  // The last record ends with the delimiter 0x02, then zero padding (RFC 8188 §2).
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end -= 1;
  if (padded[end] !== 0x02) throw new Error('the last record does not end with the 0x02 delimiter');
  return padded.subarray(0, end).toString('utf8');
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** Starts a stand-in push service on 127.0.0.1 (a free port). */
export async function startPushService(): Promise<PushService> {
  const browsers = new Map<string, { keys: ECDH; auth: Buffer }>();
  const service: PushService = {
    origin: '',
    received: [],
    rejected: [],
    answerWith: 201,
    subscribe(name) {
      const keys = createECDH('prime256v1');
      keys.generateKeys();
      const auth = randomBytes(16);
      browsers.set(name, { keys, auth });
      return { endpoint: `${service.origin}/push/${name}`, expirationTime: null, keys: { p256dh: base64url(keys.getPublicKey()), auth: base64url(auth) } };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    (async () => {
      const body = await readBody(request);
      const name = /^\/push\/([^/]+)$/.exec(request.url ?? '')?.[1];
      const browser = name ? browsers.get(name) : undefined;
      try {
        if (request.method !== 'POST') throw new Error(`method ${request.method}`);
        if (!browser || !name) throw new Error(`no subscription at ${request.url}`);
        if (request.headers['content-encoding'] !== 'aes128gcm') throw new Error(`Content-Encoding is ${request.headers['content-encoding']}`);
        const ttl = Number(request.headers.ttl);
        if (!Number.isInteger(ttl) || ttl < 0) throw new Error(`TTL header is ${request.headers.ttl}`);
        const { claims, key } = verifyVapid(request.headers.authorization, service.origin, Date.now());
        const plaintext = decryptAes128gcm(body, browser.keys, browser.auth);
        service.received.push({ subscription: name, vapidPublicKey: key, claims, ttl, plaintext, status: service.answerWith });
        response.writeHead(service.answerWith).end();
      } catch (error) {
        service.rejected.push((error as Error).message);
        response.writeHead(400).end((error as Error).message);
      }
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  service.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return service;
}
