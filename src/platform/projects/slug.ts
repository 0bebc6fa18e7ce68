/**
 * Project slugs (SPEC §9): made from the project's name, unique among projects. Unicode
 * letters and digits are kept (lowercased, accents dropped where a base letter exists), so
 * "Проект" gives "проект" and "Café" gives "cafe"; a name with no letter or digit at all
 * (e.g. only emoji) gives `project-<8 hex digits of the name's SHA-256>`, so two such names
 * do not share one fallback.
 */
import { createHash } from 'node:crypto';

/** Longest slug, in characters (before a uniqueness suffix). */
export const MAX_SLUG_LENGTH = 60;

/** The slug a name gives, before making it unique. */
export function slugOf(name: string): string {
  const words = name
    .normalize('NFKD')
    // Combining marks left by NFKD (the accents of "é") go; other scripts' letters stay.
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu);
  const slug = (words ?? []).join('-').slice(0, MAX_SLUG_LENGTH).replace(/-+$/, '');
  if (slug !== '') return slug;
  return `project-${createHash('sha256').update(name.normalize('NFC')).digest('hex').slice(0, 8)}`;
}

/**
 * A slug for `name` not in `taken`: the plain slug, else `<slug>-2`, `<slug>-3`, ….
 * @param taken slugs in use (of other projects)
 */
export function uniqueSlug(name: string, taken: ReadonlySet<string>): string {
  const base = slugOf(name);
  if (!taken.has(base)) return base;
  for (let suffix = 2; ; suffix++) {
    const candidate = `${base}-${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
