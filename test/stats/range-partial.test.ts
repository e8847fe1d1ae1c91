/**
 * Partial answers of the range API, and the window from the poll's own clock, against a small fake of POST
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
import { findProblems } from '../../src/metrics/problems.js';
import { collect, fakeClient } from '../helpers/collect.js';
import { runPoll } from '../../src/collectors/context.js';
import { defaultClusterConfig, resolveCollectorOptions } from '../../src/config/defaults.js';
import { collectorSchemas } from '../../src/config/schema.js';
import { createSharedCache } from '../../src/collectors/shared.js';
import { SILENT_LOG } from '../../src/log-core.js';
import type { Log } from '../../src/log-core.js';
import { rangeWindow } from '../../src/stats/range.js';

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
  /** The bucket list's nodes: membership per node. */
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
    // The bucket's nodes with their membership, as /pools/default/buckets lists them.
    '/pools/default/buckets': [{ name: 'b', bucketType: 'membase', nodes }],
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
      // And within the client's request timeout (10 s by default): a query held for a slow node is a pause in the
      // body, which the client would take for a dead connection past it. 80% of 10 s.
      expect(q.timeout).toBe(8_000);
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
  // 40 s to answer: longer than any timeout cbwatch sends (8 s by default).
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

describe('XDCR: a node that goes silent', () => {
  // A cluster of N1–N3 where only `answering` give xdcr_changes_left_total series of their own (no `errors` entry for the others).
  function silentClient(answering: readonly string[]) {
    const nodes = [N1, N2, N3].map((hostname) => ({ hostname, clusterMembership: 'active', services: ['kv'], clusterCompatibility: 0x70006 }));
    return fakeClient({
      '/pools/default/buckets': [{ name: 'src', bucketType: 'membase', nodes }],
      '/pools/default/tasks': [{ type: 'xdcr', id: 'uuid1/src/dst', source: 'src', target: '/remoteClusters/uuid1/buckets/dst', status: 'running', errors: [] }],
      '/pools/default/remoteClusters': [{ name: 'remote', uuid: 'uuid1', hostname: 'r:8091', deleted: false }],
      '/pools/default/stats/range': (_p: unknown, o: RequestOptions & { json?: unknown }) =>
        (o.json as Query[]).map((q) => {
          const name = q.metric.find((m) => m.label === 'name')?.value as string;
          const labels = { sourceBucketName: 'src', targetClusterUUID: 'uuid1', targetBucketName: 'dst', pipelineType: 'Main' };
          const data = name === 'xdcr_changes_left_total' ? answering.map((n) => ({ metric: { nodes: [n], name, ...labels }, values: [[T, '7']] })) : [];
          return { data, errors: [] };
        }),
    });
  }

  it('a node that had series and answers none while its neighbours do is named missing, until it answers again', async () => {
    const state = new Map<string, unknown>();
    const byPoll = [[N1, N2, N3], [N1, N3], [N1, N3], [N1, N2, N3]];
    const results = [];
    for (let i = 0; i < byPoll.length; i++) {
      const client = silentClient(byPoll[i] as string[]);
      results.push(await collect(xdcrCollector, client, { cluster: { statsSource: 'range' }, now: () => NOW + i * 30_000, state }));
    }
    expect(results.map((r) => [...(r.set.statsGaps?.missing.keys() ?? [])])).toEqual([[], [N2], [N2], []]);
    expect(results[1]?.set.statsGaps?.missing.get(N2)).toBe('no statistics in the answer, though it had some before');
    // The neighbours' values stay: 7 on N1 and N3 while N2 is silent.
    expect(results[1]?.set.get('couchbase_xdcr_changes_left', { node: N1 })).toBe(7);
    expect(results[1]?.set.get('couchbase_xdcr_changes_left', { node: N3 })).toBe(7);
    expect(results.every((r) => r.ok)).toBe(true);
  });

  it('a node that never had XDCR series is never named', async () => {
    const state = new Map<string, unknown>();
    for (let i = 0; i < 3; i++) {
      const r = await collect(xdcrCollector, silentClient([N1, N3]), { cluster: { statsSource: 'range' }, now: () => NOW + i * 30_000, state });
      expect(r.set.statsGaps?.missing.size).toBe(0);
    }
  });
});

describe('the window comes from the poll\'s own clock', () => {
  it('on the 10 s grid: from the instant after the previous poll\'s end, to the poll\'s clock, rounded down', () => {
    // now 1,700,000,035.5 s: end 1,700,000,030. Previous poll at 1,700,000,005.2 s: its end floor(1,700,000,005.2 /
    // 10) * 10 = 1,700,000,000 is the instant of the newest points the memo holds; from the next one: 3 points a series.
    expect(rangeWindow(1_700_000_035_500, 1_700_000_005_200, 30_000)).toEqual({ from: 1_700_000_010, end: 1_700_000_030 });
    // A previous poll that started on the grid: its end is that instant.
    expect(rangeWindow(1_700_000_030_000, 1_700_000_000_000, 30_000)).toEqual({ from: 1_700_000_010, end: 1_700_000_030 });
    // Polls 3 s apart: still one step back.
    expect(rangeWindow(1_700_000_035_500, 1_700_000_032_500, 30_000)).toEqual({ from: 1_700_000_020, end: 1_700_000_030 });
    // First poll: one interval (30 s) and the slack back: floor(1,699,999,985.5 / 10) * 10.
    expect(rangeWindow(1_700_000_035_500, undefined, 30_000)).toEqual({ from: 1_699_999_980, end: 1_700_000_030 });
    // Two hours since the previous poll: at most an hour back: floor(1,699,996,435.5 / 10) * 10.
    expect(rangeWindow(1_700_000_035_500, 1_700_000_035_500 - 7_200_000, 30_000)).toEqual({ from: 1_699_996_430, end: 1_700_000_030 });
    // A previous poll "after" now (the exporter's clock stepped back): as a first poll.
    expect(rangeWindow(1_700_000_035_500, 1_700_000_999_000, 30_000)).toEqual({ from: 1_699_999_980, end: 1_700_000_030 });
  });
});

describe('one node\'s clock 300 s ahead', () => {
  const sc: Scenario = { membership: ALL_ACTIVE, aheadS: { [N3]: 300 } };
  function logger(lines: string[]): Log {
    const log: Log = { ...SILENT_LOG, warn: (o: unknown, msg?: string) => void lines.push(`${JSON.stringify(o)} ${msg ?? ''}`), child: () => log };
    return log;
  }
  it('drops its points (counted against it, warned once), keeps its neighbours\' values, exports no time ahead of now, and the next window starts from the poll clock', async () => {
    const asked: Query[][] = [];
    const client = clientFor(sc, asked);
    const lines: string[] = [];
    const state = new Map<string, unknown>();
    const shared = createSharedCache(() => NOW);
    let now = NOW;
    const store = new SnapshotStore();
    const pollOnce = async () => {
      const r = await runPoll({
        collector: bucketStatsCollector,
        cluster: defaultClusterConfig({ url: client.baseUrl, statsSource: 'range' }),
        options: resolveCollectorOptions('bucket_stats', collectorSchemas.bucket_stats.parse({ per_node: true })),
        client,
        state,
        shared,
        now: () => now,
        log: logger(lines),
      });
      store.record('test', r);
      return r;
    };
    const r = await pollOnce();
    expect(r.ok).toBe(true);
    // n3 answered kv_curr_items (1 point), kv_ops (3) and sys_mem_total (1), all 300 s ahead: 5 dropped.
    expect(statusSet(store.statusList()).get('cbwatch_stats_future_points_dropped_total', { collector: 'bucket_stats', node: N3 })).toBe(5);
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(100 + 200 + 800);
    expect(r.set.get('couchbase_bucket_node_curr_items', { bucket: 'b', node: N1 })).toBe(100);
    expect(r.set.get('couchbase_bucket_node_curr_items', { bucket: 'b', node: N3 })).toBeUndefined();
    expect(r.set.get('couchbase_bucket_mem_total_bytes', { bucket: 'b' })).toBe(1000 + 2000 + 8000);
    // The newest time exported is the neighbours' T, never ahead of the poll's clock.
    const last = r.set.get('couchbase_bucket_last_sample_timestamp_seconds', { bucket: 'b' }) as number;
    expect(last).toBe(T);
    expect(last * 1000).toBeLessThanOrEqual(NOW);
    expect(r.set.statsGaps?.missing.get(N3)).toMatch(/future/);
    const p = findProblems([{ base: { couchbase_cluster: 'test' }, set: r.set }], NOW).filter((x) => x.text.includes(`node ${N3} answered`));
    expect(p).toHaveLength(1);
    expect(p[0]?.alert).toBe('CouchbaseBucketStatsStalled');
    expect(lines.filter((l) => l.includes(N3) && l.includes('ahead'))).toHaveLength(1);
    // Second poll, 30 s later: the window starts after the first poll's end (on the grid), not 300 s ahead;
    // the warning is not repeated, the count grows by n3's 5 new points.
    const before = asked.length;
    now = NOW + 30_000;
    const r2 = await pollOnce();
    expect(r2.ok).toBe(true);
    // floor(1,700,000,005 / 10) * 10 + 10 = 1,700,000,010; end floor(1,700,000,035 / 10) * 10. A metric only
    // levels read (kv_curr_items, sys_mem_total) is asked for the end alone; kv_ops (a rate) for the window.
    const second = asked.slice(before).flat();
    const nameOf = (q: Query): string => q.metric.find((m) => m.label === 'name')?.value as string;
    for (const q of second.filter((x) => ['kv_curr_items', 'kv_ops', 'sys_mem_total'].includes(nameOf(x)))) {
      expect(q.start).toBe(nameOf(q) === 'kv_ops' ? 1_700_000_010 : 1_700_000_030);
      expect((q as Query & { end?: number }).end).toBe(1_700_000_030);
    }
    for (const q of second) expect([1_700_000_010, 1_700_000_030]).toContain(q.start);
    expect(r2.set.get('couchbase_bucket_node_curr_items', { bucket: 'b', node: N1 })).toBe(100);
    expect(lines.filter((l) => l.includes(N3) && l.includes('ahead'))).toHaveLength(1);
    expect(statusSet(store.statusList()).get('cbwatch_stats_future_points_dropped_total', { collector: 'bucket_stats', node: N3 })).toBe(10);
  });
});

describe('every query\'s worst case within Prometheus\' 200,000-sample limit', () => {
  it('at 1,000 buckets after a gap of the longest window: the windows by hand', async () => {
    const { seriesPerItem, maxWindowSeconds, narrowing, SAMPLE_BUDGET, QUERY_MAX_SAMPLES } = await import('../../src/stats/range.js');
    const { KV_NATIVE_MAP } = await import('../../src/stats/native-map.js');
    const n = narrowing(KV_NATIVE_MAP);
    // kv_ops narrowed to 11 ops: get 2 + delete 2 + incr 2 + decr 2 + cas 3 + set, get_meta, set_meta, del_meta,
    // set_ret_meta, del_ret_meta 1 each = 17 series a bucket and node.
    expect(seriesPerItem('kv_ops', n.get('kv_ops'))).toBe(17);
    // 17,000 series: floor(180,000 / 17,000) = 10 points = 90 s.
    expect(maxWindowSeconds(17, 1000)).toBe(90);
    // kv_vb_queue_size (every state: 4): floor(180,000 / 4,000) = 45 points = 440 s.
    expect(seriesPerItem('kv_vb_queue_size', n.get('kv_vb_queue_size'))).toBe(4);
    expect(maxWindowSeconds(4, 1000)).toBe(440);
    // kv_dcp_items_sent is asked un-narrowed (ep_dcp_other_* needs every type: ns_server's not_any), taken as 16
    // connection types (8 named, `:total`, room for unnamed ones): floor(180,000 / 16,000) = 11 points = 100 s.
    expect(n.get('kv_dcp_items_sent')).toBeUndefined();
    expect(seriesPerItem('kv_dcp_items_sent', undefined)).toBe(16);
    expect(maxWindowSeconds(16, 1000)).toBe(100);
    // One series a bucket: 180 points = 1,790 s; one a node (sys_*): the longest window, 3,600 s (361 points).
    expect(maxWindowSeconds(1, 1000)).toBe(1790);
    expect(maxWindowSeconds(1, 1)).toBe(3600);
    expect(SAMPLE_BUDGET).toBeLessThan(QUERY_MAX_SAMPLES);
    // Hand check of the worst of them: 17,000 series × (90 / 10 + 1) points = 170,000 < 200,000; one step more would be 187,000.
    expect(17_000 * (90 / 10 + 1)).toBeLessThanOrEqual(200_000);
  });

  it('the queries of a poll after an hour\'s gap ask those windows (the previous poll counted 1,000 buckets)', async () => {
    const { rangeStateOf } = await import('../../src/stats/range.js');
    const asked: Query[][] = [];
    const client = clientFor({ membership: ALL_ACTIVE }, asked);
    const state = new Map<string, unknown>();
    const st = rangeStateOf(state);
    st.items = 1000;
    st.lastPoll = NOW - 3_600_000;
    await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' }, options: { per_node: true }, state, now: () => NOW });
    // end = floor(1,700,000,005 / 10) * 10 = 1,700,000,000 = T.
    const byName = new Map(asked.flat().map((q) => [q.metric.find((m) => m.label === 'name')?.value as string, q]));
    expect(byName.get('kv_ops')?.start).toBe(T - 90);
    expect(byName.get('kv_vb_ops_create')?.start).toBe(T - 440);
    expect(byName.get('kv_cmd_lookup')?.start).toBe(T - 1790);
    // The previous poll an hour ago (end T - 3,600): from the instant after it, within the longest window.
    expect(byName.get('sys_cpu_user_rate')?.start).toBe(T - 3590);
    // Metrics only levels read are asked for the end alone, whatever the gap: one point a series.
    for (const levelOnly of ['kv_vb_queue_size', 'kv_curr_items', 'sys_mem_total']) expect(byName.get(levelOnly)?.start).toBe(T);
    // kv_ops with one op matcher of its 11 ops.
    expect(byName.get('kv_ops')?.metric.filter((m) => m.label === 'op')).toEqual([{ label: 'op', value: ['cas', 'decr', 'del_meta', 'del_ret_meta', 'delete', 'get', 'get_meta', 'incr', 'set', 'set_meta', 'set_ret_meta'], operator: 'any' }]);
  });
});

describe('answers that are not data', () => {
  it('a 400 fails only its request, with its text logged (redacted, bounded), and the other requests\' values stay', async () => {
    const asked: Query[][] = [];
    const ok = rangeFake({ membership: ALL_ACTIVE }, asked);
    let n = 0;
    const lines: string[] = [];
    const client = fakeClient({
      '/pools/default/buckets': [{ name: 'b', bucketType: 'membase', nodes: [N1].map((hostname) => ({ hostname, clusterMembership: 'active', clusterCompatibility: 0x70006 })) }],
      '/pools/default/stats/range': (p: unknown, o: RequestOptions & { json?: unknown }) => (n++ === 1 ? { status: 400, text: `{"errors":{"step":"invalid interval ${'x'.repeat(1000)}"}}` } : ok(p, o)),
    });
    const log: Log = { ...SILENT_LOG, warn: (o: unknown, msg?: string) => void lines.push(`${JSON.stringify(o)} ${msg ?? ''}`), child: () => log };
    const r = await runPoll({
      collector: bucketStatsCollector,
      cluster: defaultClusterConfig({ url: client.baseUrl, statsSource: 'range' }),
      options: resolveCollectorOptions('bucket_stats', collectorSchemas.bucket_stats.parse({})),
      client,
      now: () => NOW,
      log,
    });
    expect(r.ok).toBe(true);
    const warned = lines.filter((l) => l.includes('(400)'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('invalid interval');
    // The body's text is cut (300 characters at most), never logged whole.
    expect(warned[0]?.length).toBeLessThan(600);
    expect(r.itemErrors.get('http_4xx')).toBe(1);
  });
});

describe('a node list the server refuses', () => {
  it('is dropped for the request (asked again without it, warned once) and for the next 10 minutes', async () => {
    const asked: Query[][] = [];
    const ok = rangeFake({ membership: ALL_ACTIVE }, asked);
    const lines: string[] = [];
    const client = fakeClient({
      '/pools/default/buckets': [{ name: 'b', bucketType: 'membase', nodes: Object.keys(ALL_ACTIVE).map((hostname) => ({ hostname, clusterMembership: 'active', clusterCompatibility: 0x70006 })) }],
      // menelaus_web_stats validate_nodes_v2: an unknown hostname fails the whole request.
      '/pools/default/stats/range': (p: unknown, o: RequestOptions & { json?: unknown }) => ((o.json as Query[]).some((q) => q.nodes !== undefined) ? { status: 400, text: '{"errors":{"nodes":"Unknown hostnames: [\\"n1:8091\\"]"}}' } : ok(p, o)),
    });
    const log: Log = { ...SILENT_LOG, warn: (o: unknown, msg?: string) => void lines.push(`${JSON.stringify(o)} ${msg ?? ''}`), child: () => log };
    const state = new Map<string, unknown>();
    const pollOnce = () =>
      runPoll({
        collector: bucketStatsCollector,
        cluster: defaultClusterConfig({ url: client.baseUrl, statsSource: 'range' }),
        options: resolveCollectorOptions('bucket_stats', collectorSchemas.bucket_stats.parse({})),
        client,
        state,
        now: () => NOW,
        log,
      });
    const r = await pollOnce();
    expect(r.ok).toBe(true);
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(1500);
    expect(lines.filter((l) => l.includes('refused the node list'))).toHaveLength(1);
    expect(r.itemErrors.size).toBe(0);
    const calls = client.calls.filter((c) => c.route === '/pools/default/stats/range').length;
    // 8 requests answered (the 7.6 table's 82 kv names, at most 11 a request), one refused.
    expect(calls).toBe(9);
    await pollOnce();
    expect(client.calls.filter((c) => c.route === '/pools/default/stats/range').length).toBe(calls + 8);
  });
});
