/**
 * `npm run soak [-- --rounds N] [-- --max-kill-delay MS]`: runs the crash soak (see
 * crash-soak.ts) and prints its figures. Exit code 0 when nothing was lost, no listing entry
 * was stale and no command was left running; 1 otherwise; 64 for a bad option.
 */
import { runCrashSoak } from './crash-soak.js';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`soak: ${name} needs a positive whole number, got "${process.argv[index + 1] ?? ''}"\n`);
    process.exit(64);
  }
  return value;
}

const rounds = option('--rounds', 20);
const maxKillDelayMs = option('--max-kill-delay', 1500);
const figures = await runCrashSoak({
  rounds,
  maxKillDelayMs,
  onRound: (round, current) => {
    if (round % 10 === 0 || round === rounds) process.stderr.write(`round ${round}/${rounds}: ${current.itemsAcknowledged} items acknowledged, lost ${current.lost}, stale ${current.staleRunning}, left running ${current.leftRunning}\n`);
  },
});
process.stdout.write(
  [
    `rounds: ${figures.rounds}`,
    `conversations acknowledged: ${figures.conversationsAcknowledged}`,
    `items acknowledged: ${figures.itemsAcknowledged}`,
    `lost: ${figures.lost}`,
    `stale running in the listing: ${figures.staleRunning}`,
    `commands left running: ${figures.leftRunning}`,
    `wall time: ${(figures.wallTimeMs / 1000).toFixed(1)} s`,
    ...figures.problems.map((text) => `problem: ${text}`),
  ].join('\n') + '\n',
);
process.exit(figures.lost === 0 && figures.staleRunning === 0 && figures.leftRunning === 0 ? 0 : 1);
