import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most test time is spent waiting on real processes (servers, shells, a browser), so two
    // files at a time pay off even on two cores, where vitest's default would run one.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // A condition polled for is reached through real processes: give it time on a loaded machine.
    expect: { poll: { timeout: 15_000 } },
    // Every protocol message a test sends or receives is checked against the committed schema.
    setupFiles: ['test/setup/protocol-validation.ts'],
  },
});
