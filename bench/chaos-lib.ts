/**
 * The pure parts of `npm run chaos` (bench/chaos.ts): the fault matrix, the route → collector oracle,
 * percentiles, the exposition reader and the Markdown it writes. No I/O here, so a fast unit test covers it.
 */
import type { FaultKind, FaultRule } from '../src/simulator/index.js';

/** One way of breaking an answer: a simulator fault rule without its `match`. */
export interface FaultVariant {
  /** Short name used in tables: `status 503`, `hang`… */
  name: string;
  kind: FaultKind;
  rule: Omit<FaultRule, 'match'>;
}

/** The response cap the matrix's exporter runs with; `oversize` answers exceed it by 1 MiB. */
export const MATRIX_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * The variants of each fault kind the matrix runs. A Record over FaultKind: a kind added to the simulator
 * without variants here fails to compile, so the matrix always covers every kind the simulator has.
 */
export const FAULT_VARIANTS: Readonly<Record<FaultKind, readonly FaultVariant[]>> = {
  status: [500, 503, 404].map((status) => ({ name: `status ${status}`, kind: 'status' as const, rule: { kind: 'status' as const, status } })),
  forbidden: [{ name: '403 + permissions', kind: 'forbidden', rule: { kind: 'forbidden', permissions: ['cluster.admin.security!read'] } }],
  reset: [{ name: 'reset', kind: 'reset', rule: { kind: 'reset' } }],
  hang: [{ name: 'hang', kind: 'hang', rule: { kind: 'hang' } }],
  invalid_json: [{ name: 'bad JSON', kind: 'invalid_json', rule: { kind: 'invalid_json' } }],
  truncated: [{ name: 'truncated', kind: 'truncated', rule: { kind: 'truncated' } }],
  oversize: [{ name: 'oversize', kind: 'oversize', rule: { kind: 'oversize', bytes: MATRIX_MAX_RESPONSE_BYTES + 1024 * 1024 } }],
  slow_body: [{ name: 'slow body', kind: 'slow_body', rule: { kind: 'slow_body', bytesPerSecond: 64 } }],
};

export interface SimRouteRef {
  method: string;
  url: string;
}

export const routeKey = (r: SimRouteRef): string => `${r.method} ${r.url}`;

/**
 * Which collectors request each simulator route (the oracle for "series lost in OTHER collectors"): written
 * by hand from DESIGN.md's collector table and the Couchbase REST reference, not read from cbwatch's code.
 * An empty list: no collector requests it in the matrix's configuration (writes, opt-in or legacy routes).
 * Every route of the simulator must be listed (the unit test checks it), so a new route is a decision.
 */
export const ROUTE_OWNERS: Readonly<Record<string, readonly string[]>> = {
  'GET /pools': [],
  'GET /pools/default': ['nodes', 'tasks'],
  'GET /pools/default/nodeServices': ['nodes', 'bucket_stats', 'certificates', 'search', 'backup'],
  'GET /pools/default/serverGroups': ['nodes'],
  'GET /pools/default/tasks': ['tasks', 'xdcr'],
  'GET /pools/default/buckets': ['buckets', 'bucket_stats', 'collections'],
  'GET /pools/default/buckets/:bucket': [],
  'GET /pools/default/buckets/:bucket/nodes': [],
  'GET /pools/default/buckets/:bucket/stats': ['bucket_stats'],
  'GET /pools/default/buckets/:bucket/nodes/:node/stats': ['bucket_stats'],
  'GET /pools/default/trustedCAs': ['certificates'],
  'GET /pools/default/certificate/node/:node': ['certificates'],
  'GET /pools/default/certificate': ['certificates'],
  'GET /settings/security/allowNonLocalCACertUpload': ['certificates', 'security'],
  'GET /settings/security': ['security'],
  'GET /settings/security/:service': ['security'],
  'POST /settings/security': [],
  'POST /settings/security/:service': [],
  'GET /settings/ldap': ['security'],
  'GET /internalSettings': ['security'],
  'GET /api/query': ['search'],
  'GET /api/query/index/:indexName': ['search'],
  'POST /api/query/:queryID/cancel': ['search'],
  'GET /settings/autoFailover': ['autofailover'],
  'POST /settings/autoFailover/resetCount': [],
  'GET /pools/default/buckets/:bucket/scopes': ['collections'],
  'GET /api/v1/cluster/self': [],
  'GET /api/v1/cluster/self/repository/:state': ['backup'],
  'GET /api/v1/cluster/self/repository/active/:repo/taskHistory': ['backup'],
  'GET /pools/default/remoteClusters': ['xdcr'],
  'GET /pools/default/buckets/:bucket/stats/*': ['xdcr'],
  'GET /settings/replications/:id': ['xdcr'],
};

export interface MatrixCell {
  route: SimRouteRef;
  variant: FaultVariant;
  owners: readonly string[];
}

/** Every fault kind (each of its variants) × every route, in route order. */
export function buildMatrix(routes: readonly SimRouteRef[], kinds: readonly FaultKind[]): MatrixCell[] {
  const cells: MatrixCell[] = [];
  for (const route of routes) {
    for (const kind of kinds) {
      for (const variant of FAULT_VARIANTS[kind]) cells.push({ route, variant, owners: ROUTE_OWNERS[routeKey(route)] ?? [] });
    }
  }
  return cells;
}

/** Nearest-rank percentile (p in 0..100) of the values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** Per-collector self-metrics read from an exposition body (cbwatch_collector_success / _series / _last_success). */
export interface CollectorView {
  success: Map<string, number>;
  series: Map<string, number>;
  lastSuccess: Map<string, number>;
}

const SELF = /^(cbwatch_collector_success|cbwatch_collector_series|cbwatch_collector_last_success_timestamp_seconds)\{([^}]*)\} (\S+)$/;

export function readCollectors(body: string): CollectorView {
  const view: CollectorView = { success: new Map(), series: new Map(), lastSuccess: new Map() };
  for (const line of body.split('\n')) {
    const m = SELF.exec(line);
    if (!m) continue;
    const collector = /collector="([^"]*)"/.exec(m[2] as string)?.[1];
    if (collector === undefined) continue;
    const v = Number(m[3]);
    if (m[1] === 'cbwatch_collector_success') view.success.set(collector, v);
    else if (m[1] === 'cbwatch_collector_series') view.series.set(collector, v);
    else view.lastSuccess.set(collector, v);
  }
  return view;
}

/** Sum of a counter over the series whose labels contain every fragment. */
export function sumSeries(body: string, name: string, ...fragments: string[]): number {
  let sum = 0;
  for (const line of body.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (fragments.every((f) => line.includes(f))) sum += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return sum;
}

/** Series the collectors outside `owners` lost against the baseline (never negative per collector). */
export function seriesLostOutside(baseline: ReadonlyMap<string, number>, minimum: ReadonlyMap<string, number>, owners: readonly string[]): number {
  let lost = 0;
  for (const [collector, before] of baseline) {
    if (owners.includes(collector)) continue;
    const low = minimum.get(collector) ?? 0;
    lost += Math.max(0, before - low);
  }
  return lost;
}

/** A Markdown table; cells have `|` escaped and newlines flattened. */
export function renderTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const lines = [`| ${header.map(cell).join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const r of rows) lines.push(`| ${header.map((_, i) => cell(r[i] ?? '')).join(' | ')} |`);
  return lines.join('\n');
}

/**
 * Replace the `## <title>` section of a Markdown document (up to the next `## ` heading or the end) with
 * `body`, or append it; every other section stays byte for byte.
 */
export function replaceSection(doc: string, title: string, body: string): string {
  const heading = `## ${title}`;
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => l.trimEnd() === heading);
  const section = `${heading}\n\n${body.trim()}\n`;
  if (start < 0) return `${doc.trimEnd()}\n\n${section}`;
  let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  if (end < 0) end = lines.length;
  const before = lines.slice(0, start).join('\n');
  const after = lines.slice(end).join('\n');
  return `${before}${before ? '\n' : ''}${section}${after ? `\n${after}` : ''}`;
}

/** Least-squares slope of y over x (per unit of x); NaN with fewer than two points. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  if (points.length < 2) return NaN;
  const n = points.length;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

export function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}
