/**
 * Every PromQL expression cbwatch ships — alert rules and dashboard queries (Grafana variables substituted) —
 * parses with promtool, names only metrics of the catalog, and reads counters only through rate/increase.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { allFamilies, exposedNames } from '../../src/catalog.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { renderDashboards } from '../../src/tools/gen-dashboards.js';
import { yamlText } from '../../src/tools/gen-alerts.js';
import { dashboardExprs } from '../../src/tools/grafana.js';
import type { Json } from '../../src/tools/grafana.js';
import { metricNames, rawCounterRefs, substituteGrafanaVars, variableQueryExpr } from '../../src/tools/promql.js';
import { requireBinary } from '../helpers/tools.js';

/**
 * Series that are not cbwatch's but that its rules and dashboards may read, each with why.
 */
const PROMETHEUS_BUILTINS: Record<string, string> = {
  up: 'set by Prometheus for every scrape target (CbwatchExporterDown)',
  ALERTS: 'set by Prometheus for every pending/firing alert (Overview: firing alerts)',
};

interface Expr {
  readonly source: string;
  readonly expr: string;
}

function ruleExprs(): Expr[] {
  const doc = parse(readFileSync(join(PACKAGE_ROOT, 'alerts', 'cbwatch.rules.yml'), 'utf8')) as { groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => ({ source: `rule ${g.name}/${r.alert ?? r.record ?? '?'}`, expr: r.expr })));
}

function panelExprs(): Expr[] {
  const out: Expr[] = [];
  for (const [path, text] of Object.entries(renderDashboards())) {
    if (!path.endsWith('.json')) continue;
    for (const e of dashboardExprs(JSON.parse(text) as Json)) {
      const raw = e.where.startsWith('variable') ? variableQueryExpr(e.expr) : e.expr;
      out.push({ source: `${path} ${e.where}`, expr: substituteGrafanaVars(raw) });
    }
  }
  return out;
}

const all = [...ruleExprs(), ...panelExprs()];

describe('PromQL expressions', () => {
  it('there are rule and dashboard expressions to check', () => {
    expect(ruleExprs().length).toBeGreaterThanOrEqual(3);
    expect(panelExprs().length).toBeGreaterThan(50);
  });

  it('no Grafana variable is left after substitution', () => {
    const left = all.filter((e) => e.expr.includes('$'));
    expect(left.map((e) => `${e.source}: ${e.expr}`)).toEqual([]);
  });

  it('every metric name is in the metric catalog (unknown names listed)', () => {
    const known = exposedNames();
    const unknown = new Map<string, string[]>();
    for (const e of all)
      for (const n of metricNames(e.expr))
        if (!known.has(n) && !(n in PROMETHEUS_BUILTINS)) unknown.set(n, [...(unknown.get(n) ?? []), e.source]);
    const report = [...unknown].map(([n, where]) => `${n} (used by ${[...new Set(where)].join('; ')})`);
    expect(report, `unknown metric names:\n${report.join('\n')}`).toEqual([]);
  });

  it('counters are read only through rate(), irate(), increase(), resets() or changes()', () => {
    const counters = new Set<string>();
    for (const f of allFamilies()) {
      if (f.type === 'counter') counters.add(f.name);
      if (f.type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) counters.add(f.name + s);
    }
    const bad = all.flatMap((e) => rawCounterRefs(e.expr, (n) => counters.has(n) || n.endsWith('_total')).map((n) => `${e.source}: ${n}`));
    expect(bad).toEqual([]);
  });
});

const promtool = requireBinary('promtool');

describe.skipIf(!promtool)('promtool parses every expression', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-promql-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('as one recording-rule file', () => {
    // One recording rule per expression; the record name carries the index so an error points back here.
    const file = join(dir, 'all.rules.yml');
    writeFileSync(file, yamlText({ groups: [{ name: 'all', rules: all.map((e, i) => ({ record: `cbwatch_check:expr_${i}`, expr: e.expr })) }] }));
    let out = '';
    let code = 0;
    try {
      out = execFileSync(promtool as string, ['check', 'rules', file], { encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      const e = err as { status?: number; stdout?: string; stderr?: string };
      code = e.status ?? 1;
      out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    // Map "expr_<i>" in promtool's messages back to where the expression comes from.
    const explained = out.replace(/cbwatch_check:expr_(\d+)/g, (_m, i: string) => `${all[Number(i)]?.source ?? '?'} [${all[Number(i)]?.expr ?? ''}]`);
    expect(code, explained).toBe(0);
    expect(out).toMatch(/SUCCESS/);
  });
});
