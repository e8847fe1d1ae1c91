/**
 * The jsonnet mixin (mixin.libsonnet): built with the system's jsonnet (Debian's), its default output equals the
 * shipped alerts/cbwatch.rules.yml and dashboards/*.json, and with overrides it gives the same rules as
 * `cbwatch rules --set` with the same keys (both come from one set of templates; this checks the two renderers).
 * Skipped without jsonnet on a developer machine; under CI=true a missing jsonnet fails the run.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { applyOverrides, renderConfigured } from '../../src/tools/alert-config.js';
import { configurableAlerts } from '../../src/tools/gen-alerts.js';
import { findBinary } from '../helpers/tools.js';

const jsonnet = findBinary('jsonnet');
if (!jsonnet) {
  const msg = "jsonnet not found: install Debian's jsonnet package (bash .ci/run does)";
  if (process.env.CI === 'true') throw new Error(msg);
  console.warn(`skipping: ${msg}`);
}

function build(expr: string): unknown {
  const out = execFileSync(jsonnet as string, ['-J', PACKAGE_ROOT, '-e', expr], { encoding: 'utf8', cwd: PACKAGE_ROOT, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out) as unknown;
}

/** The jsonnet object literal for a `_config` override written as --set pairs (values as jsonnet literals). */
function mixinWith(config: string): string {
  return `((import "mixin.libsonnet") + { _config+:: ${config} })`;
}

describe.skipIf(!jsonnet)('mixin.libsonnet', () => {
  it('prometheusAlerts equals alerts/cbwatch.rules.yml by default', () => {
    const shipped = parse(readFileSync(join(PACKAGE_ROOT, 'alerts', 'cbwatch.rules.yml'), 'utf8')) as unknown;
    expect(build('(import "mixin.libsonnet").prometheusAlerts')).toEqual(shipped);
  });

  it('grafanaDashboards holds every dashboards/*.json, equal to the file, by default', () => {
    const files = readdirSync(join(PACKAGE_ROOT, 'dashboards')).filter((f) => f.endsWith('.json')).sort();
    const built = build('(import "mixin.libsonnet").grafanaDashboards') as Record<string, unknown>;
    expect(Object.keys(built).sort()).toEqual(files);
    for (const f of files) expect(built[f], f).toEqual(JSON.parse(readFileSync(join(PACKAGE_ROOT, 'dashboards', f), 'utf8')));
  });

  it('gives the same rules as cbwatch rules --set for the same overrides', () => {
    const { groups, defaults } = configurableAlerts();
    const cases: Array<[string, string[]]> = [
      [
        `{ selector: 'job="cbwatch-prod"', exporterJobSelector: 'job="cbwatch-prod"', runbookUrlBase: 'https://wiki.example.com/rb',
           alerts+: { CouchbaseXdcrBacklogHigh+: { threshold: 250000, 'for': '1h', severity: 'critical' },
                      CouchbaseDiskSpaceLow+: { thresholdPercent: 12.5 },
                      CouchbaseRebalanceStuck+: { flatWindow: '1h' },
                      CbwatchCollectorStale+: { thresholdSeconds: 0.25 },
                      CouchbaseUiOverHttpEnabled+: { enabled: false } } }`,
        [
          'selector=job="cbwatch-prod"',
          'exporterJobSelector=job="cbwatch-prod"',
          'runbookUrlBase=https://wiki.example.com/rb',
          'alerts.CouchbaseXdcrBacklogHigh.threshold=250000',
          'alerts.CouchbaseXdcrBacklogHigh.for=1h',
          'alerts.CouchbaseXdcrBacklogHigh.severity=critical',
          'alerts.CouchbaseDiskSpaceLow.thresholdPercent=12.5',
          'alerts.CouchbaseRebalanceStuck.flatWindow=1h',
          'alerts.CbwatchCollectorStale.thresholdSeconds=0.25',
          'alerts.CouchbaseUiOverHttpEnabled.enabled=false',
        ],
      ],
      // every alert of a group off: the group disappears from both
      [
        `{ alerts+: { CouchbaseSearchSlowQueries+: { enabled: false }, CouchbaseSearchActiveQueriesHigh+: { enabled: false }, CouchbaseSearchQueryCancelFailing+: { enabled: false } } }`,
        ['alerts.CouchbaseSearchSlowQueries.enabled=false', 'alerts.CouchbaseSearchActiveQueriesHigh.enabled=false', 'alerts.CouchbaseSearchQueryCancelFailing.enabled=false'],
      ],
    ];
    for (const [config, sets] of cases) {
      const fromMixin = build(`${mixinWith(config)}.prometheusAlerts`);
      const fromCli = JSON.parse(JSON.stringify({ groups: renderConfigured(groups, applyOverrides(defaults, sets)) })) as unknown;
      expect(fromMixin).toEqual(fromCli);
    }
    const one = build(`${mixinWith(cases[0]?.[0] as string)}.prometheusAlerts`) as { groups: Array<{ rules: Array<{ alert?: string; expr: string; annotations?: Record<string, string> }> }> };
    const stale = one.groups.flatMap((g) => g.rules).find((r) => r.alert === 'CbwatchCollectorStale');
    expect(stale?.expr).toBe('(time() - cbwatch_collector_last_success_timestamp_seconds{job="cbwatch-prod"} > 0.25) and cbwatch_collector_success{job="cbwatch-prod"} == 1');
    expect(one.groups.flatMap((g) => g.rules).find((r) => r.alert === 'CbwatchExporterDown')?.expr).toBe('up{job="cbwatch-prod"} == 0 or absent(up{job="cbwatch-prod"})');
  });

  it('applies the simple dashboard settings: data source default, extra tags, time zone', () => {
    const d = build(`${mixinWith(`{ grafanaDatasource: 'Prometheus', grafanaDashboardTags: ['team-db'], grafanaTimezone: 'utc' }`)}.grafanaDashboards["cbwatch-overview.json"]`) as {
      tags: string[];
      timezone: string;
      templating: { list: Array<{ type: string; current?: { value?: string } }> };
    };
    expect(d.tags).toContain('team-db');
    expect(d.tags).toContain('cbwatch');
    expect(d.timezone).toBe('utc');
    expect(d.templating.list.find((v) => v.type === 'datasource')?.current?.value).toBe('Prometheus');
  });
});
