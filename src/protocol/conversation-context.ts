/**
 * What a client may give a conversation when it creates it, besides its work location: MCP
 * servers of its own, extra instructions, and an approval policy. Stored with the conversation.
 */
import { z } from 'zod';

const decision = z.enum(['allow', 'ask', 'deny']);

/** An approval policy as `agents.yaml` writes it: rules in order (first match wins), then the default. */
export const ApprovalPolicyInfoSchema = z.object({
  default: decision,
  rules: z.array(
    z.object({
      /** Tool name or glob (`mcp__*`). */
      tool: z.string(),
      /** Argument name → glob pattern(s). */
      match: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
      decision,
    }),
  ),
});
/** An approval policy as `agents.yaml` writes it. */
export type ApprovalPolicyInfo = z.infer<typeof ApprovalPolicyInfoSchema>;

/** An approval policy as a request param: the `agents.yaml` shape, `default` (default `allow`) and `rules` (default none) optional. */
export const ApprovalPolicyParamSchema = z.strictObject({
  default: decision.optional(),
  rules: z
    .array(
      z.strictObject({
        tool: z.string().min(1),
        match: z.record(z.string(), z.union([z.string(), z.array(z.string()).min(1)])).optional(),
        decision,
      }),
    )
    .optional(),
});

/**
 * MCP servers by name, each in the shape of one entry of `mcp.yaml` `servers` (`transport:
 * stdio` or `http`); the server checks each entry against that file's rules.
 */
export const McpServersParamSchema = z.record(z.string(), z.record(z.string(), z.unknown()));

/** The context a conversation was created with, as stored in the conversation. */
export const ConversationContextFields = {
  /**
   * MCP servers of this conversation only, besides those of `mcp.yaml`. Stored with their real
   * `env` and `headers` values; clients get literal values as `"***"` (`env:NAME` references as written).
   */
  mcpServers: McpServersParamSchema.optional(),
  /** Extra instructions given at creation (recorded as an `instruction` item, source `client`). */
  instructions: z.string().optional(),
  /** The approval policy of every session of this conversation, over its agent's. */
  approvalPolicy: ApprovalPolicyInfoSchema.optional(),
};
