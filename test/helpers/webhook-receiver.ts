/**
 * A webhook receiver on 127.0.0.1 that checks each request the way a chat tool's receiver
 * would (docs/notifications.md, "Webhooks"): the timestamp header is recent, and the signature
 * header is `v1=` and the hex HMAC-SHA256, keyed with the shared secret, of `<timestamp>.<body>`,
 * compared in constant time. Written from the documented scheme, not from the sender's code.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface WebhookRequest {
  body: string;
  timestamp: number;
  deliveryId: string;
  /** Whether the signature and the timestamp passed the checks. */
  verified: boolean;
  /** Why it did not, when it did not. */
  problem?: string;
  /** The status answered. */
  status: number;
}

/** A running receiver. */
export interface WebhookReceiver {
  url: string;
  requests: WebhookRequest[];
  /** Statuses to answer, in order; once used up, 200. */
  answers: number[];
  close(): Promise<void>;
}

/** Longest age of a timestamp the receiver accepts, seconds (as common chat-tool receivers do). */
const FRESHNESS_SECONDS = 300;

/** Checks a request's signature; returns the problem, or undefined when it is good. */
export function signatureProblem(secret: string, timestampHeader: string | undefined, signatureHeader: string | undefined, body: string, nowMs = Date.now()): string | undefined {
  const timestamp = Number(timestampHeader);
  if (!Number.isInteger(timestamp)) return `timestamp header is ${timestampHeader}`;
  if (Math.abs(nowMs / 1000 - timestamp) > FRESHNESS_SECONDS) return `timestamp ${timestamp} is not within ${FRESHNESS_SECONDS} s of now`;
  const expected = Buffer.from(`v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`);
  const given = Buffer.from(signatureHeader ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'the signature does not match';
  return undefined;
}

/** Starts a receiver for webhooks signed with `secret`. */
export async function startWebhookReceiver(secret: string): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = { url: '', requests: [], answers: [], close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const timestampHeader = request.headers['x-openvaala-timestamp'] as string | undefined;
      const problem = signatureProblem(secret, timestampHeader, request.headers['x-openvaala-signature'] as string | undefined, body);
      const status = problem ? 401 : (receiver.answers.shift() ?? 200);
      receiver.requests.push({ body, timestamp: Number(timestampHeader), deliveryId: String(request.headers['x-openvaala-delivery']), verified: problem === undefined, ...(problem ? { problem } : {}), status });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/openvaala`;
  return receiver;
}
