/**
 * The `query` collector on a 6.6.5-shaped cluster (the `@query` section per query node) and a 7.6-shaped one (the
 * range API's n1ql_* series), with the same traffic behind both: the same families and values, by hand.
 *
 * Facts used (upstream, as read):
 * - ns_server@6.6.5:src/query_stats_collector.erl: Q_GAUGES active_requests and queued_requests (levels);
 *   Q_COUNTERS requests, errors, invalid_requests, warnings, selects, requests_250ms/500ms/1000ms/5000ms,
 *   result_count, result_size, request_time, service_time, turned into per-second rates for the `@query` section
 *   (base_stats_collector calculate_counters); request_time and service_time in nanoseconds per second.
 * - ns_server@7.6.2:src/stat_names_mappings.erl pre_70_stat_to_prom_query("@query", …): `query_<x>` is
 *   rate(n1ql_<x>) but for the two gauges, which are n1ql_<x> as is.
 * - ns_server@7.6.2:src/menelaus_stats.erl computed stats: query_avg_req_time = request_time × 1e-9 / requests
 *   (seconds), query_avg_svc_time likewise, query_avg_result_count = result_count / requests,
 *   query_avg_response_size = result_size / requests.
 * - docs-server@release/7.6:modules/metrics-reference/attachments/n1ql_metrics_metadata.json: n1ql_timeouts,
 *   n1ql_cancelled, n1ql_prepared counters; n1ql_node_memory (bytes) and n1ql_load gauges (7.0+ only).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { queryCollector } from '../../src/collectors/query.js';
import { collect, fakeClient } from '../helpers/collect.js';
import { clusterRoutes, compat, constantEnvelope, NOW, RANGE_ROUTE, rangeRoute, SECTION_NODE_ROUTE, sectionRoute } from '../helpers/service-fakes.js';
import type { FakeNode, RangeQuery, RangeTable } from '../helpers/service-fakes.js';
import { requireBinary } from '../helpers/tools.js';

const PROMTOOL = requireBinary('promtool');
const Q1 = 'q1.example.com:8091';
const Q2 = 'q2.example.com:8091';
const D1 = 'd1.example.com:8091';
const NODES: FakeNode[] = [
  { host: D1, services: ['kv'] },
  { host: Q1, services: ['n1ql', 'index'] },
  { host: Q2, services: ['n1ql'] },
];

/**
 * Q1's counters at T-20, T-10 and T (the range API's points), and the same traffic as the envelope's per-second
 * samples. Over 20 s: 60 requests = 3/s; 2 errors = 0.1/s; no invalid request; 2 warnings = 0.1/s; 40 selects = 2/s;
 * over 250 ms 20 = 1/s, over 500 ms 10 = 0.5/s, over 1 s 4 = 0.2/s, over 5 s 1 = 0.05/s; request time 3e10 ns over
 * 60 requests = 0.5 s each; service time 2.4e10 ns / 60 = 0.4 s; 600 results / 60 = 10 a request; 60,000 bytes / 60
 * = 1,000 bytes a request. Levels: 4 active, 1 queued. Q2 ran no request: rates 0, no mean per request.
 */
const c3 = (a: number, b: number, c: number) => [{ points: [[20, a], [10, b], [0, c]] as const }];
const RANGE: RangeTable = {
  n1ql_requests: { [Q1]: c3(1000, 1030, 1060), [Q2]: c3(500, 500, 500) },
  n1ql_errors: { [Q1]: c3(10, 10, 12), [Q2]: c3(0, 0, 0) },
  n1ql_invalid_requests: { [Q1]: c3(0, 0, 0), [Q2]: c3(0, 0, 0) },
  n1ql_warnings: { [Q1]: c3(5, 6, 7), [Q2]: c3(0, 0, 0) },
  n1ql_selects: { [Q1]: c3(900, 920, 940), [Q2]: c3(0, 0, 0) },
  n1ql_requests_250ms: { [Q1]: c3(100, 110, 120), [Q2]: c3(0, 0, 0) },
  n1ql_requests_500ms: { [Q1]: c3(50, 55, 60), [Q2]: c3(0, 0, 0) },
  n1ql_requests_1000ms: { [Q1]: c3(20, 22, 24), [Q2]: c3(0, 0, 0) },
  n1ql_requests_5000ms: { [Q1]: c3(1, 1, 2), [Q2]: c3(0, 0, 0) },
  n1ql_request_time: { [Q1]: c3(5e11, 5.15e11, 5.3e11), [Q2]: c3(7, 7, 7) },
  n1ql_service_time: { [Q1]: c3(4e11, 4.12e11, 4.24e11), [Q2]: c3(7, 7, 7) },
  n1ql_result_count: { [Q1]: c3(10_000, 10_300, 10_600), [Q2]: c3(0, 0, 0) },
  n1ql_result_size: { [Q1]: c3(1e6, 1.03e6, 1.06e6), [Q2]: c3(0, 0, 0) },
  n1ql_active_requests: { [Q1]: c3(9, 9, 4), [Q2]: c3(0, 0, 0) },
  n1ql_queued_requests: { [Q1]: c3(0, 0, 1), [Q2]: c3(0, 0, 0) },
  n1ql_timeouts: { [Q1]: c3(3, 3, 4), [Q2]: c3(0, 0, 0) },
  n1ql_cancelled: { [Q1]: c3(0, 0, 0), [Q2]: c3(0, 0, 0) },
  n1ql_prepared: { [Q1]: c3(100, 110, 120), [Q2]: c3(0, 0, 0) },
  n1ql_node_memory: { [Q1]: c3(1, 1, 2.5e8), [Q2]: c3(1, 1, 1e8) },
  n1ql_load: { [Q1]: c3(0, 0, 0.75), [Q2]: c3(0, 0, 0) },
};

/** The same traffic as per-second samples of the last minute (every sample alike, so each poll's mean is it). */
const ENVELOPES = {
  query: {
    [Q1]: constantEnvelope({
      query_requests: 3,
      query_errors: 0.1,
      query_invalid_requests: 0,
      query_warnings: 0.1,
      query_selects: 2,
      query_requests_250ms: 1,
      query_requests_500ms: 0.5,
      query_requests_1000ms: 0.2,
      query_requests_5000ms: 0.05,
      query_request_time: 1.5e9,
      query_service_time: 1.2e9,
      query_result_count: 30,
      query_result_size: 3000,
      query_active_requests: 4,
      query_queued_requests: 1,
      // A computed stat of the envelope (per sample): not read, the mean per request comes from the two counters.
      query_avg_req_time: 0.5,
    }, Q1),
    [Q2]: constantEnvelope({ query_requests: 0, query_errors: 0, query_invalid_requests: 0, query_warnings: 0, query_selects: 0, query_requests_250ms: 0, query_requests_500ms: 0, query_requests_1000ms: 0, query_requests_5000ms: 0, query_request_time: 0, query_service_time: 0, query_result_count: 0, query_result_size: 0, query_active_requests: 0, query_queued_requests: 0 }, Q2),
  },
};

const v66 = () => {
  const asked: string[] = [];
  const client = fakeClient({ ...clusterRoutes(NODES, compat(6, 6), '6.6.5-7909-enterprise'), [SECTION_NODE_ROUTE]: sectionRoute(ENVELOPES, asked) });
  return { client, asked };
};
const v76 = () => {
  const posts: RangeQuery[][] = [];
  const client = fakeClient({ ...clusterRoutes(NODES, compat(7, 6), '7.6.2-3721-enterprise'), [RANGE_ROUTE]: rangeRoute(RANGE, posts) });
  return { client, posts };
};

/** The families both generations give, per node, by hand (see RANGE). */
const COMMON: Array<[string, Record<string, string>, number]> = [
  ['couchbase_query_requests_per_second', { node: Q1 }, 3],
  ['couchbase_query_errors_per_second', { node: Q1 }, 0.1],
  ['couchbase_query_invalid_requests_per_second', { node: Q1 }, 0],
  ['couchbase_query_warnings_per_second', { node: Q1 }, 0.1],
  ['couchbase_query_selects_per_second', { node: Q1 }, 2],
  ['couchbase_query_slow_requests_per_second', { node: Q1, over: '0.25' }, 1],
  ['couchbase_query_slow_requests_per_second', { node: Q1, over: '0.5' }, 0.5],
  ['couchbase_query_slow_requests_per_second', { node: Q1, over: '1' }, 0.2],
  ['couchbase_query_slow_requests_per_second', { node: Q1, over: '5' }, 0.05],
  ['couchbase_query_request_time_seconds', { node: Q1 }, 0.5],
  ['couchbase_query_service_time_seconds', { node: Q1 }, 0.4],
  ['couchbase_query_results_per_request', { node: Q1 }, 10],
  ['couchbase_query_response_bytes_per_request', { node: Q1 }, 1000],
  ['couchbase_query_active_requests', { node: Q1 }, 4],
  ['couchbase_query_queued_requests', { node: Q1 }, 1],
  ['couchbase_query_requests_per_second', { node: Q2 }, 0],
  ['couchbase_query_active_requests', { node: Q2 }, 0],
];

const SEVEN_ONLY: Array<[string, Record<string, string>, number]> = [
  ['couchbase_query_timeouts_per_second', { node: Q1 }, 0.05],
  ['couchbase_query_cancelled_per_second', { node: Q1 }, 0],
  ['couchbase_query_prepared_per_second', { node: Q1 }, 1],
  ['couchbase_query_memory_bytes', { node: Q1 }, 2.5e8],
  ['couchbase_query_load', { node: Q1 }, 0.75],
  ['couchbase_query_memory_bytes', { node: Q2 }, 1e8],
];

describe('query collector', () => {
  it('reads each query node from its own @query section before 7.0 (values by hand)', async () => {
    const { client, asked } = v66();
    const r = await collect(queryCollector, client, { cluster: { statsSource: 'auto' }, now: () => NOW });
    expect(r.ok, String(r.error)).toBe(true);
    expect(asked.sort()).toEqual([`@query ${Q1}`, `@query ${Q2}`]);
    for (const [name, labels, v] of COMMON) expect(r.set.get(name, labels), `${name} ${JSON.stringify(labels)}`).toBeCloseTo(v, 9);
    // 7.0+ only: absent, not zero.
    for (const [name, labels] of SEVEN_ONLY) expect(r.set.get(name, labels), name).toBeUndefined();
    // No request on Q2: no mean per request.
    expect(r.set.get('couchbase_query_request_time_seconds', { node: Q2 })).toBeUndefined();
    // The data node runs no query service: none of its series.
    expect(r.text).not.toContain(D1);
  });

  it('reads the n1ql_* series of the query nodes from one range request on 7.6, with the same values and the 7.x families', async () => {
    const { client, posts } = v76();
    const r = await collect(queryCollector, client, { cluster: { statsSource: 'auto' }, now: () => NOW });
    expect(r.ok, String(r.error)).toBe(true);
    expect(posts).toHaveLength(1);
    const q = posts[0]?.find((x) => x.metric[0]?.value.includes('n1ql_requests'));
    expect(q?.metric[0]?.operator).toBe('=~');
    expect(q?.nodes).toEqual([Q1, Q2]);
    for (const [name, labels, v] of [...COMMON, ...SEVEN_ONLY]) expect(r.set.get(name, labels), `${name} ${JSON.stringify(labels)}`).toBeCloseTo(v, 9);
    expect(r.set.get('couchbase_query_request_time_seconds', { node: Q2 })).toBeUndefined();
    expect(r.text).not.toContain(D1);
  });

  it('is not applicable, asking no statistics, where no node runs the query service', async () => {
    const client = fakeClient(clusterRoutes([{ host: D1, services: ['kv'] }], compat(7, 6), '7.6.2'));
    const r = await collect(queryCollector, client, { cluster: { statsSource: 'auto' }, now: () => NOW });
    expect(r.ok).toBe(true);
    expect(r.notApplicable).toBe('no n1ql service');
    expect(r.requests.map((x) => x.endpoint)).toEqual(['/pools/default']);
  });

  it.skipIf(PROMTOOL === undefined)('exposition passes promtool check metrics', async () => {
    const r = await collect(queryCollector, v76().client, { cluster: { statsSource: 'auto' }, now: () => NOW });
    expect(execFileSync(PROMTOOL as string, ['check', 'metrics'], { input: r.text, encoding: 'utf8' })).toBe('');
  });
});
