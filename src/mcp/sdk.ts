/**
 * The MCP SDK, imported when a conversation first starts an MCP server: a server whose
 * conversations use no MCP server never loads it (it brings its own schema and validation
 * libraries, a noticeable share of start-up time and memory).
 */
import type * as ClientModule from '@modelcontextprotocol/sdk/client/index.js';
import type * as StreamableHttpModule from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';

/** The parts of the SDK the client uses. */
export interface McpSdk {
  Client: typeof ClientModule.Client;
  StreamableHTTPClientTransport: typeof StreamableHttpModule.StreamableHTTPClientTransport;
  types: typeof TypesModule;
}

let loading: Promise<McpSdk> | undefined;
let loaded: McpSdk | undefined;

/** Imports the SDK once; later calls return the same modules. */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([client, streamableHttp, types]) => {
    loaded = { Client: client.Client, StreamableHTTPClientTransport: streamableHttp.StreamableHTTPClientTransport, types };
    return loaded;
  });
  return loading;
}

/**
 * Whether `error` is the SDK's `McpError` (with the given code, when one is given). False before the SDK was
 * loaded: no such error can exist then.
 */
export function isMcpError(error: unknown, code?: 'ConnectionClosed' | 'RequestTimeout'): boolean {
  if (loaded === undefined || !(error instanceof loaded.types.McpError)) return false;
  return code === undefined || error.code === loaded.types.ErrorCode[code];
}
