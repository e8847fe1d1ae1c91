/**
 * The `analytics` collector on a 6.6.5-shaped cluster (the `@cbas` section per analytics node) and a 7.6-shaped one
 * (the range API's cbas_* series), with the same figures behind both: the same families and values, by hand.
 *
 * Facts used (upstream, as read):
 * - ns_server@6.6.5:src/service_cbas.erl get_service_gauges (cbas_heap_used, cbas_system_load_average,
 *   cbas_thread_count, cbas_disk_used) and get_service_counters (cbas_gc_count, cbas_gc_time in ms, cbas_io_reads,
 *   cbas_io_writes), the counters per second in the section;
 * - ns_server@7.6.2:src/stat_names_mappings.erl, the `@cbas` clauses: cbas_disk_used ← cbas_disk_used_bytes_total,
 *   cbas_heap_used ← cbas_heap_memory_used_bytes, cbas_gc_count ← rate(cbas_gc_count_total), cbas_gc_time ←
 *   rate(cbas_gc_time_milliseconds_total), cbas_io_reads/writes ← rate(cbas_io_reads_total / cbas_io_writes_total),
 *   cbas_system_load_average and cbas_thread_count as they are.
 */
import { describe, expect, it } from 'vitest';
import { analyticsCollector } from '../../src/collectors/analytics.js';
import { collect, fakeClient } from '../helpers/collect.js';
import { clusterRoutes, compat, constantEnvelope, NOW, RANGE_ROUTE, rangeRoute, SECTION_NODE_ROUTE, sectionRoute } from '../helpers/service-fakes.js';
import type { FakeNode, RangeTable } from '../helpers/service-fakes.js';

const A1 = 'a1.example.com:8091';
const D1 = 'd1.example.com:8091';
const NODES: FakeNode[] = [
  { host: D1, services: ['kv'] },
  { host: A1, services: ['cbas'] },
];

/**
 * A1 at T-20, T-10, T: heap 1e9 bytes, disk 2e9 bytes, 100 threads, load 1.5; 4 collections in 20 s = 0.2/s taking
 * 200 ms = 0.01 s per second; 200 reads = 10/s, 100 writes = 5/s.
 */
const c3 = (a: number, b: number, c: number) => [{ points: [[20, a], [10, b], [0, c]] as const }];
const RANGE: RangeTable = {
  cbas_heap_memory_used_bytes: { [A1]: c3(1, 1, 1e9) },
  cbas_disk_used_bytes_total: { [A1]: c3(1, 1, 2e9) },
  cbas_thread_count: { [A1]: c3(90, 95, 100) },
  cbas_system_load_average: { [A1]: c3(0, 0, 1.5) },
  cbas_gc_count_total: { [A1]: c3(10, 12, 14) },
  cbas_gc_time_milliseconds_total: { [A1]: c3(1000, 1100, 1200) },
  cbas_io_reads_total: { [A1]: c3(0, 100, 200) },
  cbas_io_writes_total: { [A1]: c3(0, 50, 100) },
};
const ENVELOPES = {
  cbas: { [A1]: constantEnvelope({ cbas_heap_used: 1e9, cbas_disk_used: 2e9, cbas_thread_count: 100, cbas_system_load_average: 1.5, cbas_gc_count: 0.2, cbas_gc_time: 10, cbas_io_reads: 10, cbas_io_writes: 5 }, A1) },
};

const EXPECTED: Array<[string, number]> = [
  ['couchbase_analytics_heap_used_bytes', 1e9],
  ['couchbase_analytics_disk_used_bytes', 2e9],
  ['couchbase_analytics_threads', 100],
  ['couchbase_analytics_system_load_average', 1.5],
  ['couchbase_analytics_gc_per_second', 0.2],
  ['couchbase_analytics_gc_seconds_per_second', 0.01],
  ['couchbase_analytics_io_reads_per_second', 10],
  ['couchbase_analytics_io_writes_per_second', 5],
];

describe('analytics collector', () => {
  it('gives the same values from the @cbas section per node (6.6.5) and from the range API (7.6)', async () => {
    const asked: string[] = [];
    const old = await collect(analyticsCollector, fakeClient({ ...clusterRoutes(NODES, compat(6, 6), '6.6.5'), [SECTION_NODE_ROUTE]: sectionRoute(ENVELOPES, asked) }), { cluster: { statsSource: 'auto' }, now: () => NOW });
    const cur = await collect(analyticsCollector, fakeClient({ ...clusterRoutes(NODES, compat(7, 6), '7.6.2'), [RANGE_ROUTE]: rangeRoute(RANGE) }), { cluster: { statsSource: 'auto' }, now: () => NOW });
    expect(old.ok, String(old.error)).toBe(true);
    expect(cur.ok, String(cur.error)).toBe(true);
    expect(asked).toEqual([`@cbas ${A1}`]);
    for (const [name, v] of EXPECTED) {
      expect(old.set.get(name, { node: A1 }), `6.6.5 ${name}`).toBeCloseTo(v, 9);
      expect(cur.set.get(name, { node: A1 }), `7.6 ${name}`).toBeCloseTo(v, 9);
    }
    expect(old.text).not.toContain(D1);
    expect(cur.text).not.toContain(D1);
  });

  it('is not applicable where no node runs the analytics service', async () => {
    const r = await collect(analyticsCollector, fakeClient(clusterRoutes([{ host: D1, services: ['kv', 'n1ql'] }], compat(6, 6), '6.6.5')), { cluster: { statsSource: 'auto' }, now: () => NOW });
    expect(r.ok).toBe(true);
    expect(r.notApplicable).toBe('no cbas service');
    expect(r.requests.map((x) => x.endpoint)).toEqual(['/pools/default']);
  });
});
