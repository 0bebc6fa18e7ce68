/**
 * A short run of the crash soak (`npm run soak` runs it for longer): a real server killed
 * with SIGKILL mid-turn, restarted on the same data directory, three times. Nothing
 * acknowledged is lost, the listing shows no stale running turn, no command is left running.
 */
import { describe, expect, it } from 'vitest';
import { runCrashSoak } from '../../soak/crash-soak.js';

describe('crash soak (short)', () => {
  it('loses nothing, leaves no stale running turn and no command running over 3 kills', async () => {
    const figures = await runCrashSoak({ rounds: 3, maxKillDelayMs: 1200 });
    expect(figures.problems).toEqual([]);
    expect(figures).toMatchObject({ rounds: 3, conversationsAcknowledged: 3, lost: 0, staleRunning: 0, leftRunning: 0 });
    expect(figures.itemsAcknowledged).toBeGreaterThan(0);
  }, 120_000);
});
