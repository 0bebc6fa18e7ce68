/**
 * WebSocket framing for messages the server sends to many clients at once (RFC 6455 §5.2): a
 * frame made once can be written to every client's stream as it is, since frames from a server
 * are not masked.
 */

/** A whole frame and where its payload starts in it. */
export interface Frame {
  /** Header and payload, ready to write. */
  frame: Buffer;
  /** Bytes of header before the payload (2, 4 or 10). */
  payloadOffset: number;
}

/** Payload lengths up to this fit the 7-bit length field (RFC 6455 §5.2, "Payload length"). */
const SHORT_LENGTH_LIMIT = 125;
/** Payload lengths up to this use the 16-bit extended length. */
const MEDIUM_LENGTH_LIMIT = 0xffff;

/**
 * A final, unmasked text frame (FIN set, opcode 1, no extension bits) holding `text` as UTF-8.
 * The length is encoded in the shortest form the RFC allows: 7 bits up to 125 bytes, 16 bits up
 * to 65,535, else 64 bits.
 * @param text the message (for this server, one JSON-RPC message)
 * @returns the frame and its header's length
 */
export function textFrame(text: string): Frame {
  const length = Buffer.byteLength(text);
  const payloadOffset = length <= SHORT_LENGTH_LIMIT ? 2 : length <= MEDIUM_LENGTH_LIMIT ? 4 : 10;
  const frame = Buffer.allocUnsafe(payloadOffset + length);
  frame[0] = 0x81;
  if (payloadOffset === 2) frame[1] = length;
  else if (payloadOffset === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  frame.write(text, payloadOffset, 'utf8');
  return { frame, payloadOffset };
}
