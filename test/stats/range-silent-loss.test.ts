/**
 * No silent loss: an item (a bucket, a replication) that exists but ends the poll with nothing to export from the
 * range API (every point of its series refused, or no series at all) is an item failure naming it, shown on the
 * landing page; never "ok … 0 series". Hand-made answers in menelaus_web_stats' shape.
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import { describe, expect, it } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { xdcrCollector } from '../../src/collectors/xdcr.js';
import type { RequestOptions } from '../../src/couchbase/client.js';
import { findProblems } from '../../src/metrics/problems.js';
import { SnapshotStore, statusSet } from '../../src/metrics/store.js';
import { KV_NATIVE_MAP, KV_ROW_BY_LEGACY } from '../../src/stats/native-map.js';
import type { NativeMapRow } from '../../src/stats/native-map.js';
import { nonNegativeMetrics } from '../../src/stats/range-grouping.js';
import { rowValue } from '../../src/stats/row-values.js';
import { AnswerGrouping, kvItemOf, StagedRequest } from '../../src/stats/range.js';
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
    expect(problems.filter((p) => p.text.includes('nothing to export')).map((p) => p.text)).toEqual(['bucket_stats: bucket gone has nothing to export (no usable point in the range API answers: no series, or every point refused)']);
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

/** One poll of one query (`metric`) of one series with `values`, read from its text (`parsed`: by JSON.parse). */
function refusedBy(values: unknown[], parsed: boolean): Map<string, number> {
  const data = [{ metric: { nodes: [N1], name: 'kv_curr_items', bucket: 'b', ...(parsed ? { note: 'a "quoted" note' } : {}) }, values }];
  const text = JSON.stringify([{ data, errors: [], startTimestamp: T - 60, endTimestamp: T + 60 }]);
  const a = new AnswerGrouping(KV_NATIVE_MAP, kvItemOf, new CounterMemo());
  const staged = a.readText(text, ['kv_curr_items'], new Set());
  a.commit(staged as StagedRequest);
  a.done();
  return new Map(a.caps.points);
}

describe.each([['read', false], ['parsed', true]] as const)('refused points are counted by reason (%s)', (_how, parsed) => {
  it('blank, hex, non-finite and a time given twice with two values: each counted under its reason', () => {
    expect(refusedBy(REFUSED, parsed)).toEqual(new Map([['blank', 2], ['not_a_number', 1], ['non_finite', 2], ['duplicate_time', 2]]));
  });
  it('a usable answer refuses nothing; a time given twice with one value is no refusal', () => {
    expect(refusedBy([[T - 10, '1'], [T, '2'], [T, '2']], parsed)).toEqual(new Map());
  });
  it('a time that is no number is refused under its own reason', () => {
    expect(refusedBy([['0x10', '1'], ['', '2'], [T, '3']], parsed)).toEqual(new Map([['not_a_number', 1], ['blank', 1]]));
  });
});

describe('the counter', () => {
  it('every refused point of a poll is on cbwatch_collector_dropped_values_total by reason and collector; the bucket is named failed', async () => {
    const r = await collect(bucketStatsCollector, bucketClient(['b'], ['b'], REFUSED), { cluster: { statsSource: 'range' }, now: () => NOW });
    const store = new SnapshotStore();
    store.record('test', r);
    const self = statusSet(store.statusList());
    const by = (reason: string): number => self.get('cbwatch_collector_dropped_values_total', { collector: 'bucket_stats', reason }) ?? 0;
    // Every query's series of b holds the same points: 2 blank, 1 hex, 2 non-finite, 2 at one time with two values.
    const k = by('not_a_number');
    expect(k).toBeGreaterThan(0);
    expect([by('blank'), by('non_finite'), by('duplicate_time')]).toEqual([2 * k, 2 * k, 2 * k]);
    expect(r.set.statsGaps?.empty?.get('b')).toBe('no usable point in the range API answers: no series, or every point refused');
    expect(r.itemErrors.get('bad_body')).toBe(1);
  });
});

/** One poll of `metric`'s one series of bucket b with `values`: its groups and what was refused. */
function pollOne(metric: string, values: unknown[], parsed: boolean) {
  const data = [{ metric: { nodes: [N1], name: metric, bucket: 'b', ...(parsed ? { note: 'a "quoted" note' } : {}) }, values }];
  const text = JSON.stringify([{ data, errors: [], startTimestamp: T - 60, endTimestamp: T + 60 }]);
  const a = new AnswerGrouping(KV_NATIVE_MAP, kvItemOf, new CounterMemo());
  a.commit(a.readText(text, [metric], new Set()) as StagedRequest);
  return { g: a.done(), refused: new Map(a.caps.points) };
}

const CURR_ITEMS = KV_ROW_BY_LEGACY.get('curr_items') as NativeMapRow;
const OPS = KV_ROW_BY_LEGACY.get('ops') as NativeMapRow;

describe.each([['read', false], ['parsed', true]] as const)('values below 0 where Couchbase cannot have them (%s)', (_how, parsed) => {
  it('curr_items of -1 is refused and counted as negative, not exported', () => {
    const { g, refused } = pollOne('kv_curr_items', [[T, '-1']], parsed);
    expect(rowValue(CURR_ITEMS, g, 'b', undefined)).toBeUndefined();
    expect(refused).toEqual(new Map([['negative', 1]]));
  });

  it('a counter going down below 0 is no reset: ops_per_second has no value, not a negative rate', () => {
    const { g, refused } = pollOne('kv_cmd_lookup', [[T - 20, '-100'], [T - 10, '-2155974654'], [T, '-2155974660']], parsed);
    expect(rowValue(OPS, g, 'b', undefined)).toBeUndefined();
    expect(refused).toEqual(new Map([['negative', 3]]));
  });

  it('a negative point among good ones is dropped: the rate is over the good points (6 in 20 s)', () => {
    const { g, refused } = pollOne('kv_cmd_lookup', [[T - 20, '100'], [T - 10, '-50'], [T, '106']], parsed);
    expect(rowValue(OPS, g, 'b', undefined)).toBeCloseTo(0.3, 12);
    expect(refused).toEqual(new Map([['negative', 1]]));
  });
});

describe('which native metrics cannot be negative', () => {
  it('items, sizes and operation counts cannot; clock drift and the hibernation difference can', () => {
    const yes = nonNegativeMetrics(KV_NATIVE_MAP);
    for (const m of ['kv_curr_items', 'kv_cmd_lookup', 'kv_ops', 'kv_mem_used_bytes', 'kv_ep_db_file_size_bytes']) expect(yes.has(m), m).toBe(true);
    for (const m of ['kv_ep_hlc_drift_seconds', 'kv_ep_hlc_drift_count', 'cm_request_hibernates_total', 'cm_request_unhibernates_total']) expect(yes.has(m), m).toBe(false);
  });
});

describe('node names checked against the cluster\'s nodes', () => {
  it('XDCR series of 50 invented nodes are dropped and counted (unknown_node), never exported per node; the member\'s stay', async () => {
    const id = 'uuid1/src/dst';
    const fresh = Array.from({ length: 50 }, (_, i) => `x${i}.invalid:8091`);
    const client = fakeClient({
      '/pools/default/buckets': [{ name: 'src', bucketType: 'membase', nodes: NODES }],
      '/pools/default/tasks': [{ type: 'xdcr', id, source: 'src', target: '/remoteClusters/uuid1/buckets/dst', status: 'running', errors: [] }],
      '/pools/default/remoteClusters': [{ name: 'remote', uuid: 'uuid1', hostname: 'r:8091', deleted: false }],
      '/pools/default/stats/range': (_p: unknown, o: RequestOptions & { json?: unknown }) =>
        (o.json as Query[]).map((q) => {
          const name = nameOf(q);
          const labels = { sourceBucketName: 'src', targetClusterUUID: 'uuid1', targetBucketName: 'dst', pipelineType: 'Main' };
          const data = name === 'xdcr_changes_left_total' ? [N1, ...fresh].map((n) => ({ metric: { nodes: [n], name, ...labels }, values: [[T, '7']] })) : [];
          return { data, errors: [] };
        }),
    });
    const r = await collect(xdcrCollector, client, { cluster: { statsSource: 'range' }, now: () => NOW });
    expect(r.set.get('couchbase_xdcr_changes_left', { node: N1 })).toBe(7);
    for (const n of fresh) expect(r.set.get('couchbase_xdcr_changes_left', { node: n })).toBeUndefined();
    expect(r.set.dropped.get('unknown_node')).toBe(50);
  });
});
