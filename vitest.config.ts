import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most tests wait on real processes, servers and browsers rather than compute: one worker
    // more than vitest's default (CPUs - 1) keeps a 2-CPU machine busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A condition polled for is reached through real processes: give it time on a loaded machine.
    expect: { poll: { timeout: 15_000 } },
    // Every protocol message a test sends or receives is checked against the committed schema.
    setupFiles: ['test/setup/protocol-validation.ts'],
  },
});
