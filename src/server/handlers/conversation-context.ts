/**
 * Checks what `conversation/create` may add to a conversation besides its work location —
 * `mcpServers`, `instructions`, `approvalPolicy` — against the rules of the configuration files
 * they mirror (`mcp.yaml` entries, `agents.yaml` approval policies).
 */
import { ApprovalPolicySchema, type ApprovalPolicy } from '../../config/agents.js';
import { McpFileSchema, type McpServerConfig } from '../../config/mcp.js';
import { ErrorCodes, RpcError, type MethodParams } from '../../protocol/index.js';
import { formatKeyPath } from '../../key-path.js';
import { explainIssue } from '../../validation-issues.js';

/** The checked context, as stored with the conversation. */
export interface ConversationContext {
  mcpServers?: Record<string, McpServerConfig>;
  instructions?: string;
  approvalPolicy?: ApprovalPolicy;
}

/**
 * The context of a `conversation/create` request, checked and with its defaults filled in.
 * @param params the request's params
 * @param configuredServers the names of the servers of `mcp.yaml` (a conversation's own server may not reuse one)
 * @throws RpcError invalidParams naming `params.mcpServers.<name>…` for an entry `mcp.yaml` would refuse, or a name `mcp.yaml` already uses
 */
export function conversationContext(params: MethodParams<'conversation/create'>, configuredServers: string[]): ConversationContext {
  const context: ConversationContext = {};
  if (params.mcpServers !== undefined) {
    const root = { servers: params.mcpServers };
    const parsed = McpFileSchema.safeParse(root);
    if (!parsed.success) {
      // Told as mcp.yaml's own problems are (unknown keys with the key meant), at params.mcpServers.
      const problems = parsed.error.issues.flatMap((issue) => explainIssue(issue, { root, schema: McpFileSchema })).map((issue) => `conversation/create: ${formatKeyPath(issue.keyPath.slice(1), 'params.mcpServers')}: ${issue.message}`);
      throw new RpcError(ErrorCodes.invalidParams, problems.join('; '));
    }
    for (const name of Object.keys(parsed.data.servers)) {
      if (configuredServers.includes(name)) {
        throw new RpcError(ErrorCodes.invalidParams, `conversation/create: ${formatKeyPath([name], 'params.mcpServers')}: mcp.yaml already has a server named "${name}"; give this one another name`);
      }
    }
    context.mcpServers = parsed.data.servers;
  }
  if (params.instructions !== undefined) context.instructions = params.instructions;
  // The params schema already refused anything agents.yaml would; this fills in its defaults.
  if (params.approvalPolicy !== undefined) context.approvalPolicy = ApprovalPolicySchema.parse(params.approvalPolicy);
  return context;
}
