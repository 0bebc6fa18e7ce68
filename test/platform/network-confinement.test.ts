/**
 * The addresses a project conversation's own HTTP MCP server may not reach, and the `fetch`
 * that checks each request (src/platform/access/network-confinement.ts,
 * src/mcp/guarded-fetch.ts): every spelling of the server's machine and its link-local
 * network, directly or through a name, is refused; other addresses pass; a redirect is never
 * followed. Real HTTP on loopback for the fetch.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../src/mcp/guarded-fetch.js';
import { refusedAddressKind, serverMachineAddressRefusal, type AddressResolver } from '../../src/platform/access/network-confinement.js';

const names: Record<string, string[]> = {
  'mcp.example.com': ['203.0.113.7'],
  'sneaky.example.com': ['203.0.113.8', '127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'v6.example.com': ['2001:db8::1'],
  'v6-loop.example.com': ['::1'],
};
const resolver: AddressResolver = async (hostname) => {
  const found = names[hostname];
  if (!found) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  return found;
};

describe('addresses of the server machine', () => {
  it('refuses loopback, unspecified and link-local addresses in every spelling the URL parser accepts', async () => {
    const refused = [
      'http://127.0.0.1:8080/mcp',
      'http://127.1/mcp',
      'http://2130706433/mcp',
      'http://0x7f.0.0.1/mcp',
      'http://127.255.255.254/mcp',
      'http://0.0.0.0:9/mcp',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]:8080/mcp',
      'http://[::]/mcp',
      'http://[::ffff:127.0.0.1]/mcp',
      'http://[::ffff:a9fe:a9fe]/mcp',
      'http://[fe80::1]/mcp',
      'https://sneaky.example.com/mcp',
      'https://metadata.example.com/',
      'https://v6-loop.example.com/',
    ];
    for (const address of refused) {
      const refusal = await serverMachineAddressRefusal(new URL(address), resolver);
      expect(refusal, address).toMatch(/reaches .*(loopback|unspecified|link-local)/);
      expect(refusal, address).toContain(new URL(address).origin);
    }
  });

  it('lets other addresses and names through, and leaves a name that does not resolve to the request', async () => {
    for (const address of ['https://mcp.example.com/mcp', 'http://203.0.113.9/mcp', 'http://10.1.2.3/mcp', 'http://[2001:db8::2]/mcp', 'https://v6.example.com/', 'https://nowhere.example.com/']) {
      expect(await serverMachineAddressRefusal(new URL(address), resolver), address).toBeUndefined();
    }
    expect(refusedAddressKind('not an address')).toBeUndefined();
    expect(refusedAddressKind('127.0.0.53')).toMatch(/loopback/);
    expect(refusedAddressKind('169.254.1.1')).toMatch(/link-local/);
  });

  it('resolves real names with the system resolver: localhost is the server machine', async () => {
    expect(await serverMachineAddressRefusal(new URL('http://localhost:1/mcp'))).toMatch(/^http:\/\/localhost:1 reaches localhost \((127\.0\.0\.1|::1)\), a loopback address/);
  });
});

describe('guardedFetch', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; requests: string[] }> {
    const requests: string[] = [];
    server = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      handler?.(request, response);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
  }

  it('sends nothing to a refused address, and sends a request that passes', async () => {
    const { url, requests } = await listen((_request, response) => response.end('ok'));
    const refusing = guardedFetch(async (target) => `no: ${target.host}`);
    await expect(refusing(`${url}/mcp`, { method: 'POST', body: '{}' })).rejects.toThrow(`no: ${new URL(url).host}`);
    expect(requests).toEqual([]);
    const passing = guardedFetch(async () => undefined);
    const response = await passing(`${url}/mcp`, { method: 'POST', body: '{}' });
    expect(await response.text()).toBe('ok');
    expect(requests).toEqual(['POST /mcp']);
  });

  it('does not follow a redirect, whatever its status', async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      const { url, requests } = await listen((request, response) => {
        if (request.url === '/mcp') response.writeHead(status, { location: '/elsewhere' }).end();
        else response.end('followed');
      });
      const checked: string[] = [];
      const guarded = guardedFetch(async (target) => {
        checked.push(target.pathname);
        return undefined;
      });
      await expect(guarded(`${url}/mcp`, { method: 'POST', body: '{}' }), String(status)).rejects.toThrow(`answered with a redirect (HTTP ${status}) to /elsewhere, which is not followed`);
      expect(requests).toEqual(['POST /mcp']);
      expect(checked).toEqual(['/mcp']);
      await new Promise((resolve) => server?.close(resolve));
      server = undefined;
    }
  });
});
