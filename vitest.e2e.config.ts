import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { E2E_FILES } from './test/setup/e2e-files.js';

/**
 * `npm run test:e2e`: the slow end-to-end files (test/setup/e2e-files.ts). Before them, dist/ is brought up to date
 * and release/ is built when missing or stale (packaging/release.sh; the minbase root too when CBWATCH_MINBASE or
 * CBWATCH_IMAGE asks for the root-only files), so the files that use them can run side by side.
 */
export default defineConfig({
  test: {
    include: E2E_FILES,
    exclude: configDefaults.exclude,
    testTimeout: 300_000,
    hookTimeout: 900_000,
    pool: 'forks',
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ['test/setup/dist.ts', 'test/setup/release.ts'],
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'test-results/vitest-e2e.json' },
  },
});
