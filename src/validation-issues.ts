/**
 * zod's validation issues in the words a person fixing the input needs, for configuration files
 * and protocol params alike: a missing key said as missing, an unknown key at the key itself, a
 * value matching none of a union's forms told what is wrong with the one form of its type (not
 * zod's bare "Invalid input").
 */
import type { z } from 'zod';

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

/**
 * Says a schema's issue in the words a person editing the file needs: an unknown key at the
 * key itself (each at its own line, not at the mapping holding it); a bad record key with the
 * naming rule it broke, not "Invalid key in record"; a value matching none of a union's forms
 * with the problems of the one form of its type (`reasoning: { effort: extreme }` is told the
 * efforts allowed), or the types allowed when its type fits none, not "Invalid input".
 */
export function explainIssue(issue: z.core.$ZodIssue): ExplainedIssue[] {
  // "expected record, received undefined" is zod's way of saying a required key is not there.
  if (issue.code === 'invalid_type' && receivedType(issue) === 'undefined') return [{ keyPath: issue.path, message: `required, but missing (${TYPE_WORDS[issue.expected] ?? issue.expected} expected)` }];
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ keyPath: [...issue.path, key], message: `Unrecognized key: "${key}"` }));
  if (issue.code === 'invalid_key') return [{ keyPath: issue.path, message: issue.issues.map((inner) => inner.message).join('; ') }];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const wrongType = (branch: z.core.$ZodIssue[]): boolean => branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0);
    const fitting = issue.errors.filter((branch) => !wrongType(branch));
    if (fitting.length === 1) return (fitting[0] as z.core.$ZodIssue[]).flatMap((inner) => explainIssue({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue));
    if (fitting.length === 0) {
      const expected = [...new Set(issue.errors.flatMap((branch) => branch.flatMap((inner) => (inner.code === 'invalid_type' && inner.path.length === 0 ? [inner.expected] : []))))];
      const received = receivedType(issue.errors[0]?.[0] as z.core.$ZodIssue);
      if (expected.length > 0 && received === 'undefined') return [{ keyPath: issue.path, message: `required, but missing (${expected.map((type) => TYPE_WORDS[type] ?? type).join(' or ')} expected)` }];
      if (expected.length > 0) return [{ keyPath: issue.path, message: `expected ${expected.join(' or ')}${received ? `, received ${received}` : ''}` }];
    }
  }
  return [{ keyPath: issue.path, message: issue.message }];
}
