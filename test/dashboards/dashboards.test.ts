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
import { loadParameters } from '../../src/tools/alert-config.js';
import { DS_INPUT, GRAFANA_MIN_VERSION, SCHEMA_VERSION, SHARED_TAG } from '../../src/tools/grafana.js';
import type { Json } from '../../src/tools/grafana.js';

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

  it('are the nine dashboards with stable uids', () => {
    expect(dashboards.map((x) => x.d.uid).sort()).toEqual(
      ['cbwatch-buckets', 'cbwatch-certificates', 'cbwatch-exporter', 'cbwatch-index', 'cbwatch-nodes', 'cbwatch-overview', 'cbwatch-query', 'cbwatch-search', 'cbwatch-xdcr'],
    );
    for (const { path, d } of dashboards) expect(path).toBe(`dashboards/${d.uid}.json`);
    expect(Object.keys(DASHBOARDS)).toHaveLength(9);
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
          // Prometheus' own alerts, the build info, the requests served and the webhook receiver are per exporter, not per cluster.
          if (/\bALERTS\{|cbwatch_build_info|cbwatch_webhook_|cbwatch_http_requests_served_total/.test(t.expr)) continue;
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

/**
 * What Grafana's import does with a dashboard document (pkg/services/dashboardimport: the template
 * evaluator): every `${INPUT}` in a string becomes the value chosen for that input, and the `__inputs`,
 * `__requires` and `__elements` keys are dropped. Written here from that description, not from our code.
 */
function importAs(doc: Json, values: Record<string, string>): Json {
  const walk = (v: Json): Json => {
    if (typeof v === 'string') return v.replace(/\$\{([A-Za-z0-9_]+)\}/g, (m, name: string) => values[name] ?? m);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const out: Record<string, Json> = {};
      for (const [k, x] of Object.entries(v)) if (!['__inputs', '__requires', '__elements'].includes(k)) out[k] = walk(x);
      return out;
    }
    return v;
  };
  return walk(doc);
}

/** Every `datasource` value in a document, with where it sits. */
function datasourceRefs(v: Json, where = '$'): { where: string; ref: Json }[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => datasourceRefs(x, `${where}[${i}]`));
  if (!v || typeof v !== 'object') return [];
  return Object.entries(v).flatMap(([k, x]) => (k === 'datasource' ? [{ where: `${where}.datasource`, ref: x }] : datasourceRefs(x, `${where}.${k}`)));
}

interface ImportDoc {
  __inputs?: { name: string; type: string; pluginId: string }[];
  __requires?: { type: string; id: string; version: string }[];
  templating: { list: { name: string; type: string; current?: { value?: string } }[] };
  panels: { type: string }[];
}

describe('import document (Grafana import dialog)', () => {
  for (const { path } of dashboards) {
    it(`${path}: offers a Prometheus picker and every data source reference resolves to the chosen one`, () => {
      const raw = JSON.parse(files[path] as string) as Json;
      const doc = raw as unknown as ImportDoc;
      expect(doc.__inputs).toEqual([expect.objectContaining({ name: DS_INPUT, type: 'datasource', pluginId: 'prometheus' })]);
      // Every ${X} placeholder that is not a dashboard variable or a Grafana built-in is a declared input.
      const varNames = new Set(doc.templating.list.map((v) => v.name));
      const placeholders = new Set([...(files[path] as string).matchAll(/\$\{([A-Za-z0-9_]+)(?::[^}]*)?\}/g)].map((m) => m[1] as string));
      for (const p of placeholders) if (!varNames.has(p) && !p.startsWith('__')) expect(p, 'undeclared placeholder').toBe(DS_INPUT);

      const chosen = 'prom-uid-chosen-at-import';
      const imported = importAs(raw, { [DS_INPUT]: chosen }) as unknown as ImportDoc & Json;
      expect(JSON.stringify(imported)).not.toContain(DS_INPUT);
      expect(imported.__inputs).toBeUndefined();
      const dsVar = imported.templating.list.find((v) => v.name === 'datasource');
      expect(dsVar?.type).toBe('datasource');
      expect(dsVar?.current?.value).toBe(chosen);
      const refs = datasourceRefs(imported as Json);
      expect(refs.length).toBeGreaterThan(3);
      for (const { where, ref } of refs) {
        const r = ref as { type?: string; uid?: string };
        if (r.type === 'grafana') continue; // the built-in annotations query
        expect(r.type, where).toBe('prometheus');
        // Directly the chosen uid, or the datasource variable whose current value is the chosen uid.
        const resolved = r.uid === '${datasource}' ? dsVar?.current?.value : r.uid;
        expect(resolved, where).toBe(chosen);
      }
    });

    it(`${path}: __requires names Grafana ${GRAFANA_MIN_VERSION}+, Prometheus and every panel type used`, () => {
      const doc = JSON.parse(files[path] as string) as ImportDoc;
      const req = doc.__requires ?? [];
      expect(req).toContainEqual(expect.objectContaining({ type: 'grafana', id: 'grafana', version: GRAFANA_MIN_VERSION }));
      expect(req).toContainEqual(expect.objectContaining({ type: 'datasource', id: 'prometheus' }));
      const used = new Set(doc.panels.map((p) => p.type).filter((t) => t !== 'row'));
      expect(new Set(req.filter((r) => r.type === 'panel').map((r) => r.id))).toEqual(used);
    });
  }
});

interface LinkPanel {
  type: string;
  title: string;
  fieldConfig: { defaults: { links?: { url: string }[]; noValue?: string } };
  targets: { expr: string }[];
}

describe('drill-down links', () => {
  const byUid = new Map(dashboards.map(({ d }) => [d.uid, d]));
  const overview = byUid.get('cbwatch-overview') as unknown as { panels: LinkPanel[] };

  it('the Overview links its tables and top-N panels to a bucket, replication or node, and its service panels to the service dashboards', () => {
    const linked = overview.panels.filter((p) => p.fieldConfig?.defaults.links?.length);
    const targets = new Set(linked.flatMap((p) => (p.fieldConfig.defaults.links ?? []).map((l) => /^\/d\/([\w-]+)\?/.exec(l.url)?.[1])));
    expect(targets).toEqual(new Set(['cbwatch-buckets', 'cbwatch-xdcr', 'cbwatch-nodes', 'cbwatch-query', 'cbwatch-index', 'cbwatch-search']));
    for (const p of overview.panels) {
      if (p.type === 'table' || p.targets?.some((t) => /\btopk\(/.test(t.expr))) expect(p.fieldConfig.defaults.links?.length, p.title).toBeGreaterThan(0);
    }
  });

  for (const { d } of dashboards) {
    it(`${d.uid}: every link names an existing dashboard and its variables, and carries time range and data source`, () => {
      for (const p of d.panels as unknown as LinkPanel[]) {
        for (const l of p.fieldConfig?.defaults.links ?? []) {
          const m = /^\/d\/([\w-]+)\?(.*)$/.exec(l.url);
          expect(m, l.url).not.toBeNull();
          const target = byUid.get((m as RegExpExecArray)[1] as string);
          expect(target, l.url).toBeDefined();
          const params = ((m as RegExpExecArray)[2] as string).split('&');
          expect(params).toContain('${__url_time_range}');
          expect(params).toContain('${datasource:queryparam}');
          const targetVars = new Set(target?.templating.list.map((v) => v.name));
          const exprText = p.targets.map((t) => t.expr).join(' ');
          for (const q of params.filter((x) => x.startsWith('var-'))) {
            const [name, value] = q.slice(4).split('=') as [string, string];
            expect(targetVars.has(name), `${p.title}: ${d.uid} → ${target?.uid} has no variable ${name}`).toBe(true);
            // The value is a label of the clicked series (or a column of the row): it must be in the query's output.
            const label = /(?:labels\.|fields\[")(\w+)/.exec(value)?.[1] as string;
            const kept = /\b(?:sum|max|min|count) by \(([^)]*)\)/.exec(exprText)?.[1];
            if (kept !== undefined) expect(kept.split(',').map((x) => x.trim()), `${p.title}: ${label}`).toContain(label);
          }
        }
      }
    });
  }
});

describe('disabled features show "off", not "No data"', () => {
  const panel = (uid: string, title: string): LinkPanel | undefined =>
    (dashboards.find(({ d }) => d.uid === uid)?.d.panels as unknown as LinkPanel[] | undefined)?.find((p) => p.title === title);
  const cases: [string, string][] = [
    ['cbwatch-buckets', 'Operations per node'],
    ['cbwatch-buckets', 'Memory used per node'],
    ['cbwatch-buckets', 'Active resident ratio per node'],
    ['cbwatch-buckets', 'Disk write queue per node'],
    ['cbwatch-certificates', 'Node-to-node encryption'],
    ['cbwatch-search', 'Cancel policy actions'],
    ['cbwatch-exporter', 'Webhook documents by result'],
    ['cbwatch-exporter', 'Time since the last webhook document'],
  ];
  for (const [uid, title] of cases)
    it(`${uid} / ${title}`, () => {
      expect(panel(uid, title)?.fieldConfig.defaults.noValue).toMatch(/^off\b/);
    });
});

describe('disk space panels follow the alerts', () => {
  // The alerts' defaults (alerts/parameters.yml), read here rather than from the generator.
  const params = loadParameters();
  const low = (params.CouchbaseDiskSpaceLow?.thresholdPercent as number) / 100;
  const critical = (params.CouchbaseDiskSpaceCritical?.thresholdPercent as number) / 100;
  interface StepPanel extends LinkPanel {
    fieldConfig: { defaults: { links?: { url: string }[]; unit?: string; thresholds?: { steps: { color: string; value: number | null }[] } } };
  }
  const freeRatio = /couchbase_cluster_storage_free_bytes\{[^}]*storage="hdd"[^}]*\}\s*\/\s*couchbase_cluster_storage_total_bytes\{[^}]*storage="hdd"/;
  const ratioPanels = dashboards.flatMap(({ d }) =>
    (d.panels as unknown as StepPanel[]).filter((p) => p.targets?.some((t) => freeRatio.test(t.expr))).map((p) => ({ uid: d.uid, p })),
  );

  it('the Overview and the Nodes dashboard show the free share', () => {
    expect(ratioPanels.map(({ uid }) => uid).sort()).toEqual(['cbwatch-nodes', 'cbwatch-overview']);
    expect(low).toBe(0.2);
    expect(critical).toBe(0.1);
  });

  for (const { uid, p } of ratioPanels)
    it(`${uid} / ${p.title}: red under the critical threshold, orange under the low one, in percent`, () => {
      expect(p.fieldConfig.defaults.unit).toBe('percentunit');
      expect(p.fieldConfig.defaults.thresholds?.steps).toEqual([
        { color: 'red', value: null },
        { color: 'orange', value: critical },
        { color: 'green', value: low },
      ]);
    });

  it('the Overview disk stat opens the Nodes dashboard of the clicked cluster', () => {
    const stat = ratioPanels.find(({ uid }) => uid === 'cbwatch-overview')?.p;
    expect(stat?.type).toBe('stat');
    expect(stat?.fieldConfig.defaults.links?.map((l) => l.url)).toEqual([expect.stringMatching(/^\/d\/cbwatch-nodes\?.*var-couchbase_cluster=\$\{__field\.labels\.couchbase_cluster:percentencode\}/)]);
  });

  it('the Nodes dashboard has hdd used, free, total, used by data, and the ram quota used against its total', () => {
    const nodes = dashboards.find(({ d }) => d.uid === 'cbwatch-nodes')?.d as Dashboard;
    const exprs = nodes.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
    for (const f of ['total', 'used', 'free', 'used_by_data']) expect(exprs).toMatch(new RegExp(`couchbase_cluster_storage_${f}_bytes\\{[^}]*storage="hdd"`));
    for (const f of ['quota_used', 'quota_total']) expect(exprs).toMatch(new RegExp(`couchbase_cluster_storage_${f}_bytes\\{[^}]*storage="ram"`));
  });
});

describe('service dashboards (Query, Index, Eventing & Search) and the Overview services row', () => {
  const byUid = new Map(dashboards.map(({ d }) => [d.uid, d]));
  const exprsOf = (uid: string): string => (byUid.get(uid)?.panels ?? []).flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
  // The families of the shared plan for the services (hand-written here, not read from the generator).
  const families: Record<string, string[]> = {
    'cbwatch-query': [
      'couchbase_query_requests_per_second',
      'couchbase_query_errors_per_second',
      'couchbase_query_invalid_requests_per_second',
      'couchbase_query_warnings_per_second',
      'couchbase_query_selects_per_second',
      'couchbase_query_slow_requests_per_second',
      'couchbase_query_request_time_seconds',
      'couchbase_query_service_time_seconds',
      'couchbase_query_results_per_request',
      'couchbase_query_response_bytes_per_request',
      'couchbase_query_active_requests',
      'couchbase_query_queued_requests',
      'couchbase_query_timeouts_per_second',
      'couchbase_query_cancelled_per_second',
      'couchbase_query_prepared_per_second',
      'couchbase_query_memory_bytes',
      'couchbase_query_load',
    ],
    'cbwatch-index': [
      'couchbase_index_state',
      'couchbase_index_build_progress_ratio',
      'couchbase_index_items',
      'couchbase_index_docs_pending',
      'couchbase_index_docs_queued',
      'couchbase_index_resident_ratio',
      'couchbase_index_fragmentation_ratio',
      'couchbase_index_data_size_bytes',
      'couchbase_index_disk_size_bytes',
      'couchbase_index_memory_used_bytes',
      'couchbase_index_scan_latency_seconds',
      'couchbase_index_requests_per_second',
      'couchbase_index_rows_returned_per_second',
      'couchbase_index_cache_hit_ratio',
      'couchbase_index_node_memory_quota_bytes',
      'couchbase_index_node_memory_used_bytes',
      'couchbase_index_node_ram_ratio',
    ],
    'cbwatch-search': [
      'couchbase_search_active_queries',
      'couchbase_search_index_docs',
      'couchbase_search_index_pending_mutations',
      'couchbase_search_index_queries_per_second',
      'couchbase_search_index_query_errors_per_second',
      'couchbase_search_index_query_latency_seconds',
      'couchbase_search_index_disk_size_bytes',
      'couchbase_search_node_memory_bytes',
      'couchbase_eventing_function_status',
      'couchbase_eventing_dcp_backlog',
      'couchbase_eventing_on_update_success_total',
      'couchbase_eventing_on_update_failures_total',
      'couchbase_eventing_on_delete_success_total',
      'couchbase_eventing_on_delete_failures_total',
      'couchbase_eventing_timeouts_total',
    ],
  };

  for (const [uid, names] of Object.entries(families))
    it(`${uid} reads every family of its service`, () => {
      const text = exprsOf(uid);
      expect(names.filter((n) => !new RegExp(`\\b${n}\\b`).test(text))).toEqual([]);
    });

  it('the eventing running totals are read as rates per second', () => {
    const text = exprsOf('cbwatch-search');
    for (const m of text.matchAll(/couchbase_eventing_\w+_total\{[^}]*\}(\[[^\]]*\])?/g)) expect(m[1], m[0]).toBe('[$__rate_interval]');
  });

  it('units follow the family: seconds, bytes, ratios as percentunit, rates per second', () => {
    for (const uid of Object.keys(families)) {
      for (const p of byUid.get(uid)?.panels ?? []) {
        const exprs = (p.targets ?? []).map((t) => t.expr);
        // A quotient (a share) or a count is not the unit of the family it reads.
        if (exprs.some((e) => / \/ |\bcount\(|== 1/.test(e))) continue;
        const names = [...new Set(exprs.flatMap((e) => [...e.matchAll(/\bcouchbase_[a-z0-9_]+\b/g)].map((m) => m[0])))];
        const unit = p.fieldConfig?.defaults.unit;
        if (names.length === 0) continue;
        if (names.every((n) => n.endsWith('_bytes') || n.endsWith('_bytes_per_request'))) expect(unit, p.title).toBe('bytes');
        else if (names.every((n) => n.endsWith('_ratio'))) expect(unit, p.title).toBe('percentunit');
        else if (names.every((n) => n.endsWith('_seconds') && !n.endsWith('_per_second'))) expect(unit, p.title).toBe('s');
        else if (names.every((n) => n.endsWith('_per_second') || n.endsWith('_total'))) expect(['reqps', 'ops', 'short'], p.title).toContain(unit);
      }
    }
  });

  it('the share of slow query requests divides each band by the requests of the same node, never by zero', () => {
    const panel = byUid.get('cbwatch-query')?.panels.find((p) => p.title === 'Share of requests over 250 ms, 500 ms, 1 s and 5 s');
    expect(panel?.fieldConfig?.defaults.unit).toBe('percentunit');
    const exprs = (panel?.targets ?? []).map((t) => t.expr);
    expect(exprs.map((e) => /over="([^"]+)"/.exec(e)?.[1])).toEqual(['0.25', '0.5', '1', '5']);
    for (const e of exprs) {
      expect(e).toMatch(/sum by \(couchbase_cluster, node\) \(couchbase_query_slow_requests_per_second\{[^}]*\}\)\n\/ \(sum by \(couchbase_cluster, node\) \(couchbase_query_requests_per_second\{[^}]*\}\) > 0\)/);
    }
  });

  it('panels of families served from 7.0 (or 7.6) on only say so instead of "No data"', () => {
    const panels = (byUid.get('cbwatch-query')?.panels ?? []) as unknown as LinkPanel[];
    for (const title of ['Timeouts, cancelled and prepared', 'Memory', 'Load']) expect(panels.find((p) => p.title === title)?.fieldConfig.defaults.noValue, title).toMatch(/^absent \(served from Couchbase 7\.[06] on\)$/);
  });

  it('the Overview has a Services row: query requests and errors, indexes not ready, functions not deployed, Search mutations pending, each per cluster and linked to its dashboard', () => {
    const panels = (byUid.get('cbwatch-overview')?.panels ?? []) as unknown as (LinkPanel & { id: number })[];
    const row = panels.findIndex((p) => p.type === 'row' && p.title === 'Services');
    expect(row).toBeGreaterThan(0);
    const next = panels.findIndex((p, i) => i > row && p.type === 'row');
    const inRow = panels.slice(row + 1, next);
    const want: [string, RegExp, string][] = [
      ['Query requests and errors', /couchbase_query_(requests|errors)_per_second/, 'cbwatch-query'],
      ['Indexes not ready', /couchbase_index_state\{[^}]*state!="ready"/, 'cbwatch-index'],
      ['Functions not deployed', /couchbase_eventing_function_status\{[^}]*status!="deployed"/, 'cbwatch-search'],
      ['Search mutations pending', /couchbase_search_index_pending_mutations/, 'cbwatch-search'],
    ];
    expect(inRow.map((p) => p.title)).toEqual(want.map((w) => w[0]));
    for (const [title, re, uid] of want) {
      const p = inRow.find((x) => x.title === title) as LinkPanel;
      for (const t of p.targets) {
        expect(t.expr, title).toMatch(re);
        expect(t.expr, title).toMatch(/^sum by \(couchbase_cluster\) /);
      }
      expect(p.fieldConfig.defaults.links?.map((l) => /^\/d\/([\w-]+)\?/.exec(l.url)?.[1]), title).toEqual([uid]);
    }
  });
});
