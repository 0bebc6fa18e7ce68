/**
 * Parsing of the unified diffs in `fileChange` tool details (`--- a/path`, `+++ b/path`,
 * `@@ -a,b +c,d @@` hunks; GNU diffutils "Unified Format") into numbered lines, and pairing
 * of removed and added lines for the side-by-side view.
 */

/** One line of a unified diff, with its numbers in the old and new file. */
export interface DiffLine {
  type: 'hunk' | 'context' | 'add' | 'del' | 'meta';
  text: string;
  oldNumber?: number;
  newNumber?: number;
}

/** Parses a unified diff into lines (file headers left out). */
export function parseUnifiedDiff(diff: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let oldNumber = 0;
  let newNumber = 0;
  for (const raw of diff.split('\n')) {
    if (raw.startsWith('--- ') || raw.startsWith('+++ ')) continue;
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(raw);
    if (hunk) {
      oldNumber = Number(hunk[1]);
      newNumber = Number(hunk[2]);
      lines.push({ type: 'hunk', text: raw });
    } else if (raw.startsWith('+')) lines.push({ type: 'add', text: raw.slice(1), newNumber: newNumber++ });
    else if (raw.startsWith('-')) lines.push({ type: 'del', text: raw.slice(1), oldNumber: oldNumber++ });
    else if (raw.startsWith(' ')) lines.push({ type: 'context', text: raw.slice(1), oldNumber: oldNumber++, newNumber: newNumber++ });
    else if (raw.startsWith('\\')) lines.push({ type: 'meta', text: raw });
  }
  return lines;
}

/** A row of the side-by-side view: the old line on the left, the new one on the right. */
export interface SplitRow {
  left?: DiffLine;
  right?: DiffLine;
  hunk?: DiffLine;
}

/** Pairs a diff's lines for the side-by-side view (runs of removals next to runs of additions). */
export function splitRows(lines: readonly DiffLine[]): SplitRow[] {
  const rows: SplitRow[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] as DiffLine;
    if (line.type === 'hunk' || line.type === 'meta') {
      rows.push({ hunk: line });
      index += 1;
    } else if (line.type === 'context') {
      rows.push({ left: line, right: line });
      index += 1;
    } else {
      const removed: DiffLine[] = [];
      const added: DiffLine[] = [];
      while (index < lines.length && (lines[index] as DiffLine).type === 'del') removed.push(lines[index++] as DiffLine);
      while (index < lines.length && (lines[index] as DiffLine).type === 'add') added.push(lines[index++] as DiffLine);
      for (let row = 0; row < Math.max(removed.length, added.length); row++) rows.push({ left: removed[row], right: added[row] });
    }
  }
  return rows;
}
