import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // At least two test files at a time, also on 2 cores (where vitest's default is one): most files wait on
    // processes they started (daemons, the simulator, Prometheus), so two share the cores well. On a 2-core machine
    // the Node 20 pass of `.ci/run` took 405 s with one and 207 s with two (the whole run 13 min and 7 min).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Builds dist/ when stale: the daemon's collection worker runs dist/bundle/worker.js.
    globalSetup: ['test/setup/dist.ts'],
    // CI reads the JSON report to print its "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
