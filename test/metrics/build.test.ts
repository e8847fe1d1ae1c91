/**
 * Build facts: scripts/build-info.mjs records them at build time (from the environment, else git), and
 * `cbwatch --version` and cbwatch_build_info report them. Expectations are written by hand from the inputs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildInfo, buildInfoSet, versionText } from '../../src/metrics/build.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

const tmp = mkdtempSync(join(tmpdir(), 'cbwatch-build-info-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const saved = process.env.CBWATCH_REVISION;
afterEach(() => {
  if (saved === undefined) delete process.env.CBWATCH_REVISION;
  else process.env.CBWATCH_REVISION = saved;
});

function record(env: Record<string, string>): Record<string, string> {
  const out = join(tmp, `${Object.keys(env).join('-') || 'none'}.json`);
  execFileSync(process.execPath, [join(PACKAGE_ROOT, 'scripts', 'build-info.mjs')], { env: { ...process.env, ...env, CBWATCH_BUILD_INFO_OUT: out } });
  return JSON.parse(readFileSync(out, 'utf8')) as Record<string, string>;
}

describe('scripts/build-info.mjs', () => {
  it('takes every fact from the environment when given, the date from SOURCE_DATE_EPOCH in UTC', () => {
    // 1764096000 = 2025-11-25T18:40:00Z
    const info = record({ CBWATCH_REVISION: 'abc123', CBWATCH_BRANCH: 'release-1.0', CBWATCH_BUILD_USER: 'ci@builder', SOURCE_DATE_EPOCH: '1764096000' });
    expect(info).toEqual({ revision: 'abc123', branch: 'release-1.0', buildUser: 'ci@builder', buildDate: '20251125-18:40:00' });
  });

  it('asks git for the revision and branch of a checkout', () => {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: PACKAGE_ROOT, encoding: 'utf8' }).trim();
    const info = record({ CBWATCH_REVISION: '', CBWATCH_BRANCH: '' });
    expect(info.revision).toBe(head);
    expect(info.branch).not.toBe('unknown');
  });
});

describe('cbwatch --version and cbwatch_build_info', () => {
  it('print the same facts, CBWATCH_REVISION (the Docker image) overriding the recorded revision', () => {
    process.env.CBWATCH_REVISION = 'feedface';
    const b = buildInfo();
    expect(b.revision).toBe('feedface');
    const first = versionText().split('\n')[0];
    expect(first).toBe(`cbwatch, version ${b.version} (branch: ${b.branch}, revision: feedface)`);
    expect(versionText()).toContain(`  build date:       ${b.buildDate}\n`);
    const [family] = buildInfoSet().families();
    expect(family?.samples).toEqual([
      { labels: { version: b.version, revision: 'feedface', branch: b.branch, build_date: b.buildDate, nodejs_version: process.version }, value: 1 },
    ]);
  });
});
