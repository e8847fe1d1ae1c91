/**
 * The Grafana dashboards: up to date with their generator, and on the conventions of STYLE.md — stable uids,
 * the shared tag and cross-links, a datasource variable, chained cluster → bucket variables, $__rate_interval
 * in every rate, a unit and a description on every panel, a sane grid.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { staleFiles } from '../../src/tools/files.js';
import { DASHBOARDS, renderDashboards } from '../../src/tools/gen-dashboards.js';
import { SCHEMA_VERSION, SHARED_TAG } from '../../src/tools/grafana.js';

interface Target {
  expr: string;
  refId: string;
  datasource: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
  fieldConfig?: { defaults: { unit?: string } };
}
interface Variable {
  name: string;
  type: string;
  query: unknown;
  definition?: string;
  datasource?: { uid: string };
}
interface Dashboard {
  uid: string;
  title: string;
  tags: string[];
  schemaVersion: number;
  links: { type: string; tags: string[] }[];
  templating: { list: Variable[] };
  panels: Panel[];
}

const files = renderDashboards();
const dashboards = Object.entries(files)
  .filter(([p]) => p.endsWith('.json'))
  .map(([path, text]) => ({ path, d: JSON.parse(text) as Dashboard }));

describe('generated dashboard files', () => {
  it('are up to date (run npm run generate)', () => {
    const stale = staleFiles(PACKAGE_ROOT, files);
    expect(stale, `stale generated files: ${stale.join(', ')} — run npm run generate`).toEqual([]);
  });

  it('render the same bytes twice', () => {
    expect(renderDashboards()).toEqual(files);
  });

  it('are the six dashboards with stable uids', () => {
    expect(dashboards.map((x) => x.d.uid).sort()).toEqual(
      ['cbwatch-buckets', 'cbwatch-certificates', 'cbwatch-exporter', 'cbwatch-overview', 'cbwatch-search', 'cbwatch-xdcr'],
    );
    for (const { path, d } of dashboards) expect(path).toBe(`dashboards/${d.uid}.json`);
    expect(Object.keys(DASHBOARDS)).toHaveLength(6);
  });

  it('provisioning examples are valid YAML pointing Grafana at the dashboards', () => {
    const ds = parse(files['dashboards/provisioning/datasources/cbwatch-prometheus.yml'] as string) as { apiVersion: number; datasources: { type: string }[] };
    expect(ds.apiVersion).toBe(1);
    expect(ds.datasources[0]?.type).toBe('prometheus');
    const prov = parse(files['dashboards/provisioning/dashboards/cbwatch.yml'] as string) as { providers: { type: string; options: { path: string } }[] };
    expect(prov.providers[0]?.type).toBe('file');
    expect(prov.providers[0]?.options.path).toMatch(/^\//);
  });

  it('checked-in JSON files parse', () => {
    for (const { path } of dashboards) expect(() => JSON.parse(readFileSync(join(PACKAGE_ROOT, path), 'utf8'))).not.toThrow();
  });
});

for (const { path, d } of dashboards) {
  describe(path, () => {
    const vars = new Map(d.templating.list.map((v) => [v.name, v]));
    const panels = d.panels.filter((p) => p.type !== 'row');

    it('carries the shared tag, a dashboards link by that tag and the schema version', () => {
      expect(d.tags).toContain(SHARED_TAG);
      expect(d.links.some((l) => l.type === 'dashboards' && l.tags.includes(SHARED_TAG))).toBe(true);
      expect(d.schemaVersion).toBe(SCHEMA_VERSION);
      expect(d.title).toMatch(/^Couchbase \/ /);
    });

    it('has a datasource variable and a couchbase_cluster variable using it', () => {
      expect(vars.get('datasource')?.type).toBe('datasource');
      expect(vars.get('datasource')?.query).toBe('prometheus');
      const cl = vars.get('couchbase_cluster');
      expect(cl?.type).toBe('query');
      expect(cl?.datasource?.uid).toBe('${datasource}');
      expect(cl?.definition).toMatch(/^label_values\(/);
      expect(d.templating.list[0]?.name).toBe('datasource');
    });

    it('chains query variables to the cluster, and defines every variable its queries use', () => {
      for (const v of d.templating.list)
        if (v.type === 'query' && v.name !== 'couchbase_cluster') expect(v.definition, v.name).toContain('couchbase_cluster=~"$couchbase_cluster"');
      const used = new Set<string>();
      for (const p of panels) for (const t of p.targets ?? []) for (const m of t.expr.matchAll(/\$\{?([A-Za-z_]\w*)/g)) used.add(m[1] as string);
      for (const u of used) if (!u.startsWith('__')) expect(vars.has(u), `$${u} used but not defined`).toBe(true);
    });

    it('every panel has a title, a description, a unit and queries on the datasource variable', () => {
      expect(panels.length).toBeGreaterThan(3);
      for (const p of panels) {
        expect(p.title, `panel ${p.id}`).toBeTruthy();
        expect(p.description, `${p.title}: description`).toBeTruthy();
        expect(p.fieldConfig?.defaults.unit, `${p.title}: unit`).toBeTruthy();
        expect(p.datasource?.uid).toBe('${datasource}');
        expect(p.targets?.length, `${p.title}: targets`).toBeGreaterThan(0);
        for (const t of p.targets ?? []) {
          expect(t.datasource.uid).toBe('${datasource}');
          expect(t.expr.trim()).not.toBe('');
        }
      }
    });

    it('every query filters on the selected clusters (except Prometheus-wide ones)', () => {
      for (const p of panels)
        for (const t of p.targets ?? []) {
          // Prometheus' own alerts, the build info and the webhook receiver are per exporter, not per cluster.
          if (/\bALERTS\{|cbwatch_build_info|cbwatch_webhook_/.test(t.expr)) continue;
          expect(t.expr, p.title).toContain('couchbase_cluster=~"$couchbase_cluster"');
        }
    });

    it('rates and increases use $__rate_interval', () => {
      for (const p of panels)
        for (const t of p.targets ?? [])
          for (const m of t.expr.matchAll(/\b(rate|irate|increase)\([^[]*\[([^\]]+)\]/g)) expect(m[2], `${p.title}: ${t.expr}`).toBe('$__rate_interval');
    });

    it('panel ids are unique and the grid is 24 wide without overlaps', () => {
      const ids = d.panels.map((p) => p.id);
      expect(new Set(ids).size).toBe(ids.length);
      const cells = new Set<string>();
      for (const p of d.panels) {
        const g = p.gridPos;
        expect(g.x + g.w, p.title).toBeLessThanOrEqual(24);
        for (let x = g.x; x < g.x + g.w; x++)
          for (let y = g.y; y < g.y + g.h; y++) {
            const k = `${x},${y}`;
            expect(cells.has(k), `${p.title} overlaps at ${k}`).toBe(false);
            cells.add(k);
          }
      }
    });

    it('refIds are unique per panel', () => {
      for (const p of panels) {
        const refs = (p.targets ?? []).map((t) => t.refId);
        expect(new Set(refs).size).toBe(refs.length);
      }
    });
  });
}
