/**
 * The one rule for ids between OpenVaala and Codex app-server clients (docs/protocol.md,
 * "Codex ids"). OpenVaala ids are `<prefix>_<ULID>` (SPEC §3), the ULID in lowercase Crockford
 * base32 (26 characters, 128 bits); Codex app-server clients use UUID strings for threads,
 * turns and items. The ULID's 128 bits, unchanged, are the UUID's 128 bits, written as
 * lowercase `8-4-4-4-12` hex. The inverse reads the 128 bits back and adds the prefix the
 * adapter knows from where the id appears (a thread id is a conversation, and so on), so the
 * mapping is lossless both ways and needs no table. Both keep time order: a ULID, like a
 * UUIDv7, starts with its 48-bit millisecond timestamp. The UUID's version and variant bits
 * are whatever the ULID's bits are; Codex clients treat ids as opaque strings.
 */

/** Crockford base32, as ULIDs use it (https://github.com/ulid/spec). */
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const ULID_BODY = /^[0-7][0-9abcdefghjkmnpqrstvwxyz]{25}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The id prefixes that have a Codex counterpart: conversation ↔ thread, turn ↔ turn, item ↔ item; a session also maps to a thread (a subagent's). */
export type CodexMappedPrefix = 'conv' | 'sess' | 'turn' | 'item';

/** An id that cannot be mapped (not `<prefix>_<ULID>`, or not a UUID). */
export class CodexIdError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodexIdError';
  }
}

/**
 * The Codex UUID of an OpenVaala id: the 128 bits of its ULID as a lowercase UUID string.
 * @param id `<prefix>_<ULID>` as the runtime makes it (e.g. `conv_01jd6k8g3mzx4y0q2w7e5r9t1b`)
 * @throws CodexIdError when the id is not a prefix, `_` and a 26-character lowercase ULID
 */
export function toCodexId(id: string): string {
  const separator = id.indexOf('_');
  const body = separator === -1 ? '' : id.slice(separator + 1);
  if (separator <= 0 || !ULID_BODY.test(body)) throw new CodexIdError(`cannot map ${JSON.stringify(id.slice(0, 80))} to a Codex id: expected <prefix>_ and a 26-character lowercase ULID`);
  let bits = 0n;
  for (const character of body) bits = (bits << 5n) | BigInt(CROCKFORD.indexOf(character));
  const hex = bits.toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The OpenVaala id of a Codex UUID: the inverse of {@link toCodexId}.
 * @param uuid a UUID string, any case (`0190f3a2-…`)
 * @param prefix what the id names, known from where it appears (`conv` for a thread id)
 * @throws CodexIdError when `uuid` is not a UUID string
 */
export function fromCodexId(uuid: string, prefix: CodexMappedPrefix): string {
  if (!UUID.test(uuid)) throw new CodexIdError(`cannot map ${JSON.stringify(uuid.slice(0, 80))} to an OpenVaala id: not a UUID string`);
  let bits = BigInt(`0x${uuid.replaceAll('-', '')}`);
  let body = '';
  for (let index = 0; index < 26; index++) {
    body = CROCKFORD[Number(bits & 31n)]! + body;
    bits >>= 5n;
  }
  return `${prefix}_${body}`;
}
