import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { E2E_FILES } from './test/setup/e2e-files.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The slow end-to-end files run from `npm run test:e2e` (vitest.e2e.config.ts).
    exclude: [...configDefaults.exclude, ...E2E_FILES],
    // A test's timeout finds a hang; it is not a speed limit. Tests start real processes (daemons, the simulator,
    // promtool, jsonnet) and must pass on a shared 2-core machine with other work beside them, where one of those
    // can take ten times as long as on a quiet one.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // At least two test files at a time, also on 2 cores (where vitest's default is one): most files wait on
    // processes they started (daemons, the simulator, Prometheus), so two share the cores well.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Builds dist/ when stale: the daemon's collection worker runs dist/bundle/worker.js.
    globalSetup: ['test/setup/dist.ts'],
    // CI reads the JSON report to print its "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
