/**
 * The slow end-to-end files, run by `npm run test:e2e` (vitest.e2e.config.ts) and left out of `npm test`
 * (vitest.config.ts): the release artefacts built and installed (npm tarball, .deb, the .deb in a minbase root, the
 * OCI image under podman) and the runs of the whole stack, cbwatch with a real Prometheus and Alertmanager.
 */
export const E2E_FILES = ['test/release/**/*.test.ts', 'test/e2e/**/*.test.ts'];
