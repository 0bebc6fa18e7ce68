/**
 * zod's validation issues in the words a person fixing the input needs, for configuration files
 * and protocol params alike: a missing key said as missing, an unknown key at the key itself, a
 * value matching none of a union's forms told what is wrong with the one form of its type (not
 * zod's bare "Invalid input").
 */
import type { z } from 'zod';
import { similarNames } from './similar-names.js';

/** One issue: where (the key path) and what. */
export interface ExplainedIssue {
  keyPath: PropertyKey[];
  message: string;
}

/** zod's type names in words. */
const TYPE_WORDS: Record<string, string> = { record: 'a mapping of names', object: 'a mapping', array: 'a list', string: 'a string', number: 'a number', int: 'an integer', boolean: 'true or false' };

/** The type a zod `invalid_type` issue says it received (`received string` in its message). */
function receivedType(issue: z.core.$ZodIssue): string | undefined {
  return /received (\w+)/.exec(issue.message)?.[1];
}

/** The value at `keyPath` in `root`, or undefined when the path leads nowhere. */
function valueAt(root: unknown, keyPath: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of keyPath) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * A tag (`kind: dockr`, or none) that selects none of a discriminated union's forms, said with
 * the value found and the values allowed, instead of zod's "Invalid discriminator value".
 */
function explainDiscriminator(issue: z.core.$ZodIssue & { options?: unknown[] }, parsed: { root: unknown } | undefined): ExplainedIssue {
  const options = (issue.options ?? []).map(String);
  const allowed = options.map((option) => `"${option}"`).join(', ');
  if (!parsed) return { keyPath: issue.path, message: `must be one of ${allowed}` };
  const value = valueAt(parsed.root, issue.path);
  if (value === undefined) return { keyPath: issue.path, message: `required, but missing (one of ${allowed})` };
  const near = typeof value === 'string' ? similarNames(value, options)[0] : undefined;
  return { keyPath: issue.path, message: `${JSON.stringify(value)} is not one of ${allowed}${near ? ` (did you mean "${near}"?)` : ''}` };
}

/**
 * Says a schema's issue in the words a person editing the file needs: an unknown key at the
 * key itself (each at its own line, not at the mapping holding it); a bad record key with the
 * naming rule it broke, not "Invalid key in record"; a value matching none of a union's forms
 * with the problems of the one form of its type (`reasoning: { effort: extreme }` is told the
 * efforts allowed), or the types allowed when its type fits none, not "Invalid input"; a
 * discriminator (`kind`) missing or naming no form, with the value found and those allowed.
 * @param issue one of the issues of a failed parse
 * @param parsed the whole value that was parsed (to quote a bad discriminator); omit when unknown
 */
export function explainIssue(issue: z.core.$ZodIssue, parsed?: { root: unknown }): ExplainedIssue[] {
  // A schema's own message for it (`mcp.yaml`'s transport) says more than the generic one.
  if (issue.code === 'invalid_union' && (issue as { note?: string }).note === 'No matching discriminator' && issue.message.startsWith('Invalid discriminator value')) return [explainDiscriminator(issue, parsed)];
  // "expected record, received undefined" is zod's way of saying a required key is not there.
  if (issue.code === 'invalid_type' && receivedType(issue) === 'undefined') return [{ keyPath: issue.path, message: `required, but missing (${TYPE_WORDS[issue.expected] ?? issue.expected} expected)` }];
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ keyPath: [...issue.path, key], message: `Unrecognized key: "${key}"` }));
  if (issue.code === 'invalid_key') return [{ keyPath: issue.path, message: issue.issues.map((inner) => inner.message).join('; ') }];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const wrongType = (branch: z.core.$ZodIssue[]): boolean => branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0);
    const fitting = issue.errors.filter((branch) => !wrongType(branch));
    if (fitting.length === 1) return (fitting[0] as z.core.$ZodIssue[]).flatMap((inner) => explainIssue({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue, parsed));
    if (fitting.length === 0) {
      const expected = [...new Set(issue.errors.flatMap((branch) => branch.flatMap((inner) => (inner.code === 'invalid_type' && inner.path.length === 0 ? [inner.expected] : []))))];
      const received = receivedType(issue.errors[0]?.[0] as z.core.$ZodIssue);
      if (expected.length > 0 && received === 'undefined') return [{ keyPath: issue.path, message: `required, but missing (${expected.map((type) => TYPE_WORDS[type] ?? type).join(' or ')} expected)` }];
      if (expected.length > 0) return [{ keyPath: issue.path, message: `expected ${expected.join(' or ')}${received ? `, received ${received}` : ''}` }];
    }
  }
  return [{ keyPath: issue.path, message: issue.message }];
}
