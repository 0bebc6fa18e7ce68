/**
 * Which known name a mistyped one most likely meant, for "did you mean" suggestions.
 */

/**
 * The edit distance between two words (insertions, deletions, substitutions and transpositions
 * of adjacent letters each count 1; the optimal string alignment distance).
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, index) => [index, ...Array<number>(b.length).fill(0)]);
  for (let column = 1; column <= b.length; column++) (rows[0] as number[])[column] = column;
  for (let row = 1; row <= a.length; row++) {
    const current = rows[row] as number[];
    const previous = rows[row - 1] as number[];
    for (let column = 1; column <= b.length; column++) {
      const cost = a[row - 1] === b[column - 1] ? 0 : 1;
      current[column] = Math.min((previous[column] as number) + 1, (current[column - 1] as number) + 1, (previous[column - 1] as number) + cost);
      if (row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1]) {
        current[column] = Math.min(current[column] as number, ((rows[row - 2] as number[])[column - 2] as number) + 1);
      }
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * The names closest to `word`: those within an edit distance of 40 % of its length (at least
 * 1), or that start with it, nearest first. Used for "did you mean" suggestions (commands,
 * configuration file names).
 * @param word what was typed
 * @param names the names to choose from
 */
export function similarNames(word: string, names: readonly string[]): string[] {
  const limit = Math.max(1, Math.floor(word.length * 0.4));
  return names
    .map((name) => ({ name, distance: name.startsWith(word) ? 0 : editDistance(word, name) }))
    .filter((candidate) => candidate.distance <= limit)
    .sort((left, right) => left.distance - right.distance || left.name.localeCompare(right.name))
    .map((candidate) => candidate.name);
}

/**
 * What to tell about a name that is not one of `names`: ` (did you mean "x"?)` with the nearest
 * (see `similarNames`, letter case ignored), else ` (known: a, b, c)` when `listKnown` and there
 * are at most 30, else nothing. Starts with a space, so it follows the sentence it belongs to.
 * @param word the unknown name
 * @param names the names it could have meant
 * @param listKnown whether to list the names when none is near (for a reader, such as a model,
 *   that cannot look them up)
 */
export function unknownNameHint(word: string, names: readonly string[], listKnown = false): string {
  const lower = names.map((name) => name.toLowerCase());
  const near = similarNames(word.toLowerCase(), lower)[0];
  if (near !== undefined) return ` (did you mean "${names[lower.indexOf(near)]}"?)`;
  if (listKnown && names.length > 0 && names.length <= 30) return ` (known: ${names.join(', ')})`;
  return '';
}
