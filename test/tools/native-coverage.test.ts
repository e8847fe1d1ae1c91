/**
 * The count docs/native-metrics.md states of what works on Couchbase's native /metrics alone
 * (src/tools/native-coverage.ts): the expression reading, by hand-written cases, and the totals, counted here
 * independently of the module (panel targets and alert rules read straight from the files).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { nativeCoverage, requiredNames, seriesNames } from '../../src/tools/native-coverage.js';

describe('seriesNames / requiredNames', () => {
  it('names the series, not functions, labels, ranges, strings, keywords or variables', () => {
    expect(seriesNames('sum by (bucket) (rate(kv_ops{op="get", bucket=~"$bucket"}[$__rate_interval])) / on (bucket) group_left (x) couchbase_bucket_info > bool 0')).toEqual(['kv_ops', 'couchbase_bucket_info']);
    expect(seriesNames('label_replace(up{job="a"}, "n", "$1", "instance", "(.*)")')).toEqual(['up']);
  });
  it('what is only on the right of `unless` is optional (absent, it suppresses nothing)', () => {
    expect(requiredNames('a > 1 unless on (bucket) b')).toEqual(['a']);
    expect(requiredNames('(a unless b) or c')).toEqual(['a', 'c']);
    expect(requiredNames('a unless on (x) b or (c unless d) and e')).toEqual(['a', 'c', 'e']);
  });
});

describe('nativeCoverage over the shipped files', () => {
  const c = nativeCoverage(PACKAGE_ROOT);
  it('counts every dashboard query, alert and query variable', () => {
    let queries = 0;
    let variables = 0;
    for (const f of readdirSync(join(PACKAGE_ROOT, 'dashboards')).filter((x) => x.endsWith('.json'))) {
      const d = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'dashboards', f), 'utf8')) as { panels?: unknown[]; templating?: { list?: Array<{ type?: string }> } };
      const walk = (ps: unknown[] | undefined): void => {
        for (const p of (ps ?? []) as Array<{ targets?: Array<{ expr?: string }>; panels?: unknown[] }>) {
          queries += (p.targets ?? []).filter((t) => typeof t.expr === 'string' && t.expr.trim() !== '').length;
          walk(p.panels);
        }
      };
      walk(d.panels);
      variables += (d.templating?.list ?? []).filter((v) => v.type === 'query').length;
    }
    const alerts = (parse(readFileSync(join(PACKAGE_ROOT, 'alerts', 'cbwatch.rules.yml'), 'utf8')) as { groups: Array<{ rules: Array<{ alert?: string }> }> }).groups.flatMap((g) => g.rules).filter((r) => r.alert);
    expect(c.queries).toBe(queries);
    expect(c.alerts).toBe(alerts.length);
    expect(c.variables).toBe(variables);
  });
  it('the statistics alerts work on native alone; cbwatch\'s own and the cluster-health ones do not; no variable does', () => {
    expect(c.nativeAlerts).toEqual(expect.arrayContaining(['CouchbaseBucketMemoryNearHighWaterMark', 'CouchbaseXdcrBacklogHigh']));
    for (const a of ['CbwatchExporterDown', 'CouchbaseBucketStatsStalled', 'CouchbaseXdcrReplicationPaused']) expect(c.nativeAlerts).not.toContain(a);
    expect(c.nativeVariables).toBe(0);
    expect(c.nativeQueries).toBeGreaterThan(0);
    expect(c.nativeQueries).toBeLessThan(c.queries);
  });
});
