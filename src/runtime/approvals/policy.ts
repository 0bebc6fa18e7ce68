/**
 * Evaluates an agent's approval policy for one tool call (SPEC §6: allow / ask / deny by tool
 * and argument pattern). Rules are tried in order and the first match decides.
 */
import type { ApprovalPolicy, PolicyDecision } from '../../config/agents.js';

/** Converts a glob (`*` any run, `?` one character) into an anchored regular expression. */
export function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 's');
}

function matches(glob: string, value: string): boolean {
  return globToRegExp(glob).test(value);
}

/** What the policy says of one call, and which rule said it. */
export interface PolicyVerdict {
  decision: PolicyDecision;
  /** Index of the matching rule, or undefined when the default applied. */
  ruleIndex?: number;
}

/**
 * Decides a tool call: the first rule whose tool glob matches the tool name and whose every
 * argument pattern matches the (trimmed, string) argument decides; otherwise the default.
 * An argument that is not a string never matches a pattern.
 */
export function evaluatePolicy(policy: ApprovalPolicy, toolName: string, args: unknown): PolicyVerdict {
  const record = args && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  for (const [ruleIndex, rule] of policy.rules.entries()) {
    if (!matches(rule.tool, toolName)) continue;
    const argumentPatterns = Object.entries(rule.match ?? {});
    const allMatch = argumentPatterns.every(([name, patterns]) => {
      const value = record[name];
      if (typeof value !== 'string') return false;
      return (Array.isArray(patterns) ? patterns : [patterns]).some((pattern) => matches(pattern, value.trim()));
    });
    if (allMatch) return { decision: rule.decision, ruleIndex };
  }
  return { decision: policy.default };
}
