/**
 * Partial answers of the range API (issue 37 §1, issue 39 §1), against a small fake of POST
 * /pools/default/stats/range that follows menelaus_web_stats.erl as read: `nodes` says whom to ask (default: every
 * node in any membership state), `timeout` is how long the server waits for each node from the request's start (a
 * node slower than that is an entry {node, error: "Request timed out"}), a node that is down is {node, error:
 * "Node is not available"}, and `nodesAggregation: "sum"` sums the answering nodes' points at each instant
 * (merge_metrics). Expected values are worked out by hand from the per-node numbers below, never from the code.
 */
import { describe, expect, it } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { xdcrCollector } from '../../src/collectors/xdcr.js';
import type { RequestOptions } from '../../src/couchbase/client.js';
import { SnapshotStore, statusSet } from '../../src/metrics/store.js';
import { findProblems } from '../../src/server/problems.js';
import { collect, fakeClient } from '../helpers/collect.js';

/** The poll's clock: the answers' newest instant is T (epoch s). */
const T = 1_700_000_000;
const NOW = T * 1000 + 5_000;
const N1 = 'n1:8091';
const N2 = 'n2:8091';
const N3 = 'n3:8091';
const N4 = 'n4:8091';

/** Per node: kv_curr_items of bucket b, and its get hits counted at T-20, T-10 and T. */
const ITEMS: Record<string, number> = { [N1]: 100, [N2]: 200, [N3]: 400, [N4]: 800 };
const HITS: Record<string, [number, number, number]> = { [N1]: [0, 100, 200], [N2]: [0, 50, 100], [N3]: [0, 300, 600], [N4]: [0, 1, 2] };
/** sys_mem_total per node (a host stat under every bucket: summed, as the envelope does). */
const MEM: Record<string, number> = { [N1]: 1000, [N2]: 2000, [N3]: 4000, [N4]: 8000 };

interface Query {
  metric: Array<{ label: string; value: string | string[] }>;
  start: number;
  step: number;
  nodesAggregation?: string;
  nodes?: string[];
  timeout?: number;
}

interface Scenario {
  /** /pools/default's nodes: membership per node. */
  membership: Record<string, string>;
  /** Nodes that are down: "Node is not available". */
  down?: string[];
  /** Nodes' answer times, ms (the fake never waits: a node slower than the query's `timeout` is an error entry). */
  latencyMs?: Record<string, number>;
  /** Seconds a node's clock is ahead: its points' times are shifted by as much. */
  aheadS?: Record<string, number>;
}

function series(metric: string, node: string, aheadS: number): Array<{ labels: Record<string, string>; values: Array<[number, string]> }> {
  const at = (dt: number) => T + dt + aheadS;
  if (metric === 'kv_curr_items') return [{ labels: { bucket: 'b' }, values: [[at(0), String(ITEMS[node])]] }];
  if (metric === 'kv_ops') return [{ labels: { bucket: 'b', op: 'get', result: 'hit' }, values: (HITS[node] as number[]).map((v, i) => [at(10 * i - 20), String(v)]) }];
  if (metric === 'sys_mem_total') return [{ labels: {}, values: [[at(0), String(MEM[node])]] }];
  return [];
}

/** The fake's answer to one POST: what it was asked, and menelaus_web_stats' answer shape. */
function rangeFake(sc: Scenario, asked: Query[][]) {
  const all = Object.keys(sc.membership);
  return (_p: unknown, o: RequestOptions & { json?: unknown }) => {
    const qs = o.json as Query[];
    asked.push(qs);
    return qs.map((q) => {
      const name = q.metric.find((m) => m.label === 'name')?.value as string;
      const nodes = q.nodes ?? all;
      const errors: Array<{ node: string; error: string }> = [];
      const good: string[] = [];
      for (const n of nodes) {
        if (sc.down?.includes(n)) errors.push({ node: n, error: 'Node is not available' });
        else if ((sc.latencyMs?.[n] ?? 0) > (q.timeout ?? 60_000)) errors.push({ node: n, error: 'Request timed out' });
        else good.push(n);
      }
      const per = good.flatMap((n) => series(name, n, sc.aheadS?.[n] ?? 0).map((s) => ({ node: n, ...s })));
      if (q.nodesAggregation === 'sum' && per.length > 0) {
        const byT = new Map<number, number>();
        for (const s of per) for (const [t, v] of s.values) byT.set(t, (byT.get(t) ?? 0) + Number(v));
        return { data: [{ metric: { nodes: good, aggregationFunction: 'sum', name, ...(per[0]?.labels ?? {}) }, values: [...byT].sort((a, b) => a[0] - b[0]).map(([t, v]) => [t, String(v)]) }], errors };
      }
      return { data: per.map((s) => ({ metric: { nodes: [s.node], name, ...s.labels }, values: s.values })), errors };
    });
  };
}

function clientFor(sc: Scenario, asked: Query[][]) {
  const nodes = Object.entries(sc.membership).map(([hostname, clusterMembership]) => ({ hostname, clusterMembership, services: ['kv'], clusterCompatibility: 0x70006 }));
  return fakeClient({
    '/pools/default/buckets': [{ name: 'b', bucketType: 'membase', nodes: nodes.filter((n) => n.clusterMembership === 'active') }],
    '/pools/default': { nodes },
    '/pools/default/stats/range': rangeFake(sc, asked),
  });
}

async function poll(sc: Scenario, perNode = false) {
  const asked: Query[][] = [];
  const r = await collect(bucketStatsCollector, clientFor(sc, asked), { cluster: { statsSource: 'range' }, options: { per_node: perNode }, now: () => NOW });
  const store = new SnapshotStore();
  store.record('test', r);
  const self = statusSet(store.statusList());
  return { r, asked, self, problems: findProblems([{ base: { couchbase_cluster: 'test' }, set: r.set }], NOW) };
}

const ALL_ACTIVE = { [N1]: 'active', [N2]: 'active', [N3]: 'active', [N4]: 'active' };
const bucket = (r: Awaited<ReturnType<typeof poll>>['r'], family: string) => r.set.get(family, { bucket: 'b' });

describe('a healthy cluster', () => {
  it('asks the active data nodes with a timeout inside the poll deadline; every value is the sum over the four nodes', async () => {
    const { r, asked, self } = await poll({ membership: ALL_ACTIVE });
    expect(r.ok).toBe(true);
    for (const q of asked.flat()) {
      expect(q.nodes).toEqual([N1, N2, N3, N4]);
      // bucket_stats' default deadline is 29.5 s (interval 30 s): 80% of what is left, and never past it.
      expect(q.timeout).toBeGreaterThan(0);
      expect(q.timeout).toBeLessThanOrEqual(0.8 * 29_500);
    }
    expect(bucket(r, 'couchbase_bucket_curr_items')).toBe(1500);
    // Hits: 200/20 + 100/20 + 600/20 + 2/20 per second.
    expect(bucket(r, 'couchbase_bucket_get_hits_per_second')).toBeCloseTo(10 + 5 + 30 + 0.1, 9);
    expect(bucket(r, 'couchbase_bucket_mem_total_bytes')).toBe(15000);
    expect(self.get('cbwatch_stats_nodes_missing', { collector: 'bucket_stats' })).toBe(0);
    expect(r.itemErrors.size).toBe(0);
  });
});

describe('one node "Node is not available"', () => {
  const sc: Scenario = { membership: ALL_ACTIVE, down: [N2] };
  it('keeps every bucket-wide value, as the sum over the three nodes that answered', async () => {
    const { r } = await poll(sc);
    expect(r.ok).toBe(true);
    expect(bucket(r, 'couchbase_bucket_curr_items')).toBe(100 + 400 + 800);
    expect(bucket(r, 'couchbase_bucket_get_hits_per_second')).toBeCloseTo(10 + 30 + 0.1, 9);
    expect(bucket(r, 'couchbase_bucket_mem_total_bytes')).toBe(1000 + 4000 + 8000);
  });
  it('per node: the neighbours keep their values, the down node has none', async () => {
    const { r } = await poll(sc, true);
    expect(r.set.get('couchbase_bucket_node_curr_items', { bucket: 'b', node: N1 })).toBe(100);
    expect(r.set.get('couchbase_bucket_node_curr_items', { bucket: 'b', node: N3 })).toBe(400);
    expect(r.set.get('couchbase_bucket_node_curr_items', { bucket: 'b', node: N2 })).toBeUndefined();
    expect(bucket(r, 'couchbase_bucket_curr_items')).toBe(1300);
  });
  it('names the node: the self-metric, one item error for the poll (not one per series), the note for check, the landing page', async () => {
    const { r, self, problems, asked } = await poll(sc);
    expect(self.get('cbwatch_stats_nodes_missing', { collector: 'bucket_stats' })).toBe(1);
    expect([...r.itemErrors]).toEqual([['network', 1]]);
    expect(r.note).toContain(`node ${N2} missing (Node is not available)`);
    const p = problems.filter((x) => x.text.includes(N2));
    expect(p).toHaveLength(1);
    expect(p[0]?.alert).toBe('CbwatchCollectorItemErrors');
    // Found down in the first request: the later requests of the poll do not ask it again.
    expect(asked[0]?.[0]?.nodes).toContain(N2);
    for (const req of asked.slice(1)) expect(req[0]?.nodes).toEqual([N1, N3, N4]);
  });
});

describe('one node failed over', () => {
  const sc: Scenario = { membership: { ...ALL_ACTIVE, [N4]: 'inactiveFailed' } };
  it('is not asked; the bucket-wide values are the active nodes\' sums, and nothing is missing', async () => {
    const { r, asked, self } = await poll(sc);
    for (const q of asked.flat()) expect(q.nodes).toEqual([N1, N2, N3]);
    expect(bucket(r, 'couchbase_bucket_curr_items')).toBe(700);
    expect(bucket(r, 'couchbase_bucket_mem_total_bytes')).toBe(7000);
    expect(self.get('cbwatch_stats_nodes_missing', { collector: 'bucket_stats' })).toBe(0);
  });
});

describe('one slow node past the query\'s timeout', () => {
  // 40 s to answer: longer than any timeout cbwatch sends within a 29.5 s poll deadline.
  const sc: Scenario = { membership: ALL_ACTIVE, latencyMs: { [N3]: 40_000 } };
  it('is an error entry the server returns in time; the others\' values stay and the node is named', async () => {
    const { r, self } = await poll(sc);
    expect(r.ok).toBe(true);
    expect(bucket(r, 'couchbase_bucket_curr_items')).toBe(100 + 200 + 800);
    expect(bucket(r, 'couchbase_bucket_get_hits_per_second')).toBeCloseTo(10 + 5 + 0.1, 9);
    expect(self.get('cbwatch_stats_nodes_missing', { collector: 'bucket_stats' })).toBe(1);
    expect([...r.itemErrors]).toEqual([['timeout', 1]]);
    expect(r.note).toContain(`node ${N3} missing (Request timed out)`);
  });
});

describe('XDCR likewise', () => {
  it('a down node leaves the replication\'s other nodes\' values, and is named', async () => {
    const asked: Query[][] = [];
    const nodes = [N1, N2].map((hostname) => ({ hostname, clusterMembership: 'active', services: ['kv'], clusterCompatibility: 0x70006 }));
    const id = 'uuid1/src/dst';
    const client = fakeClient({
      '/pools/default/buckets': [{ name: 'src', bucketType: 'membase', nodes }],
      '/pools/default': { nodes },
      '/pools/default/tasks': [{ type: 'xdcr', id, source: 'src', target: '/remoteClusters/uuid1/buckets/dst', status: 'running', errors: [] }],
      '/pools/default/remoteClusters': [{ name: 'remote', uuid: 'uuid1', hostname: 'r:8091', deleted: false }],
      '/pools/default/stats/range': (_p: unknown, o: RequestOptions & { json?: unknown }) => {
        const qs = o.json as Query[];
        asked.push(qs);
        return qs.map((q) => {
          const name = q.metric.find((m) => m.label === 'name')?.value as string;
          const labels = { sourceBucketName: 'src', targetClusterUUID: 'uuid1', targetBucketName: 'dst', pipelineType: 'Main' };
          const data = name === 'xdcr_changes_left_total' ? [{ metric: { nodes: [N1], name, ...labels }, values: [[T, '7']] }] : [];
          return { data, errors: [{ node: N2, error: 'Node is not available' }] };
        });
      },
    });
    const r = await collect(xdcrCollector, client, { cluster: { statsSource: 'range' }, now: () => NOW });
    expect(r.ok).toBe(true);
    expect(r.set.get('couchbase_xdcr_changes_left', { node: N1 })).toBe(7);
    expect(r.set.get('couchbase_xdcr_changes_left', { node: N2 })).toBeUndefined();
    expect(r.set.statsGaps?.missing.get(N2)).toBe('Node is not available');
    expect([...r.itemErrors]).toEqual([['network', 1]]);
    // One pipelineType matcher per query.
    for (const q of asked.flat()) expect(q.metric.filter((m) => m.label === 'pipelineType')).toHaveLength(1);
  });
});
