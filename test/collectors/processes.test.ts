/**
 * The `processes` collector: per process and node from the range API on 7.x, the used share of each disk on 7.6+,
 * and not applicable before 7.0 (no statistics request). Values by hand.
 *
 * Facts used (upstream, as read):
 * - ns_server@7.6.2:src/ns_server_stats.erl report_system_stats: `sysproc_<stat>{proc=<name>}` per process, and
 *   `sys_disk_usage_ratio{disk=<mount>}` (disk usage ÷ 100, a ratio);
 * - ns_server@7.6.2:etc/metrics_metadata.json: sysproc_mem_resident in bytes, sysproc_cpu_utilization in percent;
 * - ns_server@6.6.5:src/menelaus_stats.erl section_bucket / check_bucket: `@system-processes` is taken for a bucket
 *   name and answers 404, so before 7.0 per-process statistics are not served over REST.
 */
import { describe, expect, it } from 'vitest';
import { processesCollector } from '../../src/collectors/processes.js';
import { collect, fakeClient } from '../helpers/collect.js';
import { clusterRoutes, compat, NOW, RANGE_ROUTE, rangeRoute } from '../helpers/service-fakes.js';
import type { FakeNode, RangeQuery, RangeTable } from '../helpers/service-fakes.js';

const D1 = 'd1.example.com:8091';
const Q1 = 'q1.example.com:8091';
const NODES: FakeNode[] = [
  { host: D1, services: ['kv'] },
  { host: Q1, services: ['n1ql', 'index'] },
];

const level = (v: number, labels: Record<string, string>) => ({ labels, points: [[10, v / 2], [0, v]] as const });
const RANGE: RangeTable = {
  sysproc_mem_resident: { [D1]: [level(4e9, { proc: 'memcached' }), level(5e8, { proc: 'ns_server' })], [Q1]: [level(3e8, { proc: 'cbq-engine' }), level(6e8, { proc: 'indexer' })] },
  sysproc_cpu_utilization: { [D1]: [level(40, { proc: 'memcached' }), level(5, { proc: 'ns_server' })], [Q1]: [level(150, { proc: 'cbq-engine' }), level(20, { proc: 'indexer' })] },
  sys_disk_usage_ratio: { [D1]: [level(0.5, { disk: '/' }), level(0.81, { disk: '/data' })], [Q1]: [level(0.25, { disk: '/' })] },
};

describe('processes collector', () => {
  it('exports resident memory and CPU per process and node, and each disk\'s used share, from one range request on 7.6', async () => {
    const posts: RangeQuery[][] = [];
    const r = await collect(processesCollector, fakeClient({ ...clusterRoutes(NODES, compat(7, 6), '7.6.2'), [RANGE_ROUTE]: rangeRoute(RANGE, posts) }), { cluster: { statsSource: 'auto' }, now: () => NOW });
    expect(r.ok, String(r.error)).toBe(true);
    expect(posts).toHaveLength(1);
    // Every active node, of any service.
    for (const q of posts[0] ?? []) expect(q.nodes).toEqual([D1, Q1]);
    expect(r.set.get('couchbase_process_resident_memory_bytes', { node: D1, process: 'memcached' })).toBe(4e9);
    expect(r.set.get('couchbase_process_resident_memory_bytes', { node: Q1, process: 'indexer' })).toBe(6e8);
    expect(r.set.get('couchbase_process_cpu_utilization_ratio', { node: D1, process: 'memcached' })).toBeCloseTo(0.4, 12);
    // Couchbase's percent as it is, divided by 100 (150 → 1.5).
    expect(r.set.get('couchbase_process_cpu_utilization_ratio', { node: Q1, process: 'cbq-engine' })).toBeCloseTo(1.5, 12);
    expect(r.set.get('couchbase_node_disk_usage_ratio', { node: D1, disk: '/data' })).toBe(0.81);
    expect(r.set.get('couchbase_node_disk_usage_ratio', { node: Q1, disk: '/' })).toBe(0.25);
    // No process of one node is shown on another.
    expect(r.set.get('couchbase_process_resident_memory_bytes', { node: Q1, process: 'memcached' })).toBeUndefined();
  });

  it('has no disk series on a 7.2 cluster, which does not serve sys_disk_usage_ratio', async () => {
    const { sys_disk_usage_ratio: _gone, ...without } = RANGE;
    const r = await collect(processesCollector, fakeClient({ ...clusterRoutes(NODES, compat(7, 2), '7.2.4'), [RANGE_ROUTE]: rangeRoute(without) }), { cluster: { statsSource: 'auto' }, now: () => NOW });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.text).not.toContain('couchbase_node_disk_usage_ratio{');
    expect(r.set.get('couchbase_process_resident_memory_bytes', { node: D1, process: 'memcached' })).toBe(4e9);
  });

  it('is not applicable before 7.0, with the reason and no statistics request', async () => {
    const r = await collect(processesCollector, fakeClient(clusterRoutes(NODES, compat(6, 6), '6.6.5')), { cluster: { statsSource: 'auto' }, now: () => NOW });
    expect(r.ok).toBe(true);
    expect(r.notApplicable).toBe('per-process statistics are not served over REST before 7.0');
    expect(r.requests.map((x) => x.endpoint).sort()).toEqual(['/pools/default', '/pools/default/buckets']);
  });
});
