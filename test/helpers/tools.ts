/**
 * External tools (promtool, amtool, prometheus, alertmanager) from Debian's packages. On a developer's
 * laptop without them the tests that need them are skipped with a message; under CI=true they must exist.
 */
import { execFileSync } from 'node:child_process';

export function findBinary(...names: string[]): string | undefined {
  for (const n of names) {
    try {
      const p = execFileSync('sh', ['-c', `command -v ${n}`], { encoding: 'utf8' }).trim();
      if (p) return p;
    } catch {
      /* not on PATH */
    }
  }
  return undefined;
}

/**
 * The path of the tool, or undefined (test should skip) when it is missing outside CI.
 * Under CI=true a missing tool throws, so the run fails instead of silently skipping.
 */
export function requireBinary(...names: string[]): string | undefined {
  const p = findBinary(...names);
  if (p) return p;
  const msg = `${names[0]} not found: install Debian's prometheus / prometheus-alertmanager packages (bash .ci/run does)`;
  if (process.env.CI === 'true') throw new Error(msg);
  console.warn(`skipping: ${msg}`);
  return undefined;
}

/**
 * For `it.skipIf(missing('promtool'))`: true when the tool is missing outside CI, so the test shows as
 * skipped (never as a silent pass); under CI=true a missing tool throws here and fails the run.
 */
export function missing(...names: string[]): boolean {
  return requireBinary(...names) === undefined;
}
