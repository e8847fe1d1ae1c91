import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Builds dist/ when stale: the daemon's collection worker runs dist/collection/worker.js.
    globalSetup: ['test/setup/dist.ts'],
    // CI reads the JSON report to print its "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
