/**
 * Host stats under buckets (the `@system` rows: cpu_*_rate, cpu_cores_available, mem_*, swap_*, allocstall,
 * rest_requests, hibernated_*) through the range API, against a small fake of POST /pools/default/stats/range that
 * answers each query from the nodes it names. ns_server (menelaus_stats.erl, section_nodes("@system") →
 * ns_cluster_membership:actual_active_nodes()) merges them over every active node of any service, the max for
 * cpu_utilization_rate (get_aggregate_method); the bucket's own stats over its data nodes. Expected values are
 * worked out by hand from the per-node numbers below.
 */
import { describe, expect, it } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import type { RequestOptions } from '../../src/couchbase/client.js';
import { SnapshotStore, statusSet } from '../../src/metrics/store.js';
import { activeNodes } from '../../src/stats/range-nodes.js';
import { buildQueries, isHostMetric } from '../../src/stats/range-plan.js';
import { collect, fakeClient } from '../helpers/collect.js';

const T = 1_700_000_000;
const NOW = T * 1000 + 5_000;
const D1 = 'd1:8091';
const D2 = 'd2:8091';
/** The index + query node: no bucket data. */
const IQ = 'iq:8091';
/** Failed over: in /pools/default, not active. */
const FO = 'fo:8091';
const GIB = 2 ** 30;

/** Per node: kv_curr_items of bucket b (data nodes only), sys_mem_total and sys_cpu_utilization_rate (every node). */
const ITEMS: Record<string, number> = { [D1]: 100, [D2]: 200 };
const MEM: Record<string, number> = { [D1]: 16 * GIB, [D2]: 8 * GIB, [IQ]: 64 * GIB, [FO]: 32 * GIB };
const CPU: Record<string, number> = { [D1]: 40, [D2]: 60, [IQ]: 90, [FO]: 99 };

interface Query {
  metric: Array<{ label: string; value: string | string[] }>;
  nodesAggregation?: string;
  nodes?: string[];
}

function series(metric: string, node: string): Array<{ labels: Record<string, string>; v: number }> {
  if (metric === 'kv_curr_items' && ITEMS[node] !== undefined) return [{ labels: { bucket: 'b' }, v: ITEMS[node] }];
  if (metric === 'sys_mem_total') return [{ labels: {}, v: MEM[node] as number }];
  if (metric === 'sys_cpu_utilization_rate') return [{ labels: {}, v: CPU[node] as number }];
  return [];
}

function clientFor(down: readonly string[], asked: Query[]) {
  const pool = [
    { hostname: D1, clusterMembership: 'active', services: ['kv'] },
    { hostname: D2, clusterMembership: 'active', services: ['kv'] },
    { hostname: IQ, clusterMembership: 'active', services: ['index', 'n1ql'] },
    { hostname: FO, clusterMembership: 'inactiveFailed', services: ['index'] },
  ];
  return fakeClient({
    '/pools/default': { nodes: pool },
    '/pools/default/buckets': [{ name: 'b', bucketType: 'membase', nodes: pool.slice(0, 2).map((n) => ({ ...n, clusterCompatibility: 0x70006 })) }],
    '/pools/default/stats/range': (_p: unknown, o: RequestOptions & { json?: unknown }) =>
      (o.json as Query[]).map((q) => {
        asked.push(q);
        const name = q.metric.find((m) => m.label === 'name')?.value as string;
        const nodes = q.nodes ?? [D1, D2, IQ, FO];
        const errors = nodes.filter((n) => down.includes(n)).map((node) => ({ node, error: 'Node is not available' }));
        const per = nodes.filter((n) => !down.includes(n)).flatMap((n) => series(name, n).map((s) => ({ node: n, ...s })));
        if (q.nodesAggregation !== undefined && per.length > 0) {
          const vs = per.map((s) => s.v);
          const v = q.nodesAggregation === 'max' ? Math.max(...vs) : vs.reduce((a, b) => a + b, 0);
          return { data: [{ metric: { nodes: per.map((s) => s.node), name, ...(per[0]?.labels ?? {}) }, values: [[T, String(v)]] }], errors };
        }
        return { data: per.map((s) => ({ metric: { nodes: [s.node], name, ...s.labels }, values: [[T, String(s.v)]] })), errors };
      }),
  });
}

async function poll(down: readonly string[] = [], perNode = false) {
  const asked: Query[] = [];
  const r = await collect(bucketStatsCollector, clientFor(down, asked), { cluster: { statsSource: 'range' }, options: { per_node: perNode }, now: () => NOW });
  const store = new SnapshotStore();
  store.record('test', r);
  return { r, asked, self: statusSet(store.statusList()) };
}

const nodesOf = (asked: readonly Query[], metric: string) => asked.find((q) => q.metric.some((m) => m.label === 'name' && m.value === metric))?.nodes;

describe('host stats under buckets: every active node of any service (menelaus_stats section_nodes("@system"))', () => {
  it('asks host metrics of the active nodes of /pools/default (failed-over left out), bucket metrics of the data nodes', async () => {
    const { asked } = await poll();
    expect(nodesOf(asked, 'sys_mem_total')).toEqual([D1, D2, IQ]);
    expect(nodesOf(asked, 'sys_cpu_utilization_rate')).toEqual([D1, D2, IQ]);
    expect(nodesOf(asked, 'kv_curr_items')).toEqual([D1, D2]);
  });

  it('sums mem_total over the three active nodes: 16 + 8 + 64 = 88 GiB (not the data nodes\' 24); cpu_utilization is their max, 90%', async () => {
    const { r, self } = await poll();
    expect(r.set.get('couchbase_bucket_mem_total_bytes', { bucket: 'b' })).toBe(88 * GIB);
    expect(r.set.get('couchbase_bucket_cpu_utilization_ratio', { bucket: 'b' })).toBeCloseTo(0.9, 12);
    // The bucket's own stats stay the data nodes' sum.
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(300);
    expect(self.get('cbwatch_stats_nodes_missing', { collector: 'bucket_stats' })).toBe(0);
  });

  it('per node: the data nodes only, as the envelopes per node', async () => {
    const { r } = await poll([], true);
    expect(r.set.get('couchbase_bucket_node_mem_total_bytes', { bucket: 'b', node: D1 })).toBe(16 * GIB);
    expect(r.set.get('couchbase_bucket_node_mem_total_bytes', { bucket: 'b', node: IQ })).toBeUndefined();
    expect(r.set.get('couchbase_bucket_mem_total_bytes', { bucket: 'b' })).toBe(88 * GIB);
  });

  it('a non-data node that does not answer is missing like any other: the sum over the others (24 GiB), named once', async () => {
    const { r, self } = await poll([IQ]);
    expect(r.set.get('couchbase_bucket_mem_total_bytes', { bucket: 'b' })).toBe(24 * GIB);
    expect(r.set.get('couchbase_bucket_cpu_utilization_ratio', { bucket: 'b' })).toBeCloseTo(0.6, 12);
    expect(self.get('cbwatch_stats_nodes_missing', { collector: 'bucket_stats' })).toBe(1);
    expect(r.note).toContain(`node ${IQ} missing (Node is not available)`);
  });
});

describe('host-node helpers', () => {
  it('activeNodes: the active members (membership not said counts as active), each once, in list order', () => {
    const list = [{ hostname: 'a:8091', clusterMembership: 'active' }, { hostname: 'b:8091', clusterMembership: 'inactiveAdded' }, { hostname: 'c:8091' }, { hostname: 'a:8091' }, null, { hostname: '' }];
    expect(activeNodes(list)).toEqual(['a:8091', 'c:8091']);
  });

  it('isHostMetric: the sys_* and cm_* series of the @system section; buildQueries asks them of hostNodes', () => {
    expect(['sys_mem_total', 'cm_rest_request_leaves_total'].map(isHostMetric)).toEqual([true, true]);
    expect(['kv_curr_connections', 'kv_ops', 'xdcr_changes_left_total'].map(isHostMetric)).toEqual([false, false, false]);
    const qs = buildQueries(['sys_mem_total', 'kv_ops'], {}, 60, { nodes: ['d1'], hostNodes: ['d1', 'iq'] });
    expect(qs.map((q) => q.nodes)).toEqual([['d1', 'iq'], ['d1']]);
  });
});
