/**
 * The runtime protocol (SPEC §5), defined once: item and entity schemas, methods,
 * notifications and JSON-RPC framing. Import from here.
 */
export * from './items.js';
export * from './entities.js';
export * from './methods.js';
export * from './lifecycle.js';
export * from './conversation-transfer.js';
export * from './turn-control.js';
export * from './json-rpc.js';
export * from './agents.js';
export * from './plugins.js';
export * from './plans.js';
export * from './conversation-context.js';
export * from './workspace.js';
export * from './workspace-git.js';
export * from './browser.js';
export * from './schedules.js';
export * from './notifications.js';
export * from './worktrees.js';
export * from './transport.js';
export * from './codex-ids.js';
export * from './tool-details.js';
export * from './tool-call-outcome.js';
export * from './stop-reasons.js';
export * from './capabilities.js';
export * from './approval-options.js';
export * from './user-input.js';
export * from './platform-identity.js';
export * from './projects.js';
export * from './costs.js';
