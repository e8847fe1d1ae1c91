/**
 * Lint of every alert in alerts/cbwatch.rules.yml: the names DESIGN.md promises exist, and each alert has a
 * CamelCase name starting Couchbase or Cbwatch, a `for:`, a severity, the three annotations with the right runbook
 * anchor (and the runbook has that heading), reads counters only through rate()/increase(), and has a
 * `promtool test rules` case.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { allFamilies, exposedNames } from '../../src/catalog.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { RUNBOOK_BASE } from '../../src/tools/gen-alerts.js';
import { metricNames, rawCounterRefs } from '../../src/tools/promql.js';

const ALERTS = join(PACKAGE_ROOT, 'alerts');

/** DESIGN.md "Alert names": the public contract. */
const DESIGN_ALERTS = [
  'CbwatchExporterDown',
  'CbwatchCollectorFailing',
  'CouchbaseDown',
  'CouchbaseCertificateExpiringSoon',
  'CouchbaseCertificateExpiryCritical',
  'CouchbaseCertificateExpired',
  'CouchbaseXdcrBacklogHigh',
  'CouchbaseXdcrBacklogGrowing',
  'CouchbaseXdcrReplicationErrors',
  'CouchbaseXdcrRemoteClusterDeleted',
  'CouchbaseAutoFailoverOccurred',
  'CouchbaseAutoFailoverExhausted',
  'CouchbaseNodeUnhealthy',
  'CouchbaseSearchSlowQueries',
  'CouchbaseWeakTlsMinVersion',
];

/** Series Prometheus itself creates (see promql.test.ts for the reasons). */
const PROMETHEUS_SERIES = new Set(['up', 'ALERTS']);

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const combined = parse(readFileSync(join(ALERTS, 'cbwatch.rules.yml'), 'utf8')) as { groups: { name: string; rules: Rule[] }[] };
const alerts = combined.groups.flatMap((g) => g.rules.filter((r): r is Rule & { alert: string } => typeof r.alert === 'string').map((r) => ({ group: g.name, ...r })));
const runbook = readFileSync(join(ALERTS, 'runbook.md'), 'utf8');
const testTexts = existsSync(join(ALERTS, 'tests'))
  ? readdirSync(join(ALERTS, 'tests'))
      .filter((f) => f.endsWith('.yml'))
      .map((f) => readFileSync(join(ALERTS, 'tests', f), 'utf8'))
  : [];

/** Counters and the series of histograms (which are counters too). */
function counterNames(): Set<string> {
  const out = new Set<string>();
  for (const f of allFamilies()) {
    if (f.type === 'counter') out.add(f.name);
    if (f.type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) out.add(f.name + s);
  }
  return out;
}

describe('alert names', () => {
  const names = new Set(alerts.map((a) => a.alert));
  it.each(DESIGN_ALERTS)('%s exists in alerts/cbwatch.rules.yml', (name) => {
    expect(names.has(name), `${name} is missing: its area's fragment alerts/rules/<area>.yml has not landed or lacks it`).toBe(true);
  });
});

describe('alert lint', () => {
  const counters = counterNames();
  const exposed = exposedNames();
  const isCounter = (n: string) => counters.has(n) || n.endsWith('_total');

  it('finds alerts to lint', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(3);
  });

  for (const a of alerts) {
    describe(a.alert, () => {
      it('is CamelCase and starts with Couchbase or Cbwatch', () => {
        expect(a.alert).toMatch(/^(Couchbase|Cbwatch)([A-Z][a-z0-9]*)+$/);
      });
      it('has for:, a severity and the three annotations', () => {
        expect(a.for, 'for:').toMatch(/^\d+[smhd]$/);
        expect(['critical', 'warning', 'info']).toContain(a.labels?.severity);
        expect(a.annotations?.summary, 'summary').toBeTruthy();
        expect(a.annotations?.summary, 'summary is a static sentence').not.toMatch(/\{\{/);
        expect(a.annotations?.description, 'description').toBeTruthy();
        expect(a.annotations?.description, 'description shows the value').toMatch(/\$value/);
        expect(a.annotations?.runbook_url).toBe(`${RUNBOOK_BASE}#${a.alert.toLowerCase()}`);
      });
      it('has its runbook heading', () => {
        expect(runbook).toMatch(new RegExp(`^#{2,4} ${a.alert}\\s*$`, 'm'));
      });
      it('reads counters only through rate/increase', () => {
        expect(rawCounterRefs(a.expr, isCounter), a.expr).toEqual([]);
      });
      it('uses only catalog metric names (or Prometheus built-ins)', () => {
        // Checked in full (with the list of unknown names) by promql.test.ts; here per alert for a precise message.
        const unknown = metricNames(a.expr).filter((n) => !exposed.has(n) && !PROMETHEUS_SERIES.has(n));
        expect(unknown, a.expr).toEqual([]);
      });
      it('has a promtool test case', () => {
        expect(testTexts.some((t) => new RegExp(`alertname:\\s*["']?${a.alert}["']?\\s*$`, 'm').test(t)), `no alerts/tests/*.yml case names ${a.alert}`).toBe(true);
      });
    });
  }
});
