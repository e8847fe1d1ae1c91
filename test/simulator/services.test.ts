/**
 * The simulator's service statistics (query, index, Search, eventing, analytics, processes, disks) on every
 * profile: the legacy service sections, per node and cluster-wide, and the 7.0+ range API and native /metrics.
 * Expected values are worked out by hand from the upstream definitions, with the model's values pinned by the
 * `serviceStatValues` knob where a formula is checked:
 * - routes and 404s: ns_server@7.6.2:src/menelaus_stats.erl handle_stats_section/3, handle_stats_section_for_node/4
 *   (a node outside section_nodes/1 is not found), check_bucket/2 and section_bucket/1 (an unknown `@…` id is a
 *   bucket name: `@system-processes` is not found);
 * - sums over nodes: merge_all_samples_normally; computed stats after the merge: computed_stats_lazy_proplist/1
 *   (`@query` request_time × 1e-9 / requests; `@index-<b>` total_scan_duration / num_rows_returned, misses × 100 /
 *   (hits + misses), recs_in_mem × 100 / (in_mem + on_disk), (log − data) × 100 / log; `@fts-<b>`
 *   total_request_time × 1e-6 / total_queries; a zero divisor gives 0);
 * - eventing processed_count / failed_count: ns_server@7.6.2:src/stat_names_mappings.erl (the eventing clauses);
 *   deployed functions only: eventing@7.6.3 service_manager/http_handlers.go highCardStats;
 * - node RAM percentages: ns_server@6.6.5:src/service_index.erl compute_index_ram_usage_stats;
 * - native names and labels: the 8.0 metrics metadata (test/fixtures/couchbase/native/) and, for sys_disk_usage_ratio
 *   (added 7.6.0) and sysproc_*, ns_server@7.6.2:etc/metrics_metadata.json.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { SimOptions, Simulator } from '../../src/simulator/index.js';
import { fixture } from '../../src/simulator/fixtures.js';

const AUTH = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };
/** A whole multiple of 60 s: envelope samples and scrapes line up on it. */
const T0 = 1_700_000_040_000;
const CB1 = 'cb1.cbsim.local:8091';
const CB2 = 'cb2.cbsim.local:8091';
const CB3 = 'cb3.cbsim.local:8091';
const MIB = 1024 * 1024;

let sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

function sim(opts: SimOptions = {}, at = T0): { s: Simulator; clock: { now: number } } {
  const clock = { now: at };
  const s = createSimulator({ clock: () => clock.now, ...opts });
  sims.push(s);
  return { s, clock };
}

async function get(s: Simulator, url: string): Promise<{ status: number; body: string }> {
  const r = await s.app.inject({ method: 'GET', url, headers: AUTH });
  return { status: r.statusCode, body: r.body };
}

type Samples = Record<string, number[]>;

async function samples(s: Simulator, url: string): Promise<Samples> {
  const r = await get(s, url);
  expect(r.status, url).toBe(200);
  return (JSON.parse(r.body) as { op: { samples: Samples } }).op.samples;
}

/** The newest sample of every key. */
async function last(s: Simulator, url: string): Promise<Record<string, number>> {
  const sm = await samples(s, url);
  return Object.fromEntries(Object.entries(sm).map(([k, v]) => [k, v[v.length - 1] as number]));
}

interface RangeAnswer {
  data: Array<{ metric: Record<string, unknown> & { nodes: string[] }; values: Array<[number, string]> }>;
  errors: Array<{ node: string; error: string }>;
}

async function range(s: Simulator, queries: unknown[]): Promise<RangeAnswer[]> {
  const r = await s.app.inject({ method: 'POST', url: '/pools/default/stats/range', headers: { ...AUTH, 'content-type': 'application/json' }, payload: JSON.stringify(queries) });
  expect(r.statusCode, r.body).toBe(200);
  return JSON.parse(r.body) as RangeAnswer[];
}

/** Names (with labels) of the node's native exposition. */
async function exposition(s: Simulator, node: string): Promise<string[]> {
  const r = await get(s, `/_node/${node}/metrics`);
  expect(r.status).toBe(200);
  return r.body.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
}

/** Requests over 5 s as a share of all requests, in one sample of @query. */
const slowShare = (v: Record<string, number>): number => (v.query_requests_5000ms as number) / (v.query_requests as number);
const mean = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;
const section = (id: string, node?: string): string => `/pools/default/buckets/${encodeURIComponent(id)}${node ? `/nodes/${encodeURIComponent(node)}` : ''}/stats`;
const byNode = (values: Record<string, number>) => (_t: number, node: string) => values[node] ?? 0;

describe('legacy service sections: routes', () => {
  for (const version of ['6.6.5', '7.2.4', '7.6.5', '8.0.0']) {
    it(`${version}: per-node answers carry the hostname; a node without the service, an unknown node or bucket, and @system-processes answer 404`, async () => {
      const { s } = sim({ version });
      // Default cluster: cb1 kv, n1ql, index, fts, backup; cb2 kv, fts; cb3 kv, index, n1ql.
      const q = await get(s, section('@query', CB3));
      expect(q.status).toBe(200);
      expect((JSON.parse(q.body) as { hostname: string }).hostname).toBe(CB3);
      expect((await get(s, section('@query', CB2))).status).toBe(404);
      expect((await get(s, section('@fts', CB3))).status).toBe(404);
      expect((await get(s, section('@index', CB2))).status).toBe(404);
      expect((await get(s, section('@query', 'cb9.cbsim.local:8091'))).status).toBe(404);
      expect((await get(s, section('@index-no-such-bucket'))).status).toBe(404);
      expect((await get(s, section('@system-processes'))).status).toBe(404);
      expect((await get(s, section('@system-processes', CB1))).status).toBe(404);
      // No eventing node in the default cluster: the section answers, with no statistic; per node 404.
      expect(Object.keys(await samples(s, section('@eventing')))).toEqual(['timestamp']);
      expect((await get(s, section('@eventing', CB1))).status).toBe(404);
    });
  }

  it('the envelope of the bucket stats: 60 one-second samples at zoom=minute, not persistent; haveTStamp keeps newer ones', async () => {
    const { s } = sim();
    const body = JSON.parse((await get(s, section('@query'))).body) as { op: { samples: Samples; samplesCount: number; isPersistent: boolean; lastTStamp: number; interval: number } };
    expect(body.op).toMatchObject({ samplesCount: 60, isPersistent: false, lastTStamp: T0, interval: 1000 });
    expect(body.op.samples.timestamp).toHaveLength(60);
    expect(body.op.samples.timestamp?.[0]).toBe(T0 - 59_000);
    const newer = await samples(s, `${section('@query')}?haveTStamp=${T0 - 3000}`);
    expect(newer.timestamp).toEqual([T0 - 2000, T0 - 1000, T0]);
  });
});

describe('legacy service sections: nodes and items that come and go', () => {
  it('a node that is down is left out of the sum and answers no statistic; a failed-over one is no section node (404) and has no native series', async () => {
    const { s } = sim({ version: '7.6.5', knobs: { serviceStatValues: { query_requests: byNode({ [CB1]: 4, [CB3]: 6 }) }, nodeFaults: { [CB3]: { down: true } } } });
    expect((await last(s, section('@query'))).query_requests).toBe(4);
    expect(Object.keys(await samples(s, section('@query', CB3)))).toEqual(['timestamp']);
    s.ctx.options.knobs.nodeFaults = { [CB3]: { failedOver: true } };
    expect((await get(s, section('@query', CB3))).status).toBe(404);
    expect((await last(s, section('@query'))).query_requests).toBe(4);
    expect((await exposition(s, CB3)).some((l) => /^(n1ql|index)_/.test(l))).toBe(false);
  });

  it('a dropped index and an undeployed function take their keys and series with them', async () => {
    const { s } = sim({ version: '8.0.0', knobs: { eventingNodes: 1 } });
    expect(await last(s, section('@index-travel-sample'))).toHaveProperty('index/#primary/items_count');
    expect((await exposition(s, CB1)).some((l) => l.includes('index="#primary"'))).toBe(true);
    s.ctx.options.knobs.indexesDropped = ['#primary'];
    s.ctx.options.knobs.eventingStatuses = { enrich_orders: 'undeployed' };
    expect(Object.keys(await last(s, section('@index-travel-sample'))).some((k) => k.startsWith('index/#primary/'))).toBe(false);
    expect(Object.keys(await last(s, section('@eventing'))).some((k) => k.startsWith('eventing/enrich_orders/'))).toBe(false);
    const lines = await exposition(s, CB1);
    expect(lines.some((l) => l.includes('index="#primary"'))).toBe(false);
    expect(lines.some((l) => l.includes('functionName="enrich_orders"'))).toBe(false);
    expect(lines.some((l) => l.includes('functionName="audit_log"'))).toBe(true);
  });
});

describe('legacy service sections: values', () => {
  it('@query: counters per second summed over the nodes; the mean request time is computed from the sums', async () => {
    const { s } = sim({
      version: '6.6.5',
      knobs: {
        serviceStatValues: {
          query_requests: byNode({ [CB1]: 4, [CB3]: 6 }),
          query_request_time: byNode({ [CB1]: 2e9, [CB3]: 9e9 }),
          query_service_time: byNode({ [CB1]: 1e9, [CB3]: 3e9 }),
          query_result_size: byNode({ [CB1]: 4000, [CB3]: 6000 }),
          query_result_count: byNode({ [CB1]: 40, [CB3]: 30 }),
        },
      },
    });
    const one = await last(s, section('@query', CB1));
    // 2e9 ns of requests a second over 4 requests a second: 0.5 s each.
    expect(one.query_avg_req_time).toBeCloseTo(0.5, 12);
    expect(one.query_avg_svc_time).toBeCloseTo(0.25, 12);
    expect(one.query_avg_response_size).toBe(1000);
    expect(one.query_avg_result_count).toBe(10);
    const three = await last(s, section('@query', CB3));
    expect(three.query_avg_req_time).toBeCloseTo(1.5, 12);
    expect(three.query_avg_result_count).toBe(5);
    const all = await last(s, section('@query'));
    expect(all.query_requests).toBe(10);
    expect(all.query_request_time).toBe(11e9);
    // (2 + 9) e9 ns / (4 + 6) requests = 1.1 s, not the mean of 0.5 and 1.5.
    expect(all.query_avg_req_time).toBeCloseTo(1.1, 12);
    expect(all.query_avg_svc_time).toBeCloseTo(0.4, 12);
    expect(all.query_avg_response_size).toBe(1000);
    expect(all.query_avg_result_count).toBe(7);
    // The 7.x-only counters have no legacy name in @query.
    for (const k of ['query_timeouts', 'query_cancelled', 'query_prepared', 'query_load', 'query_node_memory']) expect(all).not.toHaveProperty(k);
  });

  it('@query: no request, no division: the computed means are 0 (badarith)', async () => {
    const { s } = sim({ knobs: { serviceStatValues: { query_requests: () => 0, query_request_time: () => 0 } } });
    const all = await last(s, section('@query'));
    expect(all.query_requests).toBe(0);
    expect(all.query_avg_req_time).toBe(0);
    expect(all.query_avg_result_count).toBe(0);
  });

  it('@index: node memory stats and each node\'s RAM percentage, which the cluster-wide answer sums', async () => {
    const { s } = sim({ knobs: { serviceStatValues: { index_memory_used: byNode({ [CB1]: 256 * MIB, [CB3]: 512 * MIB }) } } });
    expect(await last(s, section('@index', CB1))).toMatchObject({ index_memory_quota: 1024 * MIB, index_memory_used: 256 * MIB, index_ram_percent: 25, index_remaining_ram: 768 * MIB });
    expect(await last(s, section('@index', CB3))).toMatchObject({ index_ram_percent: 50, index_remaining_ram: 512 * MIB });
    // Summed: 2 GiB of quota, 768 MiB used, and 25 + 50 = 75 "percent" (the per-node route is the right one).
    expect(await last(s, section('@index'))).toMatchObject({ index_memory_quota: 2048 * MIB, index_memory_used: 768 * MIB, index_ram_percent: 75, index_remaining_ram: 1280 * MIB });
  });

  it('@index-<bucket>: per-index computed stats from the merged parts; a replica under its own name; 0 for an unbuilt index', async () => {
    const p = 'index/def_type/';
    const { s } = sim({
      knobs: {
        serviceStatValues: {
          [`${p}total_scan_duration`]: () => 3e6,
          [`${p}num_rows_returned`]: () => 60,
          [`${p}cache_hits`]: () => 90,
          [`${p}cache_misses`]: () => 10,
          [`${p}recs_in_mem`]: () => 750,
          [`${p}recs_on_disk`]: () => 250,
          [`${p}data_size_on_disk`]: () => 600,
          [`${p}log_space_on_disk`]: () => 1000,
          [`${p}raw_data_size`]: () => 1200,
          [`${p}items_count`]: () => 100,
          [`${p}num_docs_pending`]: () => 7,
          [`${p}num_docs_queued`]: () => 3,
          'index/def_type (replica 1)/data_size_on_disk': () => 900,
          'index/def_type (replica 1)/log_space_on_disk': () => 500,
        },
      },
    });
    const all = await last(s, section('@index-travel-sample'));
    expect(all[`${p}avg_scan_latency`]).toBe(50_000); // 3e6 ns / 60 rows
    expect(all[`${p}cache_miss_ratio`]).toBe(10); // 10 × 100 / (90 + 10)
    expect(all[`${p}index_resident_percent`]).toBe(75); // 750 × 100 / (750 + 250)
    expect(all[`${p}index_frag_percent`]).toBe(40); // (1000 − 600) × 100 / 1000
    expect(all[`${p}avg_item_size`]).toBe(12); // 1200 / 100
    expect(all[`${p}num_docs_pending+queued`]).toBe(10);
    // The replica on cb3 is its own key; its log smaller than its data: 0.
    expect(all['index/def_type (replica 1)/index_frag_percent']).toBe(0);
    // def_type lives on cb1, its replica on cb3.
    const one = await last(s, section('@index-travel-sample', CB1));
    expect(one).toHaveProperty(`${p}items_count`);
    expect(one).not.toHaveProperty('index/def_type (replica 1)/items_count');
    // idx_deferred is Created (never built): no scan, no record; every ratio's divisor is 0.
    for (const k of ['avg_scan_latency', 'cache_miss_ratio', 'index_resident_percent', 'avg_item_size']) expect(all[`index/idx_deferred/${k}`], k).toBe(0);
    // Another bucket exists but holds no index: timestamps only.
    expect(Object.keys(await samples(s, section('@index-beer-sample')))).toEqual(['timestamp']);
  });

  it('@index-<bucket> 7.x: a partitioned index is one key per node and the cluster-wide answer sums its partitions; bucket totals sum the indexes', async () => {
    const { s } = sim({ version: '7.6.5' });
    const one = await last(s, section('@index-travel-sample', CB1));
    const three = await last(s, section('@index-travel-sample', CB3));
    const all = await last(s, section('@index-travel-sample'));
    for (const stat of ['items_count', 'memory_used', 'num_requests', 'disk_size']) {
      expect(all[`index/idx_city/${stat}`], stat).toBeCloseTo((one[`index/idx_city/${stat}`] as number) + (three[`index/idx_city/${stat}`] as number), 6);
      const indexes = Object.keys(all).filter((k) => k.endsWith(`/${stat}`) && k.split('/').length === 3);
      expect(all[`index/${stat}`], stat).toBeCloseTo(indexes.reduce((a, k) => a + (all[k] as number), 0), 6);
    }
  });

  it('@fts-<bucket>: avg_queries_latency in ms from total_request_time (ns) and total_queries; 0 without a query', async () => {
    const { s } = sim({
      knobs: { serviceStatValues: { 'fts/travel-hotels/total_request_time': () => 36e6, 'fts/travel-hotels/total_queries': () => 3, 'fts/travel-landmarks/total_queries': () => 0 } },
    });
    // cb1 and cb2 run Search: 72e6 ns over 6 queries = 12 ms.
    const all = await last(s, section('@fts-travel-sample'));
    expect(all['fts/travel-hotels/avg_queries_latency']).toBeCloseTo(12, 12);
    expect(all['fts/travel-landmarks/avg_queries_latency']).toBe(0);
    expect(all['fts/travel-hotels/total_queries']).toBe(6);
    expect(all).not.toHaveProperty('fts/beer-fts/doc_count');
    expect(await last(s, section('@fts-beer-sample'))).toHaveProperty('fts/beer-fts/doc_count');
    expect(await last(s, section('@fts', CB2))).toHaveProperty('fts_num_bytes_used_ram');
  });

  const eventingValues = (prefix: string): Record<string, () => number> => ({
    [`${prefix}on_update_success`]: () => 100,
    [`${prefix}on_delete_success`]: () => 20,
    [`${prefix}timer_callback_success`]: () => 3,
    [`${prefix}on_update_failure`]: () => 5,
    [`${prefix}on_delete_failure`]: () => 2,
    [`${prefix}timeout_count`]: () => 1,
    [`${prefix}bucket_op_exception_count`]: () => 4,
    [`${prefix}n1ql_op_exception_count`]: () => 3,
    [`${prefix}timer_callback_failure`]: () => 1,
  });

  it('@eventing 7.x: running totals per function; processed_count and failed_count; a paused function has no statistic', async () => {
    const { s } = sim({ version: '7.6.5', knobs: { eventingNodes: 1, eventingStatuses: { audit_log: 'paused' }, serviceStatValues: eventingValues('eventing/enrich_orders/') } });
    const all = await last(s, section('@eventing'));
    expect(all['eventing/enrich_orders/on_update_success']).toBe(100);
    // 100 + 20 + 3 timer callbacks
    expect(all['eventing/enrich_orders/processed_count']).toBe(123);
    // 5 + 2 + 1 + 4 + 3 + 0 checkpoint failures + 1 timer callback failure
    expect(all['eventing/enrich_orders/failed_count']).toBe(16);
    expect(Object.keys(all).some((k) => k.startsWith('eventing/audit_log/'))).toBe(false);
    expect(Object.keys(all).some((k) => k.startsWith('eventing/cleanup_sessions/'))).toBe(false);
    // Cluster totals over the functions (one deployed): the same.
    expect(all['eventing/processed_count']).toBe(123);
    const native = await range(s, [{ metric: [{ label: 'name', value: 'eventing_on_update_success' }], start: T0 / 1000, end: T0 / 1000, nodes: [CB1] }]);
    expect(native[0]?.data.map((d) => [d.metric.functionName, d.values[0]?.[1]])).toEqual([['enrich_orders', '100']]);
  });

  it('@eventing 6.6.5: no timer callback stats; the timer creation failures count in failed_count', async () => {
    const { s } = sim({ version: '6.6.5', knobs: { eventingNodes: 1, serviceStatValues: { ...eventingValues('eventing/enrich_orders/'), 'eventing/enrich_orders/doc_timer_create_failure': () => 2 } } });
    const all = await last(s, section('@eventing'));
    expect(all['eventing/enrich_orders/processed_count']).toBe(120);
    expect(all['eventing/enrich_orders/failed_count']).toBe(17);
    expect(all).not.toHaveProperty('eventing/enrich_orders/timer_callback_success');
    // audit_log is deployed outside the demo: its own keys.
    expect(all).toHaveProperty('eventing/audit_log/dcp_backlog');
  });

  it('@cbas: analytics nodes by knob, advertised by nodeServices and /pools/default; per-second gc and io', async () => {
    const { s } = sim({ knobs: { analyticsNodes: 1, serviceStatValues: { cbas_gc_time: () => 250 } } });
    const pools = JSON.parse((await get(s, '/pools/default')).body) as { nodes: Array<{ hostname: string; services: string[] }> };
    expect(pools.nodes.find((n) => n.hostname === CB1)?.services).toContain('cbas');
    const ns = JSON.parse((await get(s, '/pools/default/nodeServices')).body) as { nodesExt: Array<{ services: Record<string, number> }> };
    expect(ns.nodesExt[1]?.services).not.toHaveProperty('cbas');
    expect(ns.nodesExt[2]?.services).not.toHaveProperty('cbasSSL');
    const all = await last(s, section('@cbas'));
    expect(all.cbas_gc_time).toBe(250);
    for (const k of ['cbas_heap_used', 'cbas_disk_used', 'cbas_thread_count', 'cbas_system_load_average', 'cbas_gc_count', 'cbas_io_reads', 'cbas_io_writes']) expect(all, k).toHaveProperty(k);
    expect((await get(s, section('@cbas', CB2))).status).toBe(404);
  });
});

/**
 * How 7.x answers a legacy key from native series (ns_server@7.6.2:src/stat_names_mappings.erl
 * pre_70_stat_to_prom_query and the counter lists get_counters/1; the analytics renames of :142-194): the native
 * name, the item label, and whether it is asked as rate() (a counter) or as it is.
 */
const QUERY_COUNTERS = ['requests', 'errors', 'invalid_requests', 'warnings', 'selects', 'requests_250ms', 'requests_500ms', 'requests_1000ms', 'requests_5000ms', 'result_count', 'result_size', 'request_time', 'service_time'];
const INDEX_COUNTERS = ['num_requests', 'num_rows_returned', 'num_docs_indexed', 'scan_bytes_read', 'total_scan_duration', 'cache_misses', 'cache_hits'];
const FTS_COUNTERS = ['total_bytes_indexed', 'total_compaction_written_bytes', 'total_queries', 'total_queries_slow', 'total_queries_timeout', 'total_queries_error', 'total_bytes_query_results', 'total_term_searchers', 'total_request_time'];
const CBAS: Readonly<Record<string, [string, boolean]>> = {
  cbas_disk_used: ['cbas_disk_used_bytes_total', false],
  cbas_heap_used: ['cbas_heap_memory_used_bytes', false],
  cbas_system_load_average: ['cbas_system_load_average', false],
  cbas_thread_count: ['cbas_thread_count', false],
  cbas_gc_count: ['cbas_gc_count_total', true],
  cbas_gc_time: ['cbas_gc_time_milliseconds_total', true],
  cbas_io_reads: ['cbas_io_reads_total', true],
  cbas_io_writes: ['cbas_io_writes_total', true],
};

/** Keys the section computes (menelaus_stats.erl computed_stats_lazy_proplist/1, service_index.erl's disk overhead). */
const COMPUTED = /^(query_avg_.*|index\/.+\/(avg_item_size|avg_scan_latency|num_docs_pending\+queued|cache_miss_ratio|index_frag_percent|index_resident_percent|disk_overhead_estimate)|fts\/.+\/avg_queries_latency|eventing\/.+\/(processed|failed)_count)$/;

function nativeOf(key: string): { name: string; item?: [string, string]; rate: boolean } | undefined {
  if (COMPUTED.test(key)) return undefined;
  let m = /^query_(.+)$/.exec(key);
  if (m) return { name: `n1ql_${m[1]}`, rate: QUERY_COUNTERS.includes(m[1] as string) };
  m = /^index\/(.+)\/([^/]+)$/.exec(key);
  if (m) return { name: `index_${m[2]}`, item: ['index', m[1] as string], rate: INDEX_COUNTERS.includes(m[2] as string) };
  m = /^fts\/(.+)\/([^/]+)$/.exec(key);
  if (m) return { name: `fts_${m[2]}`, item: ['index', m[1] as string], rate: FTS_COUNTERS.includes(m[2] as string) };
  m = /^eventing\/(.+)\/([^/]+)$/.exec(key);
  if (m) return { name: `eventing_${m[2]}`, item: ['functionName', m[1] as string], rate: false };
  if (key === 'index_memory_quota') return { name: 'index_memory_quota', rate: false };
  if (key === 'index_memory_used') return { name: 'index_memory_used_total', rate: false };
  if (key.startsWith('fts_')) return { name: key, rate: false };
  const c = CBAS[key];
  return c ? { name: c[0], rate: c[1] } : undefined;
}

describe('7.x: every legacy key of a node\'s section is its native series as stat_names_mappings.erl asks it', () => {
  it.each(['7.2.4', '7.6.5', '8.0.0'])('%s: counters: rate over 1m at a whole minute = the mean of the minute\'s samples; gauges and running totals: the same value', async (version) => {
    const { s } = sim({ version, knobs: { eventingNodes: 1, analyticsNodes: 1 } });
    const t = T0 / 1000;
    const sections: Array<[string, string]> = [
      ['@query', CB1], ['@query', CB3], ['@index', CB1], ['@index', CB3], ['@index-travel-sample', CB1], ['@index-travel-sample', CB3],
      ['@fts', CB1], ['@fts', CB2], ['@fts-travel-sample', CB1], ['@fts-travel-sample', CB2], ['@fts-beer-sample', CB2], ['@eventing', CB1], ['@cbas', CB1],
    ];
    let checked = 0;
    for (const [id, node] of sections) {
      const env = await samples(s, section(id, node));
      const keys = Object.keys(env).filter((k) => k !== 'timestamp' && nativeOf(k) !== undefined);
      const asks = keys.map((k) => nativeOf(k) as { name: string; item?: [string, string]; rate: boolean });
      const answers = await range(
        s,
        asks.map((a) => ({
          metric: [{ label: 'name', value: a.name }, ...(a.item ? [{ label: a.item[0], value: a.item[1] }] : [])],
          ...(a.rate ? { applyFunctions: ['rate'], timeWindow: '1m' } : {}),
          start: t,
          end: t,
          nodes: [node],
        })),
      );
      keys.forEach((k, i) => {
        const a = answers[i] as RangeAnswer;
        const series = (env[k] as number[]).map(Number);
        const want = asks[i]?.rate ? mean(series) : (series[series.length - 1] as number);
        expect(a.data, `${id} ${node} ${k}`).toHaveLength(1);
        const got = Number(a.data[0]?.values[0]?.[1]);
        expect(Math.abs(got - want), `${id} ${node} ${k}: ${got} vs ${want}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want)));
        checked++;
      });
    }
    // Every section has keys, so every mapping above is exercised.
    expect(checked).toBeGreaterThan(250);
  });
});

describe('native service statistics (7.0+)', () => {
  it('a counter through the range API: rate over a minute = the mean of the section\'s 60 samples; regex names and node lists', async () => {
    const { s } = sim({ version: '7.6.5' });
    const t = T0 / 1000;
    const [q, ix] = await range(s, [
      { metric: [{ label: 'name', value: 'n1ql_requests' }], applyFunctions: ['rate'], timeWindow: '1m', start: t, end: t, nodes: [CB1] },
      { metric: [{ label: 'name', value: 'index_(num_requests|num_rows_returned)', operator: '=~' }, { label: 'index', value: 'def_type' }], applyFunctions: ['rate'], timeWindow: '1m', start: t, end: t, nodes: [CB1, CB3] },
    ]);
    const env = await samples(s, section('@query', CB1));
    expect(q?.data).toHaveLength(1);
    expect(Number(q?.data[0]?.values[0]?.[1])).toBeCloseTo(mean(env.query_requests as number[]), 6);
    // def_type lives on cb1 only (its replica on cb3 has its own name): two series of cb1.
    expect(ix?.data.map((d) => [d.metric.name, d.metric.nodes, d.metric.bucket, d.metric.scope, d.metric.collection, d.metric.instance]).sort()).toEqual([
      ['index_num_requests', [CB1], 'travel-sample', '_default', '_default', 'index'],
      ['index_num_rows_returned', [CB1], 'travel-sample', '_default', '_default', 'index'],
    ]);
    const envIx = await samples(s, section('@index-travel-sample', CB1));
    const rows = ix?.data.find((d) => d.metric.name === 'index_num_rows_returned');
    expect(Number(rows?.values[0]?.[1])).toBeCloseTo(mean(envIx['index/def_type/num_rows_returned'] as number[]), 6);
  });

  it('a gauge through /metrics is the section\'s value at the same second, in the native labels', async () => {
    const { s } = sim({ version: '8.0.0', knobs: { serviceStatValues: { query_queued_requests: () => 17, 'fts/travel-hotels/doc_count': byNode({ [CB1]: 111, [CB2]: 222 }) } } });
    const lines = await exposition(s, CB1);
    expect(lines).toContain('n1ql_queued_requests 17');
    expect(lines).toContain('fts_doc_count{bucket="travel-sample",scope="_default",collection="_default",index="travel-hotels"} 111');
    expect(await exposition(s, CB2)).toContain('fts_doc_count{bucket="travel-sample",scope="_default",collection="_default",index="travel-hotels"} 222');
    // cb2 runs no query or index service: none of their series.
    expect((await exposition(s, CB2)).some((l) => /^(n1ql|index)_/.test(l))).toBe(false);
  });

  it('GET /pools/default/stats/range/n1ql_requests/irate: one series per query node with the labels of the documented answer', async () => {
    const { s } = sim({ version: '7.6.5' });
    const r = await get(s, '/pools/default/stats/range/n1ql_requests/irate?start=-180&step=60');
    expect(r.status).toBe(200);
    const body = JSON.parse(r.body) as RangeAnswer;
    const doc = fixture<RangeAnswer>('pools-default-stats-range/docs-server-7.0plus-n1ql_requests-irate.json');
    const docLabels = Object.keys(doc.data[0]?.metric ?? {}).sort();
    expect(body.data.map((d) => [Object.keys(d.metric).sort(), d.metric.nodes, d.metric.instance])).toEqual([
      [docLabels, [CB1], 'n1ql'],
      [docLabels, [CB3], 'n1ql'],
    ]);
    expect(body.data[0]?.values).toHaveLength(4);
  });

  it('7.x-only query names natively; 6.6.5 has no native path at all', async () => {
    const seven = sim({ version: '7.2.4' }).s;
    const names = new Set((await exposition(seven, CB1)).map((l) => l.split(/[ {]/)[0]));
    for (const n of ['n1ql_timeouts', 'n1ql_cancelled', 'n1ql_prepared', 'n1ql_load', 'n1ql_node_memory', 'n1ql_requests_5000ms']) expect(names.has(n), n).toBe(true);
    const old = sim({ version: '6.6.5' }).s;
    expect((await get(old, `/_node/${CB1}/metrics`)).status).toBe(404);
    expect((await old.app.inject({ method: 'POST', url: '/pools/default/stats/range', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '[]' })).statusCode).toBe(404);
  });

  it('processes by service on every 7.x node; sys_disk_usage_ratio{disk} from 7.6 only, the data disk at the knob\'s share', async () => {
    for (const version of ['7.2.4', '7.6.5', '8.0.0']) {
      const { s } = sim({ version, knobs: { diskUsedRatio: 0.6 } });
      const lines = await exposition(s, CB2);
      const procs = new Set(lines.filter((l) => l.startsWith('sysproc_mem_resident{')).map((l) => /proc="([^"]+)"/.exec(l)?.[1]));
      // cb2 runs kv and fts.
      expect([...procs].sort(), version).toEqual(['babysitter', 'cbft', 'goxdcr', 'memcached', 'ns_server', 'projector', 'prometheus']);
      const disks = lines.filter((l) => l.startsWith('sys_disk_usage_ratio'));
      if (version === '7.2.4') expect(disks).toEqual([]);
      else expect(disks).toEqual(['sys_disk_usage_ratio{category="system",disk="/"} 0.2', 'sys_disk_usage_ratio{category="system",disk="/opt/couchbase/var"} 0.6']);
    }
  });

  it('sysproc CPU seconds agree with the CPU utilization gauge (rate of user + sys = utilization / 100)', async () => {
    const { s } = sim({ version: '7.6.5', knobs: { serviceStatValues: { 'memcached/cpu_utilization': () => 40 } } });
    const t = T0 / 1000;
    const [cpu] = await range(s, [{ metric: [{ label: 'name', value: 'sysproc_cpu_seconds_total' }, { label: 'proc', value: 'memcached' }], applyFunctions: ['rate'], timeWindow: '1m', start: t, end: t, nodes: [CB2] }]);
    const byMode = Object.fromEntries((cpu?.data ?? []).map((d) => [d.metric.mode, Number(d.values[0]?.[1])]));
    expect(byMode.user).toBeCloseTo(0.28, 9);
    expect(byMode.sys).toBeCloseTo(0.12, 9);
  });

  it('eventing running totals are the same number in the section and the native counter', async () => {
    const { s } = sim({ version: '7.6.5', knobs: { eventingNodes: 1 } });
    const env = await last(s, section('@eventing', CB1));
    const lines = await exposition(s, CB1);
    expect(lines).toContain(`eventing_on_update_success{functionName="enrich_orders"} ${env['eventing/enrich_orders/on_update_success']}`);
  });
});

describe('demo: a burst of slow queries in every 10-minute cycle', () => {
  it('seconds 60-300 of each 600: 40% of requests over 5 s, queued requests rising from 5 to 45; none outside', async () => {
    const { s, clock } = sim({ scenario: 'demo', version: '6.6.5' });
    const at = async (sec: number): Promise<Record<string, number>> => {
      clock.now = T0 + sec * 1000;
      return last(s, section('@query', CB1));
    };
    const before = await at(50);
    expect(slowShare(before)).toBeCloseTo(0.001, 9);
    expect(before.query_queued_requests).toBe(0);
    const during = await at(180);
    expect(slowShare(during)).toBeCloseTo(0.4, 9);
    // (180 − 60) / 240 = 0.5 of the way: 5 + 40 × 0.5
    expect(during.query_queued_requests).toBe(25);
    expect(during.query_avg_req_time).toBeCloseTo(4.5, 9);
    const after = await at(320);
    expect(after.query_queued_requests).toBe(0);
    expect(slowShare(after)).toBeCloseTo(0.001, 9);
    const next = await at(600 + 70);
    expect(slowShare(next)).toBeCloseTo(0.4, 9);
    // The demo's paused function has no statistic.
    expect(Object.keys(await last(s, section('@eventing'))).some((k) => k.includes('audit_log'))).toBe(false);
  });

  it('the demo\'s auto-failed-over last node serves no query or index statistic; its processes still run', async () => {
    const { s } = sim({ scenario: 'demo' });
    expect((await get(s, section('@query', CB3))).status).toBe(404);
    const lines = await exposition(s, CB3);
    expect(lines.some((l) => /^(n1ql|index)_/.test(l))).toBe(false);
    expect(lines.some((l) => l.startsWith('sysproc_mem_resident{category="system-processes",proc="cbq-engine"}'))).toBe(true);
    // cb1 runs query, index, Search, eventing and (demo) analytics.
    const one = new Set((await exposition(s, CB1)).map((l) => l.split('_')[0]));
    for (const p of ['n1ql', 'index', 'fts', 'eventing', 'cbas']) expect(one.has(p), p).toBe(true);
  });

  it('knob slowQueryBurst forces the burst in any scenario', async () => {
    const { s } = sim({ knobs: { slowQueryBurst: true } });
    const v = await last(s, section('@query', CB3));
    expect(slowShare(v)).toBeCloseTo(0.4, 9);
    expect(v.query_queued_requests).toBe(45);
  });
});
