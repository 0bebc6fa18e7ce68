/**
 * Server errors said in the words of the command that caused them. The server names the method
 * and the key path it refused (`conversation/update: params.title: at most 200 characters`, as
 * docs/protocol.md's errors do), which is right for a client author and means nothing to the
 * person who typed `openvaala conversations rename`: the command knows which of its arguments
 * or options became which parameter.
 */

/** The prefix the server puts on a refused parameter: `<method>: params.<name>: `. */
const PARAMETER_PREFIX = /^[A-Za-z]+(?:\/[A-Za-z]+)*: params\.([A-Za-z]+): /;

/**
 * `message` with its `<method>: params.<name>: ` prefix replaced by what the command calls that
 * parameter (`<title>: at most 200 characters`), or removed when `names` maps it to `''` (the
 * caller already says which option it was). A message without the prefix, or naming a
 * parameter `names` does not know, is returned as it is.
 * @param message the server's error message
 * @param names protocol parameter name → the command's argument or option (`title` → `<title>`)
 */
export function inCommandTerms(message: string, names: Readonly<Record<string, string>>): string {
  const match = PARAMETER_PREFIX.exec(message);
  const name = match ? names[match[1] as string] : undefined;
  if (match === null || name === undefined) return message;
  const rest = message.slice(match[0].length);
  return name === '' ? rest : `${name}: ${rest}`;
}
