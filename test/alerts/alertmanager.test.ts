/**
 * alerts/alertmanager.example.yml: valid for amtool, routes by severity, and its inhibition rules name
 * alerts that exist.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { requireBinary } from '../helpers/tools.js';

const FILE = join(PACKAGE_ROOT, 'alerts', 'alertmanager.example.yml');
const amtool = requireBinary('amtool');

function run(args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(amtool as string, args, { encoding: 'utf8', stdio: 'pipe' }) };
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    return { code: e.status ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe.skipIf(!amtool)('alertmanager.example.yml', () => {
  it('passes amtool check-config', () => {
    const r = run(['check-config', FILE]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/SUCCESS/);
  });

  it.each([
    ['critical', 'pager'],
    ['warning', 'chat'],
    ['info', 'digest'],
  ])('routes severity=%s to %s', (severity, receiver) => {
    const r = run(['config', 'routes', 'test', `--config.file=${FILE}`, `severity=${severity}`, 'alertname=CouchbaseDown', 'couchbase_cluster=prod']);
    expect(r.code, r.out).toBe(0);
    expect(r.out.trim()).toBe(receiver);
  });
});

describe('inhibition rules', () => {
  const cfg = parse(readFileSync(FILE, 'utf8')) as { inhibit_rules: { source_matchers: string[]; target_matchers: string[]; equal: string[] }[] };
  const rules = readFileSync(join(PACKAGE_ROOT, 'alerts', 'cbwatch.rules.yml'), 'utf8');

  it('name only alerts that exist in the rules', () => {
    for (const r of cfg.inhibit_rules)
      for (const m of [...r.source_matchers, ...r.target_matchers]) {
        const eq = /^alertname="([A-Za-z]+)"$/.exec(m);
        if (eq) expect(rules, `inhibit rule names ${eq[1]}`).toContain(`alert: ${eq[1]}`);
      }
  });

  it('CouchbaseDown inhibits per-cluster alerts of the same cluster, CbwatchExporterDown those of the same target', () => {
    const down = cfg.inhibit_rules.find((r) => r.source_matchers.includes('alertname="CouchbaseDown"'));
    expect(down?.equal).toEqual(['couchbase_cluster']);
    expect(down?.target_matchers).toContain('alertname!="CouchbaseDown"');
    const exp = cfg.inhibit_rules.find((r) => r.source_matchers.includes('alertname="CbwatchExporterDown"'));
    expect(exp?.equal).toEqual(['job', 'instance']);
  });

  it('CouchbaseBucketHardOomErrors inhibits the temporary OOM and memory warnings of the same bucket', () => {
    const hard = cfg.inhibit_rules.find((r) => r.source_matchers.includes('alertname="CouchbaseBucketHardOomErrors"'));
    expect(hard?.equal).toEqual(['couchbase_cluster', 'bucket']);
    const target = new RegExp(`^(?:${/^alertname=~"(.*)"$/.exec(hard?.target_matchers[0] ?? '')?.[1] ?? '$^'})$`);
    for (const a of ['CouchbaseBucketTemporaryOomErrors', 'CouchbaseBucketMemoryNearQuota', 'CouchbaseBucketMemoryNearHighWaterMark']) expect(target.test(a), a).toBe(true);
    expect(target.test('CouchbaseBucketHardOomErrors')).toBe(false);
  });
});
