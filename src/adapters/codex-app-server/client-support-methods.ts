/**
 * Requests a Codex client makes at start (the Codex TUI's `codex --remote` among them) about
 * Codex features OpenVaala does not have: a ChatGPT account, skills, plugins, apps, MCP server
 * status, hooks, feature flags, managed requirements. Each is answered truthfully with "none"
 * (an empty list, no account, no requirements), in the answer shape of the v2 schema of
 * codex-cli 0.171.0, so the client starts instead of failing on a missing method.
 */
import type { CodexMethodHandler } from './method-context.js';

const none = (answer: object): CodexMethodHandler => () => Promise.resolve(answer);

/** The handlers by method. */
export const clientSupportMethods: Record<string, CodexMethodHandler> = {
  // No ChatGPT account and none needed: OpenVaala's providers hold their own keys.
  'account/read': none({ account: null, requiresOpenaiAuth: false }),
  'skills/list': none({ data: [] }),
  'hooks/list': none({ data: [] }),
  'plugin/list': none({ marketplaces: [] }),
  'plugin/installed': none({ marketplaces: [] }),
  'app/list': none({ data: [], nextCursor: null }),
  'mcpServerStatus/list': none({ data: [], nextCursor: null }),
  'experimentalFeature/list': none({ data: [], nextCursor: null }),
  'configRequirements/read': none({ requirements: null }),
  'modelProvider/capabilities/read': none({ imageGeneration: false, webSearch: false }),
};
