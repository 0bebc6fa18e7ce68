/** Small statistics and printing helpers shared by the benchmarks. */

/** The p-th percentile (0–100) of a sample, by nearest rank. @throws on an empty sample */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) throw new Error('percentile of an empty sample');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** The median of a sample. */
export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Prints a titled two-column table of figures. */
export function printTable(title: string, rows: [string, string][]): void {
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(`\n${title}`);
  for (const [label, value] of rows) console.log(`  ${label.padEnd(width)}  ${value}`);
}
