/**
 * The texts a secret value takes besides its own (SPEC §9: "secrets … redacted wherever they
 * would appear"). A value rarely appears only as itself: the server writes it to the workspace
 * `.env` quoted and escaped, and text quoting it inside JSON (tool arguments, tool output that
 * is JSON, a JSON file read back) has it JSON-escaped. Redacting only the raw value would let
 * each of these through, so the redactor hides every form listed by {@link encodedForms}.
 */

/** Characters a `.env` value may hold without quotes. */
const BARE_ENV_VALUE = /^[A-Za-z0-9_\-./:@+,=%]*$/;

/**
 * A value as a `.env` line of the server writes it after `NAME=`: bare when safe, else
 * single-quoted, or double-quoted with `\`, `"`, `$` and `` ` `` escaped when it holds a `'`.
 * @param value the secret's value
 */
export function envFileValue(value: string): string {
  if (BARE_ENV_VALUE.test(value)) return value;
  if (!value.includes("'")) return `'${value}'`;
  return `"${value.replace(/[\\"$`]/g, (character) => `\\${character}`)}"`;
}

/** What stands between the quotes of {@link envFileValue} (all of it when bare). */
function envFileBody(value: string): string {
  const written = envFileValue(value);
  return written === value ? value : written.slice(1, -1);
}

/** The inside of a JSON string holding `text`, as `JSON.stringify` writes it. */
function jsonBody(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** The inside of a JSON string holding `text`, every non-ASCII UTF-16 unit as `\uXXXX` (Python's `json.dumps` by default). */
function asciiJsonBody(text: string): string {
  return jsonBody(text).replace(/[\u0080-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Every distinct form of `value` to redact: the value itself and the inside of its `.env`
 * quoting ({@link envFileValue}), each also JSON-escaped once and twice (JSON text quoted in
 * JSON, such as tool arguments holding a JSON file), with non-ASCII characters as they are or
 * as `\uXXXX`. A value that needs no quoting or escaping has one form, itself.
 * @param value the secret's value
 */
export function encodedForms(value: string): string[] {
  const forms = new Set<string>();
  for (const base of [value, envFileBody(value)]) {
    forms.add(base);
    forms.add(jsonBody(base));
    forms.add(jsonBody(jsonBody(base)));
    forms.add(asciiJsonBody(base));
    forms.add(asciiJsonBody(jsonBody(base)));
    forms.add(asciiJsonBody(asciiJsonBody(base)));
  }
  return [...forms];
}
