/**
 * WebSocket at the byte level (RFC 6455 §5.2) for tests that must send what no client library
 * would: raw HTTP requests, handshakes, and frames with any opcode, bit, mask or length.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';

/** A frame to build; defaults make a valid, final, masked text frame. */
export interface FrameSpec {
  opcode?: number;
  fin?: boolean;
  /** RSV1..RSV3 as a 3-bit number. */
  rsv?: number;
  /** Clients must mask (RFC 6455 §5.3); false sends it unmasked. */
  mask?: boolean;
  payload?: Buffer | string;
  /** Length to announce instead of the payload's (a lie, for oversize tests). */
  announcedLength?: bigint;
}

/** Encodes one frame. */
export function buildFrame(spec: FrameSpec): Buffer {
  const payload = typeof spec.payload === 'string' ? Buffer.from(spec.payload) : (spec.payload ?? Buffer.alloc(0));
  const mask = spec.mask ?? true;
  const length = spec.announcedLength ?? BigInt(payload.length);
  const first = ((spec.fin ?? true) ? 0x80 : 0) | (((spec.rsv ?? 0) & 7) << 4) | ((spec.opcode ?? 1) & 0x0f);
  let header: Buffer;
  if (length < 126n) header = Buffer.from([first, (mask ? 0x80 : 0) | Number(length)]);
  else if (length < 65536n) {
    header = Buffer.alloc(4);
    header[0] = first;
    header[1] = (mask ? 0x80 : 0) | 126;
    header.writeUInt16BE(Number(length), 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = (mask ? 0x80 : 0) | 127;
    header.writeBigUInt64BE(length, 2);
  }
  if (!mask) return Buffer.concat([header, payload]);
  const key = randomBytes(4);
  const masked = Buffer.from(payload);
  for (let index = 0; index < masked.length; index++) masked[index] = (masked[index] as number) ^ (key[index % 4] as number);
  return Buffer.concat([header, key, masked]);
}

/** A close frame the server sent, decoded. */
export interface CloseFrame {
  code: number;
  reason: string;
}

/** Finds the server's close frame in what it sent (server frames are unmasked). */
export function findCloseFrame(data: Buffer): CloseFrame | undefined {
  let offset = 0;
  while (offset + 2 <= data.length) {
    const opcode = (data[offset] as number) & 0x0f;
    let length = (data[offset + 1] as number) & 0x7f;
    let start = offset + 2;
    if (length === 126) {
      if (start + 2 > data.length) return undefined;
      length = data.readUInt16BE(start);
      start += 2;
    } else if (length === 127) {
      if (start + 8 > data.length) return undefined;
      length = Number(data.readBigUInt64BE(start));
      start += 8;
    }
    if (opcode === 8) {
      const body = data.subarray(start, start + length);
      return body.length >= 2 ? { code: body.readUInt16BE(0), reason: body.subarray(2).toString('utf8') } : { code: 1005, reason: '' };
    }
    offset = start + length;
  }
  return undefined;
}

/** A raw TCP connection to the server and everything it has received. */
export interface RawConnection {
  socket: net.Socket;
  /** Bytes received so far. */
  received(): Buffer;
  /** Resolves when the server has closed the connection (or after `timeoutMs`, with false). */
  closed(timeoutMs?: number): Promise<boolean>;
}

/** Opens a TCP connection to `127.0.0.1:port` and writes `bytes`. */
export function rawConnect(port: number, bytes?: Buffer | string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let ended = false;
    const endWaiters: (() => void)[] = [];
    const finish = () => {
      ended = true;
      for (const waiter of endWaiters.splice(0)) waiter();
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', finish);
    // A reset by the server is one of the outcomes tests expect.
    socket.on('error', () => finish());
    socket.once('connect', () => {
      if (bytes !== undefined) socket.write(bytes);
      resolve({
        socket,
        received: () => Buffer.concat(chunks),
        closed: (timeoutMs = 5000) =>
          new Promise((done) => {
            if (ended) return done(true);
            const timer = setTimeout(() => done(false), timeoutMs);
            endWaiters.push(() => {
              clearTimeout(timer);
              done(true);
            });
          }),
      });
    });
    socket.once('error', reject);
  });
}

/** An upgrade request for the API path. */
export function upgradeRequest(port: number, token: string | undefined, extraHeaders: Record<string, string> = {}): string {
  const headers: Record<string, string> = {
    Host: `127.0.0.1:${port}`,
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
    'Sec-WebSocket-Version': '13',
    ...(token !== undefined ? { Authorization: `Bearer ${token}` } : {}),
    ...extraHeaders,
  };
  return `GET /api/v1/openvaala HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n')}\r\n\r\n`;
}

/**
 * Completes the handshake on a raw connection and returns it once the 101 has arrived.
 * @throws Error with the server's answer when it is not 101
 */
export async function rawWebSocket(port: number, token: string): Promise<RawConnection & { afterHandshake(): Buffer }> {
  const connection = await rawConnect(port, upgradeRequest(port, token));
  const deadline = Date.now() + 5000;
  while (!connection.received().includes('\r\n\r\n')) {
    if (Date.now() > deadline) throw new Error('no handshake answer');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const text = connection.received().toString('latin1');
  if (!text.startsWith('HTTP/1.1 101')) throw new Error(`handshake refused: ${text.slice(0, 200)}`);
  const headerEnd = connection.received().indexOf('\r\n\r\n') + 4;
  return { ...connection, afterHandshake: () => connection.received().subarray(headerEnd) };
}
