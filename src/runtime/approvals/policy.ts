/**
 * Evaluates an agent's approval policy for one tool call (SPEC §6: allow / ask / deny by tool
 * and argument pattern). Rules are tried in order and the first match decides. A tool that
 * declares no side effects (it only talks to the user) is gated only by rules naming it exactly.
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
  /** Index of the matching rule, or undefined when the default applied (or no rule could). */
  ruleIndex?: number;
}

/** What the policy needs to know of the tool besides its name. */
export interface PolicyToolTraits {
  /** False for a tool that changes nothing and only talks to the user (`Tool.sideEffects`). */
  sideEffects?: boolean;
}

/**
 * Decides a tool call: the first rule whose tool glob matches the tool name and whose every
 * argument pattern matches the (trimmed, string) argument decides; otherwise the default.
 * An argument that is not a string never matches a pattern.
 *
 * A tool with `sideEffects: false` is allowed unless a rule whose `tool` is exactly its name
 * matches: the default and glob rules (`*`, `request_*`) do not apply to it, so `default: ask`
 * never makes a person approve a question before it is asked.
 */
export function evaluatePolicy(policy: ApprovalPolicy, toolName: string, args: unknown, traits: PolicyToolTraits = {}): PolicyVerdict {
  const record = args && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  const explicitOnly = traits.sideEffects === false;
  for (const [ruleIndex, rule] of policy.rules.entries()) {
    if (explicitOnly ? rule.tool !== toolName : !matches(rule.tool, toolName)) continue;
    const argumentPatterns = Object.entries(rule.match ?? {});
    const allMatch = argumentPatterns.every(([name, patterns]) => {
      const value = record[name];
      if (typeof value !== 'string') return false;
      return (Array.isArray(patterns) ? patterns : [patterns]).some((pattern) => matches(pattern, value.trim()));
    });
    if (allMatch) return { decision: rule.decision, ruleIndex };
  }
  return { decision: explicitOnly ? 'allow' : policy.default };
}
