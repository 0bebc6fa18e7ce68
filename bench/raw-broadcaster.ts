/**
 * The baseline of the 100-client fan-out latency benchmark, run as its own process as the server
 * is: a bare `ws` server that, once told `go` on stdin, broadcasts `item/delta` frames to every
 * connected client, one per millisecond (the pace of the mock provider in that benchmark), each
 * serialized once. Prints `{"port":N}` when listening and, at the end, `{"sentAt":[...]}`: each
 * delta's send time in ms on `process.hrtime` (CLOCK_MONOTONIC, the same clock in every process
 * of the machine). Arguments: the number of deltas.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { WebSocketServer } from 'ws';

const deltas = Number(process.argv[2]);
if (!Number.isInteger(deltas) || deltas < 1) {
  console.error('usage: raw-broadcaster.js <deltas>');
  process.exit(64);
}
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.once('listening', () => console.log(JSON.stringify({ port: (wss.address() as { port: number }).port })));

/** The text of delta `index`, as the latency benchmark's mock script has it. */
function deltaText(index: number): string {
  return `d${String(index).padStart(5, '0')} `;
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line !== 'go') break;
  const sentAt: number[] = [];
  for (let index = 0; index < deltas; index++) {
    await sleep(1);
    const text = JSON.stringify({ jsonrpc: '2.0', method: 'item/delta', params: { conversationId: 'conv_bench', sessionId: 'sess_bench', turnId: 'turn_bench', itemId: 'item_bench', kind: 'assistant_message', seq: index + 1, delta: { text: deltaText(index) } } });
    sentAt.push(Number(process.hrtime.bigint()) / 1e6);
    for (const socket of wss.clients) socket.send(text);
  }
  console.log(JSON.stringify({ sentAt }));
}
for (const socket of wss.clients) socket.terminate();
wss.close();
