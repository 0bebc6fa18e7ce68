/**
 * The runtime protocol (SPEC §5), defined once: item and entity schemas, methods,
 * notifications and JSON-RPC framing. Import from here.
 */
export * from './items.js';
export * from './entities.js';
export * from './methods.js';
export * from './json-rpc.js';
export * from './tool-details.js';
export * from './capabilities.js';
export * from './approval-options.js';
export * from './user-input.js';
