/**
 * The service statistics core (src/stats/service-*.ts) against hand-made answers: the shared range request (one
 * POST for every enabled spec, a regex query per spec asked of that service's nodes), each spec valued with its own
 * memo, the range source's protections (unknown nodes, refused points, partial answers, 403, 404 → envelopes) and
 * the envelope side (per-node route, mean of the per-second samples since the previous poll). Every expected value
 * is worked out by hand from the numbers in the answers below.
 *
 * Shapes followed (facts, as read):
 * - the range API answers one `{data: [{metric: {name, nodes: [host], …labels}, values: [[t, "v"], …]}], errors:
 *   [{node, error}]}` per query (ns_server@7.6.2:src/menelaus_web_stats.erl, handle_range_post);
 * - a legacy section answers the bucket envelope's shape `{op: {samples: {timestamp: […], <stat>: […]}, lastTStamp}}`
 *   at `/pools/default/buckets/@<section>[/nodes/<host:port>]/stats` (ns_server@7.6.2:src/menelaus_web.erl, handlers
 *   menelaus_stats:handle_stats_section/3 and handle_stats_section_for_node/4);
 * - a counter in a legacy service section is a per-second rate, a gauge a level (ns_server@6.6.5:
 *   src/base_stats_collector.erl calculate_counters).
 */
import { describe, expect, it } from 'vitest';
import { createSharedCache } from '../../src/collectors/shared.js';
import type { RequestOptions } from '../../src/couchbase/client.js';
import { SampleSet } from '../../src/metrics/family.js';
import { SILENT_LOG } from '../../src/log-core.js';
import { declareServiceStats, itemKey, serviceValues } from '../../src/stats/service-values.js';
import type { ServiceContext } from '../../src/stats/service-values.js';
import { ITEM_WIDE } from '../../src/stats/values.js';
import { fakeClient } from '../helpers/collect.js';
import type { FakeRoute } from '../helpers/collect.js';

const T = 1_700_000_000;
const A = 'a:8091';
const B = 'b:8091';
const C = 'c:8091';
const COMPAT_76 = 7 * 0x10000 + 6;

const NODE_SPEC = declareServiceStats({
  id: 'test_node',
  collector: 'test_node_collector',
  service: 'n1ql',
  itemLabels: [],
  perNode: true,
  rows: [
    { stat: 'query_requests', kind: 'rate', native: 'n1ql_requests' },
    { stat: 'query_active_requests', kind: 'level', native: 'n1ql_active_requests' },
    { stat: 'query_avg_req_time', kind: 'mean_of_two', native: 'n1ql_request_time', legacy: 'query_request_time', per: { legacy: 'query_requests', native: 'n1ql_requests' }, scale: 1e-9 },
    { stat: 'query_load', kind: 'level', native: 'n1ql_load', legacy: null },
  ],
  envelope: { sections: ['query'] },
});

const ITEM_SPEC = declareServiceStats({
  id: 'test_items',
  collector: 'test_items_collector',
  service: 'eventing',
  itemLabels: ['functionName'],
  perNode: false,
  rows: [{ stat: 'dcp_backlog', kind: 'total', native: 'eventing_dcp_backlog' }],
  envelope: {
    sections: ['eventing'],
    keyOf: (_section, key) => {
      const m = /^eventing\/([^/]+)\/(.+)$/.exec(key);
      return m === null ? undefined : { item: m[1] as string, stat: m[2] as string };
    },
  },
});

/** /pools/default: A runs n1ql and eventing, B n1ql and eventing, C kv only. */
const POOLS = {
  nodes: [
    { hostname: A, clusterMembership: 'active', services: ['n1ql', 'eventing'] },
    { hostname: B, clusterMembership: 'active', services: ['n1ql', 'eventing'] },
    { hostname: C, clusterMembership: 'active', services: ['kv'] },
  ],
};
const BUCKETS = [{ name: 'b', nodes: [{ hostname: C, clusterCompatibility: COMPAT_76 }] }];

interface Query {
  metric: Array<{ label: string; value: string; operator?: string }>;
  start: number;
  end?: number;
  step: number;
  nodes?: string[];
}

const pt = (t: number, v: number): [number, string] => [t, String(v)];

function ctxFor(routes: Record<string, FakeRoute>, o: { now: number; state?: Map<string, unknown>; shared?: ReturnType<typeof createSharedCache>; statsSource?: 'auto' | 'range' | 'envelope'; enabled?: Record<string, boolean> }) {
  const client = fakeClient({ '/pools/default': POOLS, '/pools/default/buckets': BUCKETS, ...routes });
  const failures: Array<{ item: string; err: unknown }> = [];
  const skipped: string[] = [];
  let notApplicable: string | undefined;
  const out = new SampleSet();
  const collectors: Record<string, { enabled: boolean; interval: number }> = {};
  for (const [k, v] of Object.entries(o.enabled ?? { test_node_collector: true, test_items_collector: true })) collectors[k] = { enabled: v, interval: 30_000 };
  const ctx: ServiceContext & { notApplicable(r: string): void } = {
    client,
    shared: o.shared ?? createSharedCache(() => o.now),
    cluster: { statsSource: o.statsSource ?? 'auto', requestTimeout: 10_000, concurrency: 4, collectors },
    options: { interval: 30_000, timeout: 25_000 },
    signal: new AbortController().signal,
    log: SILENT_LOG,
    now: () => o.now,
    out,
    state: o.state ?? new Map(),
    skipped: (r) => skipped.push(r),
    itemFailed: (item, err) => failures.push({ item, err }),
    notApplicable: (r) => {
      notApplicable = r;
    },
  };
  return { ctx, client, out, failures, skipped, get notApplicable() {
    return notApplicable;
  } };
}

/** The fake range API: answers each query from `answer(name regex, nodes)`; records the POSTs. */
function rangeRoute(posts: Query[][], answer: (q: Query) => unknown): FakeRoute {
  return (_p: unknown, opt: RequestOptions) => {
    const qs = opt.json as Query[];
    posts.push(qs);
    return qs.map(answer);
  };
}

describe('service statistics, range source', () => {
  /**
   * Poll 1 (newest instant T): node A's n1ql_requests 100, 110, 130 at T-20, T-10, T and n1ql_request_time 1e9,
   * 2e9, 5e9 ns. First poll: the increase over the window's points: 30 requests in 20 s = 1.5/s; request time
   * (5e9 - 1e9) / 30 ns = 0.13333 s. B: n1ql_active_requests 3. C is no n1ql node: its series are dropped (3 points).
   * Poll 2 (newest T+20): A's requests 140, 150 at T+10, T+20: 20 more over the 20 s since T's point = 1/s; request
   * time 6e9, 6e9: 1e9 ns over 20 requests = 0.05 s.
   */
  const answer1 = (q: Query): unknown => {
    if (q.metric[0]?.value.includes('eventing_dcp_backlog')) {
      return {
        data: [
          { metric: { name: 'eventing_dcp_backlog', functionName: 'f1', nodes: [A] }, values: [pt(T, 5)] },
          { metric: { name: 'eventing_dcp_backlog', functionName: 'f1', nodes: [B] }, values: [pt(T, 7)] },
        ],
        errors: [],
      };
    }
    return {
      data: [
        { metric: { name: 'n1ql_requests', nodes: [A] }, values: [pt(T - 20, 100), pt(T - 10, 110), pt(T, 130)] },
        { metric: { name: 'n1ql_request_time', nodes: [A] }, values: [pt(T - 20, 1e9), pt(T - 10, 2e9), pt(T, 5e9)] },
        { metric: { name: 'n1ql_active_requests', nodes: [B] }, values: [pt(T, 3)] },
        { metric: { name: 'n1ql_active_requests', nodes: [C] }, values: [pt(T - 20, 1), pt(T - 10, 1), pt(T, 1)] },
      ],
      errors: [],
    };
  };

  it('asks every enabled spec in one POST, one regex query per spec of its service nodes, and values each spec with its own memo', async () => {
    const posts: Query[][] = [];
    const shared = createSharedCache(() => T * 1000 + 5000);
    const node = ctxFor({ '/pools/default/stats/range': rangeRoute(posts, answer1) }, { now: T * 1000 + 5000, shared });
    const items = ctxFor({ '/pools/default/stats/range': rangeRoute(posts, answer1) }, { now: T * 1000 + 5000, shared });
    const v = await serviceValues(node.ctx, NODE_SPEC);
    const w = await serviceValues(items.ctx, ITEM_SPEC);
    expect(posts).toHaveLength(1);
    const qs = posts[0] as Query[];
    expect(qs).toHaveLength(2);
    const q = qs.find((x) => x.metric[0]?.value.includes('n1ql')) as Query;
    expect(q.metric).toEqual([{ label: 'name', value: '(n1ql_active_requests|n1ql_load|n1ql_request_time|n1ql_requests)', operator: '=~' }]);
    expect(q.nodes).toEqual([A, B]);
    expect(q.step).toBe(10);
    expect(qs.find((x) => x.metric[0]?.value === 'eventing_dcp_backlog')?.nodes).toEqual([A, B]);

    expect(v?.items.get(A)?.sets.get(A)?.get('query_requests')).toBeCloseTo(1.5, 12);
    expect(v?.items.get(A)?.sets.get(A)?.get('query_avg_req_time')).toBeCloseTo(4 / 30, 12);
    expect(v?.items.get(B)?.sets.get(B)?.get('query_active_requests')).toBe(3);
    // Not answered: absent, not zero.
    expect(v?.items.get(A)?.sets.get(A)?.has('query_load')).toBe(false);
    expect(v?.items.has(C)).toBe(false);
    expect(node.out.dropped.get('unknown_node')).toBe(3);
    expect(v?.kindOf('query_requests')).toBe('rate');
    expect(v?.kindOf('query_avg_req_time')).toBe('mean');
    // Summed over the nodes: 5 + 7.
    expect(w?.items.get(itemKey(['f1']))?.sets.get(ITEM_WIDE)?.get('dcp_backlog')).toBe(12);

    // Poll 2, 20 s later: a new shared answer; the node spec's memo holds T's points.
    const posts2: Query[][] = [];
    const later = ctxFor(
      {
        '/pools/default/stats/range': rangeRoute(posts2, () => ({
          data: [
            { metric: { name: 'n1ql_requests', nodes: [A] }, values: [pt(T + 10, 140), pt(T + 20, 150)] },
            { metric: { name: 'n1ql_request_time', nodes: [A] }, values: [pt(T + 10, 6e9), pt(T + 20, 6e9)] },
          ],
          errors: [],
        })),
      },
      { now: T * 1000 + 25_000, state: node.ctx.state },
    );
    const v2 = await serviceValues(later.ctx, NODE_SPEC);
    expect(posts2).toHaveLength(1);
    expect(v2?.items.get(A)?.sets.get(A)?.get('query_requests')).toBeCloseTo(1, 12);
    expect(v2?.items.get(A)?.sets.get(A)?.get('query_avg_req_time')).toBeCloseTo(0.05, 12);
    // B's series are gone: B has no values (no stale level).
    expect(v2?.items.has(B)).toBe(false);
  });

  it('leaves a mean of two absent when its denominator did not increase, and refuses negative points', async () => {
    const posts: Query[][] = [];
    const c = ctxFor(
      {
        '/pools/default/stats/range': rangeRoute(posts, () => ({
          data: [
            { metric: { name: 'n1ql_requests', nodes: [A] }, values: [pt(T - 10, 50), pt(T, 50)] },
            { metric: { name: 'n1ql_request_time', nodes: [A] }, values: [pt(T - 10, 7), pt(T, 7)] },
            { metric: { name: 'n1ql_active_requests', nodes: [A] }, values: [pt(T - 10, 2), pt(T, -1)] },
          ],
          errors: [],
        })),
      },
      { now: T * 1000 + 1000, enabled: { test_node_collector: true, test_items_collector: false } },
    );
    const v = await serviceValues(c.ctx, NODE_SPEC);
    const a = v?.items.get(A)?.sets.get(A);
    expect(a?.get('query_requests')).toBe(0);
    expect(a?.has('query_avg_req_time')).toBe(true);
    expect(a?.get('query_avg_req_time')).toBeUndefined();
    // The -1 point is refused: the newest usable point is 2.
    expect(a?.get('query_active_requests')).toBe(2);
    expect(c.out.dropped.get('negative')).toBe(1);
    // The disabled collector's spec is not asked.
    expect(posts[0]).toHaveLength(1);
  });

  it("reports a node an errors entry names as that node's item failure, keeping the other node's values", async () => {
    const c = ctxFor(
      {
        '/pools/default/stats/range': rangeRoute([], () => ({
          data: [{ metric: { name: 'n1ql_active_requests', nodes: [A] }, values: [pt(T, 4)] }],
          errors: [{ node: B, error: 'Node is not available' }],
        })),
      },
      { now: T * 1000 + 1000, enabled: { test_items_collector: false } },
    );
    const v = await serviceValues(c.ctx, NODE_SPEC);
    expect(v?.items.get(A)?.sets.get(A)?.get('query_active_requests')).toBe(4);
    expect(c.failures.map((f) => f.item)).toEqual([`range node ${B}`]);
    expect(c.out.statsGaps?.missing.get(B)).toBe('Node is not available');
    // A second table read in the same poll (processes, search_index and index read two) lacks the same node: the
    // node is one item failure of the poll, not one per table.
    await serviceValues(c.ctx, NODE_SPEC);
    expect(c.failures.map((f) => f.item)).toEqual([`range node ${B}`]);
  });

  it('completes a shared answer made without a spec (its collector was off) with a request for that spec alone', async () => {
    const posts: Query[][] = [];
    const shared = createSharedCache(() => T * 1000 + 5000);
    const first = ctxFor({ '/pools/default/stats/range': rangeRoute(posts, answer1) }, { now: T * 1000 + 5000, shared, enabled: { test_items_collector: false } });
    const then = ctxFor({ '/pools/default/stats/range': rangeRoute(posts, answer1) }, { now: T * 1000 + 5000, shared });
    await serviceValues(first.ctx, NODE_SPEC);
    const w = await serviceValues(then.ctx, ITEM_SPEC);
    expect(posts.map((p) => p.map((q) => q.metric[0]?.value))).toEqual([['(n1ql_active_requests|n1ql_load|n1ql_request_time|n1ql_requests)'], ['eventing_dcp_backlog']]);
    expect(w?.items.get('f1')?.sets.get(ITEM_WIDE)?.get('dcp_backlog')).toBe(12);
    // Reused within its age: no third request.
    await serviceValues(then.ctx, NODE_SPEC);
    expect(posts).toHaveLength(2);
  });

  it('fails the poll when every node of the spec failed, naming the cause', async () => {
    const c = ctxFor(
      { '/pools/default/stats/range': rangeRoute([], () => ({ data: [], errors: [{ error: 'query processing failed' }] })) },
      { now: T * 1000 + 1000, enabled: { test_items_collector: false } },
    );
    await expect(serviceValues(c.ctx, NODE_SPEC)).rejects.toThrow(/test_node statistics failed on every node: .*query processing failed/);
  });

  it('names a service node that answered no series while another did, as missing', async () => {
    const c = ctxFor(
      { '/pools/default/stats/range': rangeRoute([], () => ({ data: [{ metric: { name: 'n1ql_active_requests', nodes: [A] }, values: [pt(T, 4)] }], errors: [] })) },
      { now: T * 1000 + 1000, enabled: { test_items_collector: false } },
    );
    await serviceValues(c.ctx, NODE_SPEC);
    expect(c.failures.map((f) => f.item)).toEqual([`range node ${B}`]);
    expect(c.out.statsGaps?.missing.get(B)).toBe('no statistics in the answer');
  });

  it('asks once more without the node list when the range API refuses it (400), still dropping series of other nodes', async () => {
    const posts: Query[][] = [];
    const c = ctxFor(
      {
        '/pools/default/stats/range': (_p: unknown, opt: RequestOptions) => {
          const qs = opt.json as Query[];
          posts.push(qs);
          if (qs[0]?.nodes !== undefined) return { status: 400, text: '{"errors":{"nodes":"Unknown hostname"}}' };
          return [{ data: [{ metric: { name: 'n1ql_active_requests', nodes: [A] }, values: [pt(T, 4)] }, { metric: { name: 'n1ql_active_requests', nodes: [C] }, values: [pt(T, 9)] }], errors: [] }];
        },
      },
      { now: T * 1000 + 1000, enabled: { test_items_collector: false } },
    );
    const v = await serviceValues(c.ctx, NODE_SPEC);
    expect(posts.map((p) => p[0]?.nodes)).toEqual([[A, B], undefined]);
    expect(v?.items.get(A)?.sets.get(A)?.get('query_active_requests')).toBe(4);
    expect(v?.items.has(C)).toBe(false);
    expect(c.out.dropped.get('unknown_node')).toBe(1);
  });

  it('fails the poll naming the permission on 403', async () => {
    const c = ctxFor({ '/pools/default/stats/range': { status: 403, body: { message: 'Forbidden' } } }, { now: T * 1000, enabled: { test_items_collector: false } });
    await expect(serviceValues(c.ctx, NODE_SPEC)).rejects.toThrow(/403.*missing permission/);
  });

  it('falls back to the envelopes on 404 under auto', async () => {
    const env = { op: { samples: { timestamp: [T * 1000 - 1000, T * 1000], query_active_requests: [1, 2] }, lastTStamp: T * 1000 } };
    const c = ctxFor(
      { '/pools/default/stats/range': { status: 404, text: 'Not found.' }, '/pools/default/buckets/@{section}/nodes/{node}/stats': env },
      { now: T * 1000 + 500, enabled: { test_items_collector: false } },
    );
    const v = await serviceValues(c.ctx, NODE_SPEC);
    expect(v?.items.get(A)?.sets.get(A)?.get('query_active_requests')).toBe(2);
    expect(v?.items.get(B)?.sets.get(B)?.get('query_active_requests')).toBe(2);
  });

  it('is not applicable, with no statistics request, where no node runs the service', async () => {
    const spec = declareServiceStats({ id: 'test_cbas', collector: 'test_cbas', service: 'cbas', itemLabels: [], perNode: true, rows: [{ stat: 'cbas_thread_count', kind: 'level', native: 'cbas_thread_count' }], envelope: { sections: ['cbas'] } });
    const c = ctxFor({}, { now: T * 1000, enabled: { test_items_collector: false, test_node_collector: false } });
    expect(await serviceValues(c.ctx, spec)).toBeUndefined();
    expect(c.notApplicable).toBe('no cbas service');
    expect(c.client.calls.map((x) => x.route)).toEqual(['/pools/default']);
  });
});

describe('service statistics, envelope source', () => {
  /**
   * Node A's @query answer at zoom=minute (1 s samples), first poll, interval 30 s: every sample is new.
   * query_requests (per second) 2, 4, 0, 6 → mean 3/s. query_request_time (ns per second) 2e8, 4e8, 0, 6e8 → the
   * mean per request: (2e8 + 4e8 + 0 + 6e8) / (2 + 4 + 0 + 6) = 1e8 ns = 0.1 s. Active requests: the newest, 5.
   */
  const samplesA = { timestamp: [1, 2, 3, 4].map((s) => T * 1000 - 4000 + s * 1000), query_requests: [2, 4, 0, 6], query_request_time: [2e8, 4e8, 0, 6e8], query_active_requests: [9, 9, 9, 5] };
  const samplesB = { timestamp: samplesA.timestamp, query_requests: [0, 0, 0, 0], query_request_time: [0, 0, 0, 0], query_active_requests: [0, 0, 0, 1] };

  it('reads each node of the service from its own route, rates as the mean of the new samples and a mean of two as the ratio of the sums', async () => {
    const seen: string[] = [];
    const c = ctxFor(
      {
        '/pools/default/buckets/@{section}/nodes/{node}/stats': (p: Record<string, string>) => {
          seen.push(`${p.section} ${p.node}`);
          return { op: { samples: p.node === A ? samplesA : samplesB, lastTStamp: T * 1000 } };
        },
      },
      { now: T * 1000 + 500, statsSource: 'envelope' },
    );
    const v = await serviceValues(c.ctx, NODE_SPEC);
    expect(seen.sort()).toEqual([`query ${A}`, `query ${B}`]);
    const a = v?.items.get(A)?.sets.get(A);
    expect(a?.get('query_requests')).toBe(3);
    expect(a?.get('query_avg_req_time')).toBeCloseTo(0.1, 12);
    expect(a?.get('query_active_requests')).toBe(5);
    // A 7.x-only stat: absent from the envelope values.
    expect(a?.has('query_load')).toBe(false);
    // B served no request: no mean per request.
    const b = v?.items.get(B)?.sets.get(B);
    expect(b?.get('query_requests')).toBe(0);
    expect(b?.has('query_avg_req_time')).toBe(true);
    expect(b?.get('query_avg_req_time')).toBeUndefined();
    expect(c.client.calls.map((x) => x.path.split('?')[0])).toContain('/pools/default/buckets/@query/nodes/a%3A8091/stats');
  });

  it("reports a node whose section answers timestamps and no statistic (down) as that node's failure", async () => {
    const c = ctxFor(
      {
        '/pools/default/buckets/@{section}/nodes/{node}/stats': (p: Record<string, string>) => ({ op: { samples: p.node === A ? samplesA : { timestamp: samplesA.timestamp }, lastTStamp: T * 1000 } }),
      },
      { now: T * 1000 + 500, statsSource: 'envelope' },
    );
    const v = await serviceValues(c.ctx, NODE_SPEC);
    expect(v?.items.get(A)?.sets.get(A)?.get('query_requests')).toBe(3);
    expect(v?.items.has(B)).toBe(false);
    expect(c.failures.map((f) => f.item)).toEqual([`@query on ${B}`]);
  });

  it('splits a per-item section by its keys and reads the cluster-wide answer for a spec summed over the nodes', async () => {
    const c = ctxFor(
      {
        '/pools/default/buckets/@{section}/stats': (p: Record<string, string>) => ({
          op: { samples: { timestamp: [T * 1000], 'eventing/f1/dcp_backlog': [12], 'eventing/f2/dcp_backlog': [0], 'eventing/dcp_backlog': [12] }, lastTStamp: T * 1000, section: p.section },
        }),
      },
      { now: T * 1000 + 500, statsSource: 'envelope' },
    );
    const v = await serviceValues(c.ctx, ITEM_SPEC);
    expect(v?.items.get('f1')?.sets.get(ITEM_WIDE)?.get('dcp_backlog')).toBe(12);
    expect(v?.items.get('f2')?.sets.get(ITEM_WIDE)?.get('dcp_backlog')).toBe(0);
    expect(v?.items.size).toBe(2);
    expect(c.client.calls.filter((x) => x.route.includes('@')).map((x) => x.path.split('?')[0])).toEqual(['/pools/default/buckets/@eventing/stats']);
  });

  it('is not applicable where the spec has no envelope source and the envelopes are chosen', async () => {
    const spec = declareServiceStats({ id: 'test_proc', collector: 'test_proc', service: '*', itemLabels: ['proc'], perNode: true, rows: [{ stat: 'mem_resident', kind: 'level', native: 'sysproc_mem_resident' }], noEnvelope: 'per-process statistics are not served over REST before 7.0' });
    const c = ctxFor({}, { now: T * 1000, statsSource: 'envelope' });
    expect(await serviceValues(c.ctx, spec)).toBeUndefined();
    expect(c.notApplicable).toBe('the test_proc statistics are served by the range API only (stats_source: envelope)');
    // Before 7.0 (auto): the spec's own reason, and no statistics request.
    const old = ctxFor({ '/pools/default/buckets': [{ name: 'b', nodes: [{ hostname: C, clusterCompatibility: 6 * 0x10000 + 6 }] }] }, { now: T * 1000 });
    expect(await serviceValues(old.ctx, spec)).toBeUndefined();
    expect(old.notApplicable).toBe('per-process statistics are not served over REST before 7.0');
    expect(old.client.calls.map((x) => x.route).sort()).toEqual(['/pools/default', '/pools/default/buckets']);
  });
});
