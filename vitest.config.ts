import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Node.js reads and parses the certificate file that NODE_EXTRA_CA_CERTS names as each process
// starts, before any code runs: 40–90 ms a start on a machine whose environment points it at
// the system's whole bundle (bench/startup.ts measures it). The suite starts a great many Node.js
// processes (test workers, servers, command lines, crash children), and none of them needs the
// extra certificates: tests talk to loopback only, over plain HTTP and WebSocket. Workers and
// everything they start inherit this environment.
delete process.env.NODE_EXTRA_CA_CERTS;

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
