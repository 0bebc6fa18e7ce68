/**
 * Which network addresses a member's HTTP MCP server may not reach (docs/platform.md, "Where
 * members work"). Such a server is called by the runtime server itself, from the server's
 * machine and network, not from the project's sandbox: an address of that machine (loopback,
 * the unspecified address, which connects to the local host) or of its link-local network
 * (where clouds answer instance metadata, credentials included, at 169.254.169.254) would let
 * a member reach what the sandbox keeps from their commands, such as the agent browser's
 * DevTools port or the server's own port.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** The refused ranges, each with the words a refusal uses (RFC 1122 §3.2.1.3, RFC 3927, RFC 4291 §2.5). */
const REFUSED_RANGES: readonly { network: string; prefix: number; family: 'ipv4' | 'ipv6'; kind: string }[] = [
  { network: '127.0.0.0', prefix: 8, family: 'ipv4', kind: 'a loopback address of the server\'s machine' },
  { network: '0.0.0.0', prefix: 8, family: 'ipv4', kind: 'an unspecified address, which reaches the server\'s machine' },
  { network: '169.254.0.0', prefix: 16, family: 'ipv4', kind: 'a link-local address of the server\'s network (where clouds serve instance metadata)' },
  { network: '::1', prefix: 128, family: 'ipv6', kind: 'a loopback address of the server\'s machine' },
  { network: '::', prefix: 128, family: 'ipv6', kind: 'an unspecified address, which reaches the server\'s machine' },
  { network: 'fe80::', prefix: 10, family: 'ipv6', kind: 'a link-local address of the server\'s network' },
];

/** One block list per range, so a refusal can say which kind of address it was (IPv4-mapped IPv6 addresses match the IPv4 ranges). */
const RANGES = REFUSED_RANGES.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.network, range.prefix, range.family);
  return { ...range, list };
});

/** Resolves a host name to every address it has (as `dns.lookup` with `all`, the resolver `fetch` uses). */
export type AddressResolver = (hostname: string) => Promise<string[]>;

const systemResolver: AddressResolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * What kind of refused address `address` (an IP address, IPv4 or IPv6) is, or undefined when
 * it is not refused.
 */
export function refusedAddressKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  return RANGES.find((range) => range.list.check(address, family === 4 ? 'ipv4' : 'ipv6'))?.kind;
}

/**
 * Why an HTTP request to `url` may not be sent for a project's conversation, or undefined when it may: its
 * host, or any address its name resolves to now, is on the server's machine or its link-local
 * network. A name that does not resolve is not refused here (the request itself will fail).
 * @param resolve the resolver (the system's by default)
 */
export async function serverMachineAddressRefusal(url: URL, resolve: AddressResolver = systemResolver): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) !== 0 ? [host] : await resolve(host).catch(() => []);
  for (const address of addresses) {
    const kind = refusedAddressKind(address);
    if (kind === undefined) continue;
    const where = address === host ? address : `${host} (${address})`;
    return `${url.origin} reaches ${where}, ${kind}; an MCP server given to a project's conversation is called from the runtime server itself, so it may not reach the server's machine or its link-local network (an administrator can configure such a server in mcp.yaml)`;
  }
  return undefined;
}
