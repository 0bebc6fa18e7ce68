/**
 * The MCP servers an editor gives with `session/new`
 * (https://agentclientprotocol.com/protocol/v1/session-setup#mcp-servers) as the conversation's
 * own servers (`conversation/create` `mcpServers`, in the shape of `mcp.yaml` entries).
 */
import type * as acp from '@agentclientprotocol/sdk';
import { UnsupportedContentError } from './content.js';

/**
 * The editor's servers by name, as `mcp.yaml` entries: stdio servers run on the local executor
 * with their arguments and environment, HTTP servers get their headers.
 * @throws UnsupportedContentError for an SSE server (not advertised in `mcpCapabilities`) or two servers of one name
 */
export function conversationMcpServers(servers: acp.McpServer[]): Record<string, Record<string, unknown>> | undefined {
  if (servers.length === 0) return undefined;
  const entries: Record<string, Record<string, unknown>> = {};
  servers.forEach((server, index) => {
    if (Object.prototype.hasOwnProperty.call(entries, server.name)) throw new UnsupportedContentError(`mcpServers[${index}]: a second server named "${server.name}"`);
    if ('type' in server && server.type === 'sse') throw new UnsupportedContentError(`mcpServers[${index}] "${server.name}": SSE servers are not supported (use type "http")`);
    if ('type' in server && server.type === 'http') {
      entries[server.name] = { transport: 'http', url: server.url, ...(server.headers.length > 0 ? { headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])) } : {}) };
      return;
    }
    const stdio = server as acp.McpServerStdio;
    entries[stdio.name] = {
      transport: 'stdio',
      command: stdio.command,
      ...(stdio.args.length > 0 ? { args: stdio.args } : {}),
      ...(stdio.env.length > 0 ? { env: Object.fromEntries(stdio.env.map((variable) => [variable.name, variable.value])) } : {}),
    };
  });
  return entries;
}
