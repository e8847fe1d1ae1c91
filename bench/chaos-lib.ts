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
  partial_errors: [{ name: 'partial errors', kind: 'partial_errors', rule: { kind: 'partial_errors' } }],
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
  // The service collectors find the nodes of each service in /pools/default's `services` (shared a poll).
  'GET /pools/default': ['nodes', 'tasks', 'index', 'search_index', 'eventing', 'query', 'analytics', 'processes'],
  'GET /pools/default/nodeServices': ['nodes', 'bucket_stats', 'certificates', 'search', 'backup', 'index', 'eventing', 'search_index'],
  'GET /pools/default/serverGroups': ['nodes'],
  'GET /pools/default/tasks': ['tasks', 'xdcr'],
  // The statistics collectors choose their source by the cluster's compatibility version, read from this list.
  'GET /pools/default/buckets': ['buckets', 'bucket_stats', 'collections', 'index', 'search_index', 'eventing', 'query', 'analytics', 'processes'],
  'GET /pools/default/buckets/:bucket': [],
  'GET /pools/default/buckets/:bucket/nodes': [],
  // Before 7.0 the service collectors read their sections (`@query`, `@index-<bucket>`, …) on these two routes; the
  // matrix runs the simulator's 7.x default, where they read the range API.
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
  // Asked before 7.0 only; the matrix's simulator is 7.x.
  'GET /api/index': [],
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
  'GET /indexStatus': ['index'],
  // Requested only where a node runs eventing (the demo scenario, or the eventingNodes knob).
  'GET /_p/event/api/v1/status': ['eventing'],
  // 7.0+ statistics (the simulator's default profile is 7.x, so `auto` reads them): bucket and XDCR statistics, and
  // the service collectors' one shared request a poll.
  'POST /pools/default/stats/range': ['bucket_stats', 'xdcr', 'index', 'search_index', 'eventing', 'query', 'analytics', 'processes'],
  'GET /pools/default/stats/range/*': [],
  'GET /metrics': [],
  'GET /_node/:node/metrics': [],
  'GET /prometheus_sd_config': [],
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

/** The same loss by collector: `collector=lost` for each collector outside `owners` that lost series. */
export function lostBy(baseline: ReadonlyMap<string, number>, minimum: ReadonlyMap<string, number>, owners: readonly string[]): string {
  return [...baseline]
    .filter(([c]) => !owners.includes(c))
    .map(([c, before]) => [c, before - (minimum.get(c) ?? 0)] as const)
    .filter(([, lost]) => lost > 0)
    .map(([c, lost]) => `${c}=${lost}`)
    .join(' ');
}

/** The rows of a chaos part's `figure | value` table. */
export type Rows = Array<[string, string]>;

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

/** The middle value (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export interface RssGrowth {
  /** Seconds left out at the start (caches, JIT and pools filling up). */
  readonly warmupS: number;
  /** The time spans of the first and last thirds of what follows the warm-up, seconds. */
  readonly early: readonly [number, number];
  readonly late: readonly [number, number];
  /** Median RSS in each third, MB. */
  readonly earlyMB: number;
  readonly lateMB: number;
  readonly growthMB: number;
  /** growthMB relative to earlyMB, percent. */
  readonly growthPct: number;
  /** Growth above both thresholds; undefined when the run is too short to judge (under 3 samples per third). */
  readonly rising: boolean | undefined;
  /** The figures the verdict used, for the report. */
  readonly text: string;
}

/**
 * Whether RSS over a soak is still growing. RSS under a garbage collector is a sawtooth (the 300 s soak: 135–152
 * MB, flat), and a least-squares slope over a few minutes of sawtooth reads a phase of it as a trend (it called
 * 146 → 147 MB "rising, 1.6 MB/min"). So: drop a warm-up (a fifth of the run, at most 60 s), compare the median
 * of the last third of the rest with the median of its first third, and call it rising only when the growth
 * passes both `minMB` and `minPct` — a small process may double a few MB, a big one may wander 10 MB.
 */
export function rssGrowth(points: ReadonlyArray<readonly [number, number]>, opts: { minMB?: number; minPct?: number } = {}): RssGrowth {
  const minMB = opts.minMB ?? 20;
  const minPct = opts.minPct ?? 10;
  const first = points[0]?.[0] ?? 0;
  const last = points[points.length - 1]?.[0] ?? 0;
  const warmupS = Math.min(60, (last - first) / 5);
  const from = first + warmupS;
  const third = (last - from) / 3;
  const early: [number, number] = [from, from + third];
  const late: [number, number] = [last - third, last];
  const within = ([a, b]: readonly [number, number]) => points.filter(([t]) => t >= a && t <= b).map(([, mb]) => mb);
  const e = within(early);
  const l = within(late);
  const earlyMB = median(e);
  const lateMB = median(l);
  const growthMB = lateMB - earlyMB;
  const growthPct = (growthMB / earlyMB) * 100;
  const judged = e.length >= 3 && l.length >= 3;
  const rising = judged ? growthMB > minMB && growthPct > minPct : undefined;
  const span = ([a, b]: readonly [number, number]) => `${fmt(a)}–${fmt(b)} s`;
  const text = judged
    ? `median RSS ${fmt(earlyMB)} MB in ${span(early)} → ${fmt(lateMB)} MB in ${span(late)} (after a ${fmt(warmupS)} s warm-up): ${growthMB >= 0 ? '+' : ''}${fmt(growthMB, 1)} MB, ${growthPct >= 0 ? '+' : ''}${fmt(growthPct, 1)}%; rising means above +${minMB} MB and +${minPct}%`
    : `too short to judge (${e.length} and ${l.length} samples in the first and last thirds after a ${fmt(warmupS)} s warm-up; 3 each needed)`;
  return { warmupS, early, late, earlyMB, lateMB, growthMB, growthPct, rising, text };
}

export function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}
