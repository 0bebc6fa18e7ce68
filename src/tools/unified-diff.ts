/**
 * Unified diffs (the `diff -u` format, as read by `patch` and `git apply`) of a file's text
 * before and after a change, for the `fileChange` details clients show.
 */

/** Lines of context around each change. */
export const DIFF_CONTEXT_LINES = 3;

/**
 * Above this many cells (changed old lines × changed new lines) the middle of the files is
 * shown as removed and re-added as a whole: the line matching below takes memory and time in
 * proportion to it, and a diff that large is not read line by line anyway.
 */
const MAX_MATCHING_CELLS = 4_000_000;

type Operation = { type: ' ' | '-' | '+'; text: string };

function splitLines(text: string): { lines: string[]; finalNewline: boolean } {
  if (text === '') return { lines: [], finalNewline: true };
  const lines = text.split('\n');
  const finalNewline = lines.at(-1) === '';
  if (finalNewline) lines.pop();
  return { lines, finalNewline };
}

/** The line operations turning `before` into `after`: a longest common subsequence of lines between a common head and tail. */
function diffLines(before: string[], after: string[]): Operation[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const oldMiddle = before.slice(head, before.length - tail);
  const newMiddle = after.slice(head, after.length - tail);
  const operations: Operation[] = before.slice(0, head).map((text) => ({ type: ' ', text }));
  const n = oldMiddle.length;
  const m = newMiddle.length;
  if (n * m > MAX_MATCHING_CELLS || n === 0 || m === 0) {
    operations.push(...oldMiddle.map((text): Operation => ({ type: '-', text })), ...newMiddle.map((text): Operation => ({ type: '+', text })));
  } else {
    // lengths[i][j]: longest common subsequence of oldMiddle[i..] and newMiddle[j..].
    const lengths = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      const row = lengths[i] as Uint32Array;
      const below = lengths[i + 1] as Uint32Array;
      for (let j = m - 1; j >= 0; j--) row[j] = oldMiddle[i] === newMiddle[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number);
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && oldMiddle[i] === newMiddle[j]) {
        operations.push({ type: ' ', text: oldMiddle[i] as string });
        i++;
        j++;
      } else if (j < m && (i === n || (lengths[i]?.[j + 1] as number) >= (lengths[i + 1]?.[j] as number))) {
        operations.push({ type: '+', text: newMiddle[j] as string });
        j++;
      } else {
        operations.push({ type: '-', text: oldMiddle[i] as string });
        i++;
      }
    }
    // Removals before additions within a run of changes, as diff -u prints them.
    for (let start = head; start < operations.length; ) {
      if (operations[start]?.type === ' ') {
        start++;
        continue;
      }
      let end = start;
      while (end < operations.length && operations[end]?.type !== ' ') end++;
      const run = operations.slice(start, end);
      operations.splice(start, run.length, ...run.filter((operation) => operation.type === '-'), ...run.filter((operation) => operation.type === '+'));
      start = end;
    }
  }
  operations.push(...before.slice(before.length - tail).map((text): Operation => ({ type: ' ', text })));
  return operations;
}

/** Characters compared at once while looking for the first difference (equal slices compare without copying). */
const COMPARE_BLOCK = 65_536;

/** Index of the first character where `a` and `b` differ (the shorter length when one starts the other). */
function firstDifference(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  let index = 0;
  while (index + COMPARE_BLOCK <= length && a.slice(index, index + COMPARE_BLOCK) === b.slice(index, index + COMPARE_BLOCK)) index += COMPARE_BLOCK;
  while (index < length && a.charCodeAt(index) === b.charCodeAt(index)) index++;
  return index;
}

/** How many characters `a` and `b` have in common at their ends, at most `limit`. */
function commonSuffixLength(a: string, b: string, limit: number): number {
  let length = 0;
  while (length + COMPARE_BLOCK <= limit && a.slice(a.length - length - COMPARE_BLOCK, a.length - length) === b.slice(b.length - length - COMPARE_BLOCK, b.length - length)) length += COMPARE_BLOCK;
  while (length < limit && a.charCodeAt(a.length - 1 - length) === b.charCodeAt(b.length - 1 - length)) length++;
  return length;
}

/** Where the line holding `index` starts: just after the last line break before it, or 0. */
function lineStart(text: string, index: number): number {
  // Not lastIndexOf with index - 1 < 0: a negative start is read as 0 and would find a break at 0.
  return index <= 0 ? 0 : text.lastIndexOf('\n', index - 1) + 1;
}

/**
 * The part of two versions of a file that the diff needs: from `DIFF_CONTEXT_LINES` whole lines
 * above the first difference to as many whole lines below the last one. What is cut off is the
 * same in both versions; `linesAbove` is how many lines were cut above. The cut below is made
 * only after a line break, so both parts end the same way and the end of the file (with or
 * without its last line break) is only in the parts when it is near a change.
 */
function changedRegion(before: string, after: string): { before: string; after: string; linesAbove: number } {
  const first = firstDifference(before, after);
  if (first === before.length && first === after.length) return { before: '', after: '', linesAbove: 0 };
  const firstChangedLine = lineStart(before, first);
  let start = firstChangedLine;
  for (let line = 0; line < DIFF_CONTEXT_LINES && start > 0; line++) start = lineStart(before, start - 1);
  let linesAbove = 0;
  for (let index = before.indexOf('\n'); index >= 0 && index < start; index = before.indexOf('\n', index + 1)) linesAbove++;
  // The common end may not reach into the common start, as the line diff's tail may not overlap its head.
  const common = commonSuffixLength(before, after, Math.min(before.length, after.length) - firstChangedLine);
  // The first line break inside the common end: the lines after it are whole and equal in both
  // versions, aligned from the end (a break before it may end a line that differs). Then that
  // many lines of context more.
  let cut = before.indexOf('\n', before.length - common);
  for (let line = 0; line < DIFF_CONTEXT_LINES && cut >= 0; line++) cut = before.indexOf('\n', cut + 1);
  const end = cut < 0 ? before.length : cut + 1;
  const tail = before.length - end;
  return { before: before.slice(start, end), after: after.slice(start, after.length - tail), linesAbove };
}

/**
 * A unified diff from `before` to `after`, with `DIFF_CONTEXT_LINES` lines of context. Texts
 * that break their lines with CR alone (no LF in either) are diffed by those lines.
 * @param before the old text; null for a file that is added (shown from `/dev/null`)
 * @param after the new text; null for a file that is deleted (shown to `/dev/null`)
 * @param oldPath the old path as shown after `--- a/`
 * @param newPath the new path as shown after `+++ b/` (default `oldPath`)
 * @returns the headers and `@@` hunks; only the headers when nothing changed
 */
export function unifiedDiff(before: string | null, after: string | null, oldPath: string, newPath: string = oldPath): string {
  // Lines broken by CR alone (classic Mac OS: no LF in either version) are shown as the lines
  // apply_patch reads them, not as one line.
  if (!before?.includes('\n') && !after?.includes('\n') && (before?.includes('\r') || after?.includes('\r'))) {
    return unifiedDiff(before?.replaceAll('\r', '\n') ?? null, after?.replaceAll('\r', '\n') ?? null, oldPath, newPath);
  }
  // Only the changed region, with its context, is split into lines: a one-line edit of a large
  // file would otherwise make a string per line of both versions.
  const region = before !== null && after !== null ? changedRegion(before, after) : { before: before ?? '', after: after ?? '', linesAbove: 0 };
  const old = splitLines(region.before);
  const next = splitLines(region.after);
  const operations = diffLines(old.lines, next.lines);
  const out = [`--- ${before === null ? '/dev/null' : `a/${oldPath}`}`, `+++ ${after === null ? '/dev/null' : `b/${newPath}`}`];
  // A last line without a newline differs from the same line with one: a context line that
  // lacks it on one side only is shown removed and added again, each marked where it lacks it.
  const lastOld = operations.findLastIndex((operation) => operation.type !== '+');
  const lastNew = operations.findLastIndex((operation) => operation.type !== '-');
  const noNewlineAfter = new Set<number>();
  const marked: Operation[] = [];
  operations.forEach((operation, index) => {
    const oldLacks = index === lastOld && !old.finalNewline;
    const newLacks = index === lastNew && !next.finalNewline;
    if (operation.type === ' ' && oldLacks !== newLacks) {
      if (oldLacks) noNewlineAfter.add(marked.length);
      marked.push({ type: '-', text: operation.text });
      if (newLacks) noNewlineAfter.add(marked.length);
      marked.push({ type: '+', text: operation.text });
      return;
    }
    if (oldLacks || newLacks) noNewlineAfter.add(marked.length);
    marked.push(operation);
  });
  operations.splice(0, operations.length, ...marked);
  const changed = operations.flatMap((operation, index) => (operation.type === ' ' ? [] : [index]));
  let cursor = 0;
  while (cursor < changed.length) {
    const first = changed[cursor] as number;
    let last = first;
    while (cursor + 1 < changed.length && (changed[cursor + 1] as number) - last <= 2 * DIFF_CONTEXT_LINES + 1) last = changed[++cursor] as number;
    cursor++;
    const start = Math.max(0, first - DIFF_CONTEXT_LINES);
    const end = Math.min(operations.length, last + DIFF_CONTEXT_LINES + 1);
    const oldBefore = region.linesAbove + operations.slice(0, start).filter((operation) => operation.type !== '+').length;
    const newBefore = region.linesAbove + operations.slice(0, start).filter((operation) => operation.type !== '-').length;
    const hunk = operations.slice(start, end);
    const oldCount = hunk.filter((operation) => operation.type !== '+').length;
    const newCount = hunk.filter((operation) => operation.type !== '-').length;
    out.push(`@@ -${oldCount === 0 ? oldBefore : oldBefore + 1},${oldCount} +${newCount === 0 ? newBefore : newBefore + 1},${newCount} @@`);
    hunk.forEach((operation, offset) => {
      out.push(`${operation.type}${operation.text}`);
      if (noNewlineAfter.has(start + offset)) out.push('\\ No newline at end of file');
    });
  }
  return `${out.join('\n')}\n`;
}
