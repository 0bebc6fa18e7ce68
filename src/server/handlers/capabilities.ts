/**
 * The server's capabilities, answered in `initialize`.
 */
import { methods, notifications, serverRequests, type ServerCapabilities } from '../../protocol/index.js';

/**
 * What this server supports: the method families of the protocol (the part of each method,
 * notification and server-to-client request name before `/`, `initialize` included), plus
 * `toolDetails` (typed `details` on `tool_call` items), sorted.
 */
export function serverCapabilities(): ServerCapabilities {
  const families = new Set<string>(['toolDetails']);
  for (const name of [...Object.keys(methods), ...Object.keys(notifications), ...Object.keys(serverRequests)]) families.add(name.split('/')[0] as string);
  return { features: [...families].sort() };
}
