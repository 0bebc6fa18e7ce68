/**
 * The link between two servers of a cluster carries answers as large as a server sends its own
 * clients (it puts no cap on them: an `items/list` page of long tool outputs, an export with its
 * attachments). One such answer must not drop the link, which every relayed client shares.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { CLUSTER_PATH } from '../../src/server/cluster/cluster-endpoint.js';
import { PeerLink } from '../../src/server/cluster/peer-link.js';

let owner: WebSocketServer | undefined;
let link: PeerLink | undefined;
afterEach(async () => {
  link?.close();
  link = undefined;
  await new Promise((resolve) => owner?.close(resolve) ?? resolve(undefined));
  owner = undefined;
});

/** Past the 100 MiB that `ws` accepts in one message by default. */
const ANSWER_CHARS = 100 * 1024 * 1024 + 4096;

it('receives an answer larger than 100 MiB without dropping the link', { timeout: 60_000 }, async () => {
  // An owning server that answers its first request with one very large result, then small ones.
  owner = new WebSocketServer({ host: '127.0.0.1', port: 0, path: CLUSTER_PATH, perMessageDeflate: false });
  await new Promise((resolve) => owner!.once('listening', resolve));
  let answered = 0;
  owner.on('connection', (socket) => {
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { c: number; m?: { id: string } };
      if (!frame.m) return;
      const text = answered++ === 0 ? 'x'.repeat(ANSWER_CHARS) : 'small';
      socket.send(JSON.stringify({ c: frame.c, m: { jsonrpc: '2.0', id: frame.m.id, result: { text } } }));
    });
  });
  const { port } = owner.address() as AddressInfo;
  link = await PeerLink.connect(`http://127.0.0.1:${port}`, 'cluster-secret', 'server-b');
  let dropped = false;
  link.onClose(() => (dropped = true));
  const client = { number: 1, caller: { kind: 'local-owner' } as never, clientName: 'web' };
  const result = (await link.request(client, 'items/list', { conversationId: 'conv_x' })) as { text: string };
  expect(result.text.length).toBe(ANSWER_CHARS);
  // The link still carries the next request.
  const next = (await link.request(client, 'items/list', { conversationId: 'conv_y' })) as { text: string };
  expect(next.text).toBe('small');
  expect(dropped).toBe(false);
});
