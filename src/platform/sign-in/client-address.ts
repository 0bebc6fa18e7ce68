/**
 * The address of the client behind a request (for the sign-in rate limit and session
 * listings). The socket's peer address is the client unless that peer is a configured trusted
 * proxy: then `X-Forwarded-For` is read from the right, skipping trusted proxies, and the first
 * address that is not one is the client (what MDN's X-Forwarded-For page recommends). A client
 * that writes its own `X-Forwarded-For` is ignored, since its own address is not trusted.
 */
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** A set of trusted proxy addresses and ranges (`127.0.0.1`, `10.0.0.0/8`, `::1`). */
export class TrustedProxies {
  private readonly list = new BlockList();
  private readonly empty: boolean;

  /** @param entries addresses or CIDR ranges, as validated by the `platform.trustedProxies` setting */
  constructor(entries: string[]) {
    for (const entry of entries) {
      const [address, prefix] = entry.split('/') as [string, string | undefined];
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.list.addAddress(address, family);
      else this.list.addSubnet(address, Number(prefix), family);
    }
    this.empty = entries.length === 0;
  }

  /** Whether `address` is one of the trusted proxies (IPv4-mapped IPv6 addresses count as IPv4). */
  has(address: string): boolean {
    if (this.empty) return false;
    const plain = unmapped(address);
    const family = isIP(plain);
    if (family === 0) return false;
    return this.list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  }
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; other addresses unchanged. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** The client address of a request (see the module comment); `unknown` when the socket has none. */
export function clientAddress(request: IncomingMessage, trusted: TrustedProxies): string {
  const peer = unmapped(request.socket.remoteAddress ?? 'unknown');
  if (!trusted.has(peer)) return peer;
  const header = request.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((hop) => hop.trim()).filter((hop) => hop !== '');
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = unmapped(hops[index] as string);
    if (isIP(hop) === 0) return peer;
    if (!trusted.has(hop)) return hop;
  }
  return hops.length > 0 ? unmapped(hops[0] as string) : peer;
}
