/**
 * The HTTP routes of the server as a list (docs/http.md): what the HTTP server dispatches on,
 * so the routes it serves can be listed (and each checked against the documentation). A path
 * segment written `{name}` takes any value there.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** One route: the methods it answers and its path. */
export interface HttpRouteEntry {
  /** HTTP methods, upper case; a WebSocket endpoint lists `GET` (the upgrade request). */
  methods: readonly string[];
  /** The path; a `{name}` segment takes any value. */
  path: string;
}

/**
 * A route the HTTP server dispatches by path (registered under its exact path, or under a
 * prefix ending with `/` that serves every path below it).
 */
export interface HttpRoute {
  /** The methods the route answers (others get its refusal, usually 405). */
  methods: readonly string[];
  /** For a route registered under a prefix: the path pattern it serves (`/api/v1/uploads/tus/{uploadId}`). */
  pattern?: string;
  /** Answers a request for the route's path (whatever its method). */
  handle(request: IncomingMessage, response: ServerResponse): void;
}

/** The entry of a route registered under `key` (its pattern when it serves a prefix). */
export function routeEntry(key: string, route: HttpRoute): HttpRouteEntry {
  return { methods: route.methods, path: route.pattern ?? key };
}
