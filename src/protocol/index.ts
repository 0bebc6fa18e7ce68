/**
 * The runtime protocol (SPEC §5), defined once: item and entity schemas, methods,
 * notifications and JSON-RPC framing. Import from here.
 */
export * from './items.js';
export * from './entities.js';
export * from './methods.js';
export * from './json-rpc.js';
export * from './transport.js';
export * from './codex-ids.js';
