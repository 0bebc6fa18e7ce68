/**
 * Notifications framed once and written straight to each client's stream (RFC 6455 §5.2): a
 * real `ws` client must read every length form intact, in order with the messages `ws` frames
 * itself, and the text must be UTF-8 measured in bytes, not characters.
 */
import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { afterEach, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { SendQueue } from '../../src/server/send-queue.js';
import { textFrame } from '../../src/server/web-socket-frame.js';

const LIMITS = { writeThresholdBytes: 512 * 1024, limitBytes: 4 * 1024 * 1024 };
let cleanup: (() => Promise<void>) | undefined;

afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** A real server and client; resolves with the server's side of the connection and the client's received messages. */
async function connectedPair(): Promise<{ server: WebSocket; transport: Duplex; client: WebSocket; received: string[] }> {
  const http: Server = createServer();
  const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const accepted = new Promise<{ server: WebSocket; transport: Duplex }>((resolve) => {
    http.on('upgrade', (request, transport: Duplex, head) => sockets.handleUpgrade(request, transport, head, (server) => resolve({ server, transport })));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as { port: number };
  const client = new WebSocket(`ws://127.0.0.1:${port}`);
  const received: string[] = [];
  client.on('message', (data, isBinary) => received.push(isBinary ? '<binary>' : String(data)));
  const { server, transport } = await accepted;
  await new Promise((resolve) => client.once('open', resolve));
  cleanup = async () => {
    client.terminate();
    server.terminate();
    sockets.close();
    await new Promise((resolve) => http.close(resolve));
  };
  return { server, transport, client, received };
}

it('frames each length form (7, 16 and 64 bits) in the fewest bytes, measuring UTF-8', () => {
  for (const [text, header] of [
    ['a'.repeat(125), 2],
    ['é'.repeat(63), 4], // 63 characters, 126 bytes
    ['a'.repeat(65_535), 4],
    ['😀'.repeat(16_384), 10], // 65,536 bytes
  ] as const) {
    const { frame, payloadOffset } = textFrame(text);
    expect(payloadOffset).toBe(header);
    expect(frame[0]).toBe(0x81);
    expect(frame.length).toBe(header + Buffer.byteLength(text));
    expect(frame.subarray(payloadOffset).toString('utf8')).toBe(text);
  }
});

it('delivers notifications framed once, in order with what ws frames itself, to a real client', async () => {
  const { server, transport, received } = await connectedPair();
  const send = vi.spyOn(server, 'send');
  const queue = new SendQueue(server, transport, LIMITS, { overflow: () => undefined, writeFailed: () => undefined });
  const sizes = [0, 60, 125, 126, 1000, 65_535, 65_536, 300_000];
  const expected: string[] = [];
  for (const [index, size] of sizes.entries()) {
    const event = { method: 'item/delta', params: { index, text: 'é😀x'.repeat(size / 4) } };
    queue.sendNotification(event);
    expected.push(JSON.stringify({ jsonrpc: '2.0', ...event }));
    // A message ws frames itself (a response), between two of ours.
    const response = { jsonrpc: '2.0', id: index, result: { size } };
    queue.send(response);
    expected.push(JSON.stringify(response));
  }
  server.ping();
  await expect.poll(() => received.length).toBe(expected.length);
  expect(received).toEqual(expected);
  // Only the responses went through ws's own send; the notifications were written framed.
  expect(send).toHaveBeenCalledTimes(sizes.length);
});
