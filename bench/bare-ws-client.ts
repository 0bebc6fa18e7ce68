/**
 * The baseline client of the start-up benchmark: a bare `ws` client that connects to a runtime
 * server, exchanges one message (`initialize`) and exits. Arguments: the server's WebSocket URL,
 * its token and the protocol version (passed in, so this process loads nothing but `ws`).
 */
import WebSocket from 'ws';

const [url, token, protocolVersion] = process.argv.slice(2);
if (!url || !token || !protocolVersion) {
  console.error('usage: bare-ws-client.js <ws-url> <token> <protocol-version>');
  process.exit(64);
}
const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
socket.once('error', (error) => {
  console.error(error.message);
  process.exit(1);
});
socket.once('open', () => {
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'bench-bare-ws' }, protocolVersion: Number(protocolVersion), capabilities: {} } }));
});
socket.on('message', (data: Buffer) => {
  const message = JSON.parse(data.toString()) as { id?: number; error?: { message: string } };
  if (message.id !== 1) return;
  if (message.error) {
    console.error(message.error.message);
    process.exit(1);
  }
  socket.close();
});
socket.once('close', () => process.exit(0));
