import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Every protocol message a test sends or receives is checked against the committed schema.
    setupFiles: ['test/setup/protocol-validation.ts'],
  },
});
