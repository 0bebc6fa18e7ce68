/** The part of `oidc-provider` (no bundled types) the sign-in test uses. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  /** An OpenID Provider for one issuer. */
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    /** The Node.js request handler. */
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
