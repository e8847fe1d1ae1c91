/**
 * The range source's rules, with hand-written answers and values: exact increases with counter resets, stalls and
 * clock steps; ratios from summed parts; an `errors` entry costs only what needs that node; the documented answer
 * parses; the source is chosen by the cluster's compatibility version, and a 7.0+ cluster without the range API
 * falls back (auto) or fails (range).
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import { describe, expect, it, vi } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { KV_ROW_BY_LEGACY, nativeMetricsOf } from '../../src/stats/native-map.js';
import type { NativeMapRow } from '../../src/stats/native-map.js';
import { AnswerGrouping, answerWeight, balancedBatches, buildQueries, groupSeries as groupRows, kvItemOf, narrowing, parseQueryAnswer, summableMetrics, xdcrItemOf } from '../../src/stats/range.js';
import type { QueryResult } from '../../src/stats/range.js';
import { ALL_NODES } from '../../src/stats/range-groups.js';
import { rowValue } from '../../src/stats/row-values.js';
import { seriesKey, seriesValue } from '../../src/stats/range-values.js';
import { KV_NATIVE_MAP } from '../../src/stats/native-map.js';
import type { Point } from '../../src/stats/range-values.js';
import { clusterCompat } from '../../src/stats/source.js';
import { collect, fakeClient, loadFixture } from '../helpers/collect.js';

const p = (t: number, v: number): Point => ({ t: t * 1000, v });
const row = (legacy: string): NativeMapRow => KV_ROW_BY_LEGACY.get(legacy) as NativeMapRow;
/** The bucket table's groups. */
const groupSeries = (results: readonly QueryResult[], itemOf: typeof kvItemOf, memo: CounterMemo) => groupRows(KV_NATIVE_MAP, results, itemOf, memo);

// The mean (derive 'mean', a gauge's window mean) is over the points after the previous newest one, as the increase.
describe('seriesValue: the exact increase since the previous newest point', () => {
  it('first answer: over its own points', () => {
    expect(seriesValue([p(0, 100), p(10, 110), p(20, 130)], undefined)).toEqual({ newest: p(20, 130), inc: 30, secs: 20, mean: 340 / 3 });
  });
  it('later answers: from the previous newest point, whatever the window holds before it', () => {
    expect(seriesValue([p(0, 100), p(10, 110), p(20, 130), p(30, 160)], p(10, 110))).toEqual({ newest: p(30, 160), inc: 50, secs: 20, mean: (130 + 160) / 2 });
  });
  it('consecutive answers add up to the whole increase (no irate over the last two points)', () => {
    const pts = [p(0, 0), p(10, 5), p(20, 50), p(30, 52), p(40, 100)];
    const a = seriesValue(pts.slice(0, 3), p(0, 0));
    const b = seriesValue(pts.slice(1), a?.newest);
    expect((a?.inc ?? 0) + (b?.inc ?? 0)).toBe(100);
    expect(b).toEqual({ newest: p(40, 100), inc: 50, secs: 20, mean: (52 + 100) / 2 });
  });
  it('a decrease is a counter reset: the increase after it counts from 0', () => {
    expect(seriesValue([p(10, 110), p(20, 5), p(30, 25)], p(10, 110))).toEqual({ newest: p(30, 25), inc: 25, secs: 20, mean: (5 + 25) / 2 });
  });
  it('no point newer than the previous one (stalled): the level, no increase', () => {
    expect(seriesValue([p(20, 130), p(30, 160)], p(30, 160))).toEqual({ newest: p(30, 160) });
  });
  it('a newest point older than the previous one (clock stepped back): nothing of a rate', () => {
    expect(seriesValue([p(20, 130), p(30, 160)], p(40, 170))).toEqual({ newest: p(30, 160) });
  });
  it('one point and no previous one: a level (and a mean of that one point), no increase', () => {
    expect(seriesValue([p(30, 160)], undefined)).toEqual({ newest: p(30, 160), mean: 160 });
  });
});

describe('xdcrItemOf: the replication id of the tasks list', () => {
  const labels = (u: string, sb: string, tb: string) => ({ targetClusterUUID: u, sourceBucketName: sb, targetBucketName: tb, pipelineType: 'Main' });

  it('is <remote uuid>/<source bucket>/<target bucket>, and none without all three', () => {
    expect(xdcrItemOf(labels('c0ffee', 'travel-sample', 'backup'))).toBe('c0ffee/travel-sample/backup');
    expect(xdcrItemOf(labels('c0ffee', 'travel-sample', 'backup2'))).toBe('c0ffee/travel-sample/backup2');
    expect(xdcrItemOf(labels('c0ffe', 'etravel-sample', 'backup'))).toBe('c0ffe/etravel-sample/backup');
    expect(xdcrItemOf({ targetClusterUUID: 'c0ffee', sourceBucketName: 'a' })).toBeUndefined();
  });

  it('gives the right ids past the number it keeps made (it then starts again)', () => {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 12_000; i++) expect(xdcrItemOf(labels(`u${i % 7}`, `s${i}`, 't'))).toBe(`u${i % 7}/s${i}/t`);
    }
  });
});

describe('parseQueryAnswer', () => {
  it('reads the documented POST answer (docs-server rest-statistics-multiple)', () => {
    const docs = loadFixture<unknown[]>('pools-default-stats-range/docs-server-7.0plus-multiple-post.json');
    const r = parseQueryAnswer('kv_disk_write_queue', docs[1]);
    expect(r.errors).toEqual([]);
    expect(r.series).toEqual([{ metric: 'kv_disk_write_queue', node: '10.144.210.101:8091', labels: { name: 'kv_disk_write_queue' }, points: [p(1623745200, 0), p(1623745260, 0)] }]);
    const first = parseQueryAnswer('sysproc_cpu_utilization', docs[0]);
    expect(first.series[0]?.points.map((x) => x.v)).toEqual([3, 3, 3, 4, 3]);
  });
  it('an errors entry names the node whose answer is missing', () => {
    const r = parseQueryAnswer('kv_ops', { data: [], errors: [{ node: 'n2:8091', error: 'Request timed out' }] });
    expect([...r.erroredNodes]).toEqual(['n2:8091']);
    expect(r.errors).toEqual(['n2:8091: Request timed out']);
  });
  it('skips aggregated series (several nodes) and values that are not numbers', () => {
    const r = parseQueryAnswer('x', { data: [{ metric: { nodes: ['a', 'b'] }, values: [[1, '1']] }, { metric: { nodes: ['a'] }, values: [[1, 'NaN'], [2, '7']] }], errors: [] });
    expect(r.series).toEqual([{ metric: 'x', node: 'a', labels: {}, points: [p(2, 7)] }]);
  });
});

describe('buildQueries', () => {
  it('asks only the label values every row of a metric constrains, and from the previous newest point when known', () => {
    const n = narrowing(KV_NATIVE_MAP);
    expect(n.get('kv_disk_seconds_count')).toEqual({ op: ['commit', 'update'] });
    expect(n.get('kv_vb_curr_items')).toEqual({ state: ['pending', 'replica'] });
    // vb_total_queue_size reads every state: no state matcher.
    expect(n.get('kv_vb_queue_size')).toBeUndefined();
    // kv_ops: the ops the rows name, and for `misses` (every result="miss") the ops kv_engine serves misses of
    // (stats.def.h: get, delete, incr, decr, cas): 11 ops, no result matcher (hits, misses and badval are read).
    expect(n.get('kv_ops')).toEqual({ op: ['cas', 'decr', 'del_meta', 'del_ret_meta', 'delete', 'get', 'get_meta', 'incr', 'set', 'set_meta', 'set_ret_meta'] });
    expect(buildQueries(['kv_disk_seconds_count'], {}, 40, { narrow: n, from: 1_700_000_000 })).toEqual([
      { metric: [{ label: 'name', value: 'kv_disk_seconds_count' }, { label: 'op', value: ['commit', 'update'], operator: 'any' }], start: 1_700_000_000, step: 10 },
    ]);
  });

  it('one query per native name, raw values, no bucket matcher', () => {
    expect(buildQueries(['kv_ops'], { pipelineType: 'Main' }, 45.2)).toEqual([
      { metric: [{ label: 'name', value: 'kv_ops' }, { label: 'pipelineType', value: 'Main' }], start: -46, step: 10 },
    ]);
  });
});

describe('the sum over the nodes (bucket_stats without per_node)', () => {
  it('is asked only of metrics that levels alone read and add up over the nodes: never of a counter a rate or an increase ratio reads, nor of a window mean or a `max` row', () => {
    const s = summableMetrics(KV_NATIVE_MAP);
    expect(s.has('kv_curr_items')).toBe(true);
    expect(s.has('kv_vb_queue_size')).toBe(true);
    // Rates (resets per node), increase ratios (hit_ratio) and window means stay per node; a `max` row is not summed.
    for (const m of ['kv_ops', 'kv_disk_seconds_count', 'kv_ep_bg_fetched', 'sys_cpu_utilization_rate']) expect(s.has(m), m).toBe(false);
    for (const r of KV_NATIVE_MAP) {
      const reads = [...r.series, ...(r.denominator ?? [])].some((x) => s.has(x.metric));
      if (reads) expect(['level', 'level_ratio', 'complement_ratio'], r.legacy).toContain(r.derive);
      if (reads) expect(r.nodeAggregate, r.legacy).not.toBe('max');
    }
    expect(s.size).toBeGreaterThan(30);
  });

  it('the query carries nodesAggregation "sum" for those metrics only, same window and step', () => {
    expect(buildQueries(['kv_curr_items', 'kv_ops'], {}, 40, { from: 1_700_000_000, aggregated: new Map([['kv_curr_items', 'sum' as const]]) })).toEqual([
      { metric: [{ label: 'name', value: 'kv_curr_items' }], start: 1_700_000_000, step: 10, nodesAggregation: 'sum' },
      { metric: [{ label: 'name', value: 'kv_ops' }], start: 1_700_000_000, step: 10 },
    ]);
  });

  it('a summed series gives the same bucket-wide level and ratio as the nodes\' series, and a host gauge\'s mean over the nodes is unaffected', () => {
    const node = (n: string, v: number, labels: Record<string, string> = {}) => ({ metric: { nodes: [n], bucket: 'b', ...labels }, values: [[20, String(v)]] });
    const all = (v: number, labels: Record<string, string> = {}) => ({ metric: { nodes: ['n1', 'n2'], aggregationFunction: 'sum', bucket: 'b', ...labels }, values: [[10, String(v - 1)], [20, String(v)]] });
    const host = parseQueryAnswer('sys_cpu_utilization_rate', { data: [{ metric: { nodes: ['n1'] }, values: [[10, '10'], [20, '30']] }, { metric: { nodes: ['n2'] }, values: [[10, '50'], [20, '70']] }], errors: [] });
    const perNode = groupSeries([parseQueryAnswer('kv_curr_items', { data: [node('n1', 600), node('n2', 400)], errors: [] }), parseQueryAnswer('kv_vb_num_non_resident', { data: [node('n1', 150, { state: 'active' }), node('n2', 50, { state: 'active' })], errors: [] }), host], kvItemOf, new CounterMemo());
    const summed = [parseQueryAnswer('kv_curr_items', { data: [all(1000)], errors: [] }, true), parseQueryAnswer('kv_vb_num_non_resident', { data: [all(200, { state: 'active' })], errors: [] }, true)];
    expect(summed[0]?.series[0]?.node).toBe(ALL_NODES);
    const g = groupSeries([...summed, host], kvItemOf, new CounterMemo());
    expect([...g.nodes].sort()).toEqual(['n1', 'n2']);
    for (const legacy of ['curr_items', 'vb_active_resident_items_ratio', 'cpu_utilization_rate']) {
      expect(rowValue(row(legacy), g, 'b', undefined), legacy).toBeCloseTo(rowValue(row(legacy), perNode, 'b', undefined) as number, 12);
    }
    expect(rowValue(row('curr_items'), g, 'b', undefined)).toBe(1000);
    // An errors entry of a node leaves the sum over the nodes that answered (as the envelope over the live nodes).
    const e = groupSeries([parseQueryAnswer('kv_curr_items', { data: [all(900)], errors: [{ node: 'n2', error: 'timeout' }] }, true)], kvItemOf, new CounterMemo());
    expect(rowValue(row('curr_items'), e, 'b', undefined)).toBe(900);
  });
});

/** A hand-made answer: bucket b on two nodes. */
function answer(extraErrors: Array<{ node: string; error: string }> = []) {
  const s = (node: string, labels: Record<string, string>, pts: Array<[number, number]>) => ({ metric: { nodes: [node], bucket: 'b', ...labels }, values: pts.map(([t, v]) => [t, String(v)]) });
  return [
    parseQueryAnswer('kv_ops', {
      data: [
        s('n1', { op: 'get', result: 'hit' }, [[0, 0], [10, 80], [20, 160]]),
        s('n1', { op: 'get', result: 'miss' }, [[0, 0], [10, 20], [20, 40]]),
        s('n2', { op: 'get', result: 'hit' }, [[0, 0], [10, 30], [20, 60]]),
        s('n2', { op: 'get', result: 'miss' }, [[0, 0], [10, 70], [20, 140]]),
      ],
      errors: extraErrors,
    }),
    parseQueryAnswer('kv_curr_items', { data: [s('n1', {}, [[20, 600]]), s('n2', {}, [[20, 400]])], errors: [] }),
    parseQueryAnswer('kv_vb_num_non_resident', { data: [s('n1', { state: 'active' }, [[20, 150]]), s('n2', { state: 'active' }, [[20, 50]])], errors: [] }),
  ];
}

describe('rowValue: levels, rates and ratios from summed parts', () => {
  it('bucket-wide and per node, in the legacy unit', () => {
    const g = groupSeries(answer(), kvItemOf, new CounterMemo());
    // cmd_get: (160+40) / 20 s on n1, (60+140) / 20 s on n2.
    expect(rowValue(row('cmd_get'), g, 'b', 'n1')).toBe(10);
    expect(rowValue(row('cmd_get'), g, 'b', undefined)).toBe(20);
    // hit_ratio: hits / gets over the interval, in percent (the envelope's unit): (160+60) / 400.
    expect(rowValue(row('hit_ratio'), g, 'b', undefined)).toBeCloseTo(55, 12);
    expect(rowValue(row('hit_ratio'), g, 'b', 'n2')).toBeCloseTo(30, 12);
    // Active residency from the summed parts (not the mean of the nodes' ratios): 1 - 200/1000.
    expect(rowValue(row('vb_active_resident_items_ratio'), g, 'b', undefined)).toBeCloseTo(80, 12);
    expect(rowValue(row('curr_items'), g, 'b', undefined)).toBe(1000);
    // Nothing for a stat the answer has no series of.
    expect(rowValue(row('mem_used'), g, 'b', undefined)).toBeUndefined();
  });

  it('zero divisors give what menelaus_stats gives the envelope', () => {
    const z = [parseQueryAnswer('kv_curr_items', { data: [{ metric: { nodes: ['n1'], bucket: 'b' }, values: [[20, '0']] }], errors: [] }), parseQueryAnswer('kv_vb_num_non_resident', { data: [{ metric: { nodes: ['n1'], bucket: 'b', state: 'active' }, values: [[20, '0']] }], errors: [] })];
    const g = groupSeries(z, kvItemOf, new CounterMemo());
    expect(rowValue(row('vb_active_resident_items_ratio'), g, 'b', undefined)).toBe(100);
  });

  it('an errors entry for n2 costs n2\'s values of that metric; the bucket-wide value is the sum over the nodes that answered', () => {
    const g = groupSeries(answer([{ node: 'n2', error: 'Request timed out' }]), kvItemOf, new CounterMemo());
    // n2's series are still in this hand-made answer: the sum is over what was answered.
    expect(rowValue(row('cmd_get'), g, 'b', undefined)).toBe(20);
    expect(rowValue(row('cmd_get'), g, 'b', 'n2')).toBeUndefined();
    expect(rowValue(row('cmd_get'), g, 'b', 'n1')).toBe(10);
    expect(rowValue(row('curr_items'), g, 'b', undefined)).toBe(1000);
  });

  it('the memo carries each series from one answer to the next, and forgets series no longer answered', () => {
    const memo: CounterMemo = new CounterMemo();
    groupSeries(answer(), kvItemOf, memo);
    expect(memo.size).toBe(8);
    const next = [parseQueryAnswer('kv_ops', { data: [{ metric: { nodes: ['n1'], bucket: 'b', op: 'get', result: 'hit' }, values: [[20, '160'], [30, '260']] }], errors: [] })];
    const g = groupSeries(next, kvItemOf, memo);
    expect(memo.size).toBe(1);
    // Only n1's hits are answered: (260-160)/10 s.
    expect(rowValue(row('get_hits'), g, 'b', undefined)).toBe(10);
  });

  it('the memo updates each known series\' record in place, and a grouping cut short (no done) keeps nothing stale', () => {
    const memo: CounterMemo = new CounterMemo();
    const hit = (t: number, v: string) => [parseQueryAnswer('kv_ops', { data: [{ metric: { nodes: ['n1'], bucket: 'b', op: 'get', result: 'hit' }, values: [[t, v]] }], errors: [] })];
    groupSeries(hit(20, '160'), kvItemOf, memo);
    const [key] = [...memo][0] as [string, unknown];
    const rec = memo.slotOf(key);
    groupSeries(hit(30, '260'), kvItemOf, memo);
    expect(memo.size).toBe(1);
    // The same record, holding the newest point (epoch ms).
    expect(memo.slotOf(key)).toBe(rec);
    expect([...memo]).toEqual([[key, { t: 30_000, v: 260 }]]);
    // A poll that sees the series but is cut short before its end, then one that does not see it: forgotten.
    const cut = new AnswerGrouping(KV_NATIVE_MAP, kvItemOf, memo);
    cut.add([{ metric: 'kv_ops', raw: { data: [{ metric: { nodes: ['n1'], bucket: 'b', op: 'get', result: 'hit' }, values: [[40, '300']] }], errors: [] }, summed: false }]);
    groupSeries([], kvItemOf, memo);
    expect(memo.size).toBe(0);
  });

  it('a series\' key leaves out the name label when it is the metric\'s own, and keeps one that is not', () => {
    expect(seriesKey({ metric: 'kv_ops', node: 'n1', labels: { name: 'kv_ops', bucket: 'b', op: 'get' } })).toBe(['n1', 'kv_ops', 'bucket', 'b', 'op', 'get'].join('\u0000'));
    expect(seriesKey({ metric: 'kv_ops', node: 'n1', labels: { name: 'other', bucket: 'b' } })).toBe(['n1', 'kv_ops', 'bucket', 'b', 'name', 'other'].join('\u0000'));
  });
});

describe('balancedBatches: requests whose answers weigh about the same', () => {
  const w = (m: Record<string, number>) => (n: string) => m[n] ?? 0;
  it('makes as many batches as chunks of `max` would, and none larger than `max`', () => {
    const names = Array.from({ length: 23 }, (_, i) => `m${i}`);
    const b = balancedBatches(names, 10, () => 1);
    expect(b.map((x) => x.length).sort()).toEqual([7, 8, 8]);
    expect(b.flat().sort()).toEqual([...names].sort());
    expect(balancedBatches([], 10, () => 1)).toEqual([]);
    expect(balancedBatches(['a', 'b'], 10, () => 1)).toEqual([['a', 'b']]);
  });
  it('deals the heaviest out first, each to the lightest batch with room; each batch keeps the order of the names', () => {
    // By hand, two batches of at most 3, heaviest first: heavy 9 → first (both empty: the earlier); big 8 → second;
    // b2 2 → second (8 < 9: 10); c2 2 → first (9 < 10: 11); a1 1 → second (10 < 11: 11, now full); light 1 → first
    // (the only one with room: 12).
    const names = ['a1', 'heavy', 'b2', 'light', 'big', 'c2'];
    const b = balancedBatches(names, 3, w({ heavy: 9, big: 8, b2: 2, c2: 2, a1: 1, light: 1 }));
    expect(b).toEqual([['heavy', 'light', 'c2'], ['a1', 'b2', 'big']]);
  });
  it('the first poll guesses: a per-node query weighs four sums; later polls weigh each query by its previous answer', () => {
    const guess = answerWeight(new Map(), new Set(['s']));
    expect(guess('s')).toBeLessThan(guess('p'));
    const measured = answerWeight(new Map([['s', 50_000], ['p', 10]]), new Set(['s']));
    expect(measured('s')).toBe(50_000);
    expect(measured('p')).toBe(10);
  });
  it('the grouping writes each query\'s answer length as it reads it, whether its reader or JSON.parse read the answer', () => {
    // Two answers written by hand: the first in the shape the reader takes, the second with an escaped label value,
    // which the reader leaves to JSON.parse. Their lengths are those of their own text in the body.
    const a = '{"data":[{"metric":{"nodes":["n1:8091"],"bucket":"b"},"values":[[1700000000,"9"]]}],"errors":[]}';
    const b = '{"data":[{"metric":{"nodes":["n1:8091"],"bucket":"b\\u0041"},"values":[[1700000000,"3"]]}],"errors":[]}';
    const sizes = new Map<string, number>();
    const g = new AnswerGrouping(KV_NATIVE_MAP, kvItemOf, new CounterMemo(), sizes);
    g.readText(`[${a}, ${b}]`, ['kv_curr_items', 'kv_ops'], new Set());
    expect(sizes).toEqual(new Map([['kv_curr_items', a.length], ['kv_ops', b.length]]));
  });
});

describe('fetchRange: batches dealt by the previous answer sizes (bucket_stats)', () => {
  const NODE = { hostname: 'n1:8091', clusterCompatibility: 0x70006 };
  const list = [{ name: 'b', bucketType: 'membase', nodes: [NODE] }];
  // Two queries answer 200 series each, every other query one: the first and the ninth name, which eight batches
  // dealt out in turn (all weighing the same) would put together.
  const all = nativeMetricsOf(KV_NATIVE_MAP);
  const HEAVY = new Set([all[0] as string, all[8] as string]);
  const series = (i: number) => ({ metric: { nodes: ['n1:8091'], bucket: `b${i}`, op: 'get' }, values: [[1_700_000_000, '1']] });
  const answer = (name: string) => ({ data: Array.from({ length: HEAVY.has(name) ? 200 : 1 }, (_, i) => series(i)), errors: [] });
  it('the second poll puts the two queries with the largest answers in different requests', async () => {
    const asked: string[][] = [];
    const client = fakeClient({
      '/pools/default/buckets': list,
      '/pools/default/stats/range': (_p: unknown, o: { json?: unknown }) => {
        const names = (o.json as Array<{ metric: Array<{ value: string }> }>).map((q) => q.metric[0]?.value as string);
        asked.push(names);
        return names.map(answer);
      },
    });
    const state = new Map<string, unknown>();
    await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' }, state });
    const first = asked.length;
    expect(first).toBe(8);
    await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' }, state });
    const second = asked.slice(first);
    expect(second).toHaveLength(8);
    expect(second.flat().sort()).toEqual(asked.slice(0, first).flat().sort());
    for (const names of second) expect(names.length).toBeLessThanOrEqual(11);
    const withHeavy = second.filter((names) => names.some((n) => HEAVY.has(n)));
    expect(withHeavy).toHaveLength(2);
  });
});

describe('clusterCompat', () => {
  it('is the lowest clusterCompatibility of the nodes (a cluster mid-upgrade counts as its oldest node)', () => {
    expect(clusterCompat([{ clusterCompatibility: 458758 }, { clusterCompatibility: 393222 }, {}])).toBe(393222);
    expect(clusterCompat([{}, { clusterCompatibility: 'x' }])).toBeUndefined();
  });
});

describe('choosing the source (bucket_stats, canned answers)', () => {
  const NODE = { hostname: 'n1:8091', clusterCompatibility: 458758 };
  const list = (compat: number) => [{ name: 'b', bucketType: 'membase', nodes: [{ ...NODE, clusterCompatibility: compat }] }];
  const envelope = { op: { samples: { timestamp: [1_700_000_000_000], curr_items: [7] }, lastTStamp: 1_700_000_000_000 } };
  const routes = (compat: number, range: unknown) => ({
    '/pools/default/buckets': list(compat),
    '/pools/default/buckets/{bucket}/stats': envelope,
    '/pools/default/stats/range': range,
  });
  const rangeAnswer = (ask: unknown) => {
    const qs = ask as Array<{ metric: Array<{ value: string }> }>;
    return qs.map((q) => (q.metric[0]?.value === 'kv_curr_items' ? { data: [{ metric: { nodes: ['n1:8091'], bucket: 'b' }, values: [[1_700_000_000, '9']] }], errors: [] } : { data: [], errors: [] }));
  };

  it('6.x: the envelopes, and no range request', async () => {
    const client = fakeClient(routes(0x60006, () => ({ status: 500 })));
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'auto' } });
    expect(r.ok).toBe(true);
    expect(client.calls.map((c) => c.route)).not.toContain('/pools/default/stats/range');
    expect(r.note).toBe('statistics: envelope (auto: cluster compatibility 6.6 is before 7.0)');
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(7);
  });

  it('7.x: the range API, and no envelope request', async () => {
    const client = fakeClient(routes(0x70006, (_p: unknown, o: { json?: unknown }) => rangeAnswer(o.json)));
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'auto' } });
    expect(r.ok).toBe(true);
    // 82 native names (the 7.6 table), at most 11 to a request; /pools/default names the active nodes of any service,
    // whom host stats are asked of (this fake does not serve it: the data nodes are asked instead).
    expect(client.calls.map((c) => c.route)).toEqual(['/pools/default/buckets', '/pools/default', ...Array.from({ length: 8 }, () => '/pools/default/stats/range')]);
    expect(client.calls[2]?.options.method).toBe('POST');
    expect(r.note).toBe('statistics: range (auto: cluster 7.6)');
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(9);
  });

  it('7.x with hot_keys: the envelopes (hot keys exist only there), and no range request', async () => {
    const client = fakeClient(routes(0x70006, (_p: unknown, o: { json?: unknown }) => rangeAnswer(o.json)));
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'auto' }, options: { hot_keys: 3 } });
    expect(r.ok).toBe(true);
    expect(client.calls.map((c) => c.route)).not.toContain('/pools/default/stats/range');
    expect(r.note).toBe('statistics: envelope (hot_keys needs the envelopes)');
  });

  it.each(['auto', 'range'] as const)('7.x answering 403 (stats_source %s): a missing permission, named with its role; the poll fails, no fallback to the envelopes', async (statsSource) => {
    const client = fakeClient(routes(0x70006, { status: 403, text: 'Forbidden' }));
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource } });
    expect(r.ok).toBe(false);
    expect(String((r.error as Error).message)).toMatch(/403.*missing permission cluster\.collection\[<bucket>:\.:\.\]\.stats!read.*Read-Only Admin/);
    expect((r.error as { permissions?: string[] }).permissions?.[0]).toMatch(/stats!read/);
    expect(client.calls.map((c) => c.route)).not.toContain('/pools/default/buckets/{bucket}/stats');
  });

  it.each([404, 405])('7.x answering %i: auto falls back to the envelopes for 10 minutes, says why, then tries again', async (status) => {
    let now = 1_700_000_000_000;
    const client = fakeClient(routes(0x70006, { status }));
    const state = new Map<string, unknown>();
    const cluster = { statsSource: 'auto' as const };
    // The fallback is remembered per cluster: the polls share the cluster's cache as the scheduler's do.
    const { createSharedCache } = await import('../../src/collectors/shared.js');
    const shared = createSharedCache(() => now);
    const poll = async () => {
      const { runPoll } = await import('../../src/collectors/context.js');
      const { defaultClusterConfig, resolveCollectorOptions } = await import('../../src/config/defaults.js');
      const { collectorSchemas } = await import('../../src/config/schema.js');
      return runPoll({
        collector: bucketStatsCollector,
        cluster: defaultClusterConfig({ url: client.baseUrl, ...cluster }),
        options: resolveCollectorOptions('bucket_stats', collectorSchemas.bucket_stats.parse({})),
        client,
        state,
        shared,
        now: () => now,
      });
    };
    const r1 = await poll();
    expect(r1.ok).toBe(true);
    expect(r1.note).toMatch(new RegExp(`^statistics: envelope \\(auto: the range API answered ${status}; the range API is tried again at `));
    expect(r1.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(7);
    const rangeCalls = () => client.calls.filter((c) => c.route === '/pools/default/stats/range').length;
    const after1 = rangeCalls();
    now += 5 * 60_000;
    const r2 = await poll();
    expect(r2.ok).toBe(true);
    expect(rangeCalls()).toBe(after1);
    now += 6 * 60_000;
    await poll();
    expect(rangeCalls()).toBeGreaterThan(after1);
  });

  it('stats_source range on a 7.x cluster without the range API fails the poll, with the reason', async () => {
    const client = fakeClient(routes(0x70006, { status: 404 }));
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' } });
    expect(r.ok).toBe(false);
    expect(String((r.error as Error).message)).toMatch(/range API is not available/);
    expect(client.calls.map((c) => c.route)).not.toContain('/pools/default/buckets/{bucket}/stats');
  });

  it('stats_source range on a 6.x cluster fails the poll, naming the version', async () => {
    const client = fakeClient(routes(0x60006, { status: 404 }));
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' } });
    expect(r.ok).toBe(false);
    expect(String((r.error as Error).message)).toMatch(/cluster compatibility 6\.6 is before 7\.0/);
  });
});

describe('fetchRange keeps the shape witness (src/stats/range-grouping.ts, keepShapes)', () => {
  it('a poll through the range API makes it, and it is the same object from then on', async () => {
    vi.resetModules();
    const range = await import('../../src/stats/range.js');
    const { bucketStatsCollector: fresh } = await import('../../src/collectors/bucket_stats.js');
    const client = fakeClient({
      '/pools/default/buckets': [{ name: 'b', bucketType: 'membase', nodes: [{ hostname: 'n1:8091', clusterCompatibility: 0x70006 }] }],
      '/pools/default/stats/range': (_p: unknown, o: { json?: unknown }) => (o.json as unknown[]).map(() => ({ data: [], errors: [] })),
    });
    expect(range.shapesKept()).toBe(false);
    await collect(fresh, client, { cluster: { statsSource: 'range' } });
    expect(range.shapesKept()).toBe(true);
    const w = range.keepShapes();
    // The witness's one series was read and grouped: bucket b of its answer.
    expect((w as { groups: { items: Map<string, unknown> } }).groups.items.has('b')).toBe(true);
    await collect(fresh, client, { cluster: { statsSource: 'range' } });
    expect(range.keepShapes()).toBe(w);
  });
});
