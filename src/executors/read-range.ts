/**
 * The loop every ranged read needs: a read call may return fewer bytes than asked for, so it
 * is repeated until the piece is whole or the file ends.
 */

/**
 * Reads up to `length` bytes from byte `position` with `read`, repeating it until `length`
 * bytes are in or it returns 0 (the end of the file).
 * @param read one read call: fills `buffer` from `offset` with at most `count` bytes taken
 *   from file position `position`, resolving to how many it read
 * @returns the bytes read (fewer than `length` at the end of the file)
 */
export async function readFully(length: number, position: number, read: (buffer: Buffer, offset: number, count: number, position: number) => Promise<number>): Promise<Uint8Array> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const count = await read(buffer, filled, length - filled, position + filled);
    if (count === 0) break;
    filled += count;
  }
  return buffer.subarray(0, filled);
}
