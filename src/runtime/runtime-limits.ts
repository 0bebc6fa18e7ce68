/**
 * The limits every turn and the set of open conversations run under (`server.yaml` `limits`,
 * docs/configuration.md), and their defaults.
 */
import { DEFAULT_TOOL_OUTPUT_LIMIT_BYTES } from '../tools/tool.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './model-call.js';
import { DEFAULT_SUBAGENT_LIMITS, type SubagentLimits } from './subagents.js';

/** Limits applied to every turn. */
export interface RuntimeLimits {
  /** Model calls allowed in one turn before it stops with a `limit` interruption. */
  maxStepsPerTurn: number;
  retryPolicy: RetryPolicy;
  /** Compact when a request is estimated above this fraction of the model's context window (0–1). */
  compactionThreshold: number;
  subagents: SubagentLimits;
  /** Most text one tool result may send to the model, in bytes (UTF-8); longer output keeps its head and tail. */
  toolOutputLimitBytes: number;
  /** Idle conversations kept open (their items in memory) beyond which the least recently used are closed. */
  maxIdleOpenConversations: number;
  /** Most characters of history text (see `HistorySize`) the idle conversations kept open hold together; beyond it the least recently used are closed. */
  maxIdleHistoryChars: number;
  /** An idle conversation unused for this long is closed, ms. */
  idleConversationMs: number;
}

/**
 * Default limits: 200 steps per turn, the default retry policy, compaction at 80 % of the
 * window, at most 16 idle conversations kept open, holding at most 1,000,000 characters of
 * history text together (a few MiB), and none idle for more than 10 minutes.
 */
export const DEFAULT_LIMITS: RuntimeLimits = {
  maxStepsPerTurn: 200,
  retryPolicy: DEFAULT_RETRY_POLICY,
  compactionThreshold: 0.8,
  subagents: DEFAULT_SUBAGENT_LIMITS,
  toolOutputLimitBytes: DEFAULT_TOOL_OUTPUT_LIMIT_BYTES,
  maxIdleOpenConversations: 16,
  maxIdleHistoryChars: 1_000_000,
  idleConversationMs: 10 * 60_000,
};
