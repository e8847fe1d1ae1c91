/**
 * No silent loss: an item (a bucket, a replication) that exists but ends the poll with nothing to export from the
 * range API (every point of its series refused, or no series at all) is an item failure naming it, shown on the
 * landing page; never "ok … 0 series". Hand-made answers in menelaus_web_stats' shape.
 */
import { describe, expect, it } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { xdcrCollector } from '../../src/collectors/xdcr.js';
import type { RequestOptions } from '../../src/couchbase/client.js';
import { findProblems } from '../../src/server/problems.js';
import { collect, fakeClient } from '../helpers/collect.js';

const T = 1_700_000_000;
const NOW = T * 1000 + 5_000;
const N1 = 'n1:8091';

interface Query {
  metric: Array<{ label: string; value: string | string[] }>;
}

const nameOf = (q: Query): string => q.metric.find((m) => m.label === 'name')?.value as string;
const NODES = [{ hostname: N1, clusterMembership: 'active', services: ['kv'], clusterCompatibility: 0x70006 }];

/** Values every one of which the reader refuses: blank, hex, non-finite, a time given twice with two values. */
const REFUSED: Array<[number, string]> = [[T - 40, ''], [T - 30, ' '], [T - 20, '0x1F'], [T - 10, '+Inf'], [T, 'NaN'], [T + 1, '5'], [T + 1, '6']];

/** A bucket list of `buckets`; the range answers give series for `answered` only, with `values`. */
function bucketClient(buckets: readonly string[], answered: readonly string[], values: Array<[number, string]>) {
  return fakeClient({
    '/pools/default/buckets': buckets.map((name) => ({ name, bucketType: 'membase', nodes: NODES })),
    '/pools/default/stats/range': (_p: unknown, o: RequestOptions & { json?: unknown }) =>
      (o.json as Query[]).map((q) => ({ data: answered.map((bucket) => ({ metric: { nodes: [N1], name: nameOf(q), bucket }, values })), errors: [] })),
  });
}

async function pollBuckets(buckets: readonly string[], answered: readonly string[], values: Array<[number, string]>) {
  const r = await collect(bucketStatsCollector, bucketClient(buckets, answered, values), { cluster: { statsSource: 'range' }, now: () => NOW });
  return { r, problems: findProblems([{ base: { couchbase_cluster: 'test' }, set: r.set }], NOW) };
}

describe('bucket_stats from the range API', () => {
  it('a bucket whose every point is refused is an item failure named on the landing page, not a silent success', async () => {
    const { r, problems } = await pollBuckets(['b', 'ok'], ['b', 'ok'], REFUSED);
    // `ok` gets the same refused points: both named.
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBeUndefined();
    expect([...r.itemErrors.values()].reduce((a, b) => a + b, 0)).toBe(2);
    expect(r.set.statsGaps?.empty?.has('b')).toBe(true);
    expect(problems.some((p) => p.text.includes('bucket b') && p.alert === 'CbwatchCollectorItemErrors')).toBe(true);
  });

  it('a bucket of the bucket list that is in no range answer is counted and named; its neighbour keeps its values', async () => {
    const { r, problems } = await pollBuckets(['b', 'gone'], ['b'], [[T, '10']]);
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(10);
    expect([...r.itemErrors.values()].reduce((a, b) => a + b, 0)).toBe(1);
    expect([...(r.set.statsGaps?.empty?.keys() ?? [])]).toEqual(['gone']);
    expect(problems.filter((p) => p.text.includes('bucket gone'))).toHaveLength(1);
    expect(problems.filter((p) => p.text.includes('nothing to export')).map((p) => p.text)).toEqual(['bucket_stats: bucket gone has nothing to export (in no range API answer)']);
  });

  it('a bucket with values is not named', async () => {
    const { r } = await pollBuckets(['b'], ['b'], [[T, '10']]);
    expect(r.itemErrors.size).toBe(0);
    expect(r.set.statsGaps?.empty?.size ?? 0).toBe(0);
  });
});

describe('xdcr from the range API', () => {
  it('a replication of the tasks list with no usable point is an item failure named on the landing page', async () => {
    const id = 'uuid1/src/dst';
    const client = fakeClient({
      '/pools/default/buckets': [{ name: 'src', bucketType: 'membase', nodes: NODES }],
      '/pools/default/tasks': [{ type: 'xdcr', id, source: 'src', target: '/remoteClusters/uuid1/buckets/dst', status: 'running', errors: [] }],
      '/pools/default/remoteClusters': [{ name: 'remote', uuid: 'uuid1', hostname: 'r:8091', deleted: false }],
      '/pools/default/stats/range': (_p: unknown, o: RequestOptions & { json?: unknown }) =>
        (o.json as Query[]).map((q) => {
          const labels = { sourceBucketName: 'src', targetClusterUUID: 'uuid1', targetBucketName: 'dst', pipelineType: 'Main' };
          return { data: [{ metric: { nodes: [N1], name: nameOf(q), ...labels }, values: REFUSED }], errors: [] };
        }),
    });
    const r = await collect(xdcrCollector, client, { cluster: { statsSource: 'range' }, now: () => NOW });
    expect(r.set.get('couchbase_xdcr_changes_left', { node: N1 })).toBeUndefined();
    expect([...r.itemErrors.values()].reduce((a, b) => a + b, 0)).toBe(1);
    expect(r.set.statsGaps?.empty?.has(id)).toBe(true);
    const problems = findProblems([{ base: { couchbase_cluster: 'test' }, set: r.set }], NOW);
    expect(problems.some((p) => p.text.includes(`replication ${id}`))).toBe(true);
  });
});
