/**
 * How the range source merges the nodes' values into a bucket-wide value, by ns_server's rules (menelaus_stats
 * get_aggregate_method): a sum over the nodes, the max for cpu_utilization_rate; host
 * stats under a bucket (cpu_*, mem_*, swap_*, cpu_cores_available) summed like any other, as the envelope does.
 * Expected values are worked out by hand from the answers below.
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import { describe, expect, it } from 'vitest';
import { KV_NATIVE_MAP, KV_ROW_BY_LEGACY } from '../../src/stats/native-map.js';
import type { NativeMapRow } from '../../src/stats/native-map.js';
import { aggregatedMetrics, buildQueries, groupSeries, kvItemOf, newestOnlyMetrics, parseQueryAnswer } from '../../src/stats/range.js';
import { rowValue } from '../../src/stats/row-values.js';

const row = (legacy: string): NativeMapRow => KV_ROW_BY_LEGACY.get(legacy) as NativeMapRow;
/** A host gauge's answer: one series per node, no bucket label. */
const host = (metric: string, perNode: Record<string, Array<[number, number]>>) =>
  parseQueryAnswer(metric, { data: Object.entries(perNode).map(([n, pts]) => ({ metric: { nodes: [n] }, values: pts.map(([t, v]) => [t, String(v)]) })), errors: [] });
const kvAnswer = parseQueryAnswer('kv_curr_items', { data: [{ metric: { nodes: ['n1'], bucket: 'b' }, values: [[20, '1']] }, { metric: { nodes: ['n2'], bucket: 'b' }, values: [[20, '2']] }], errors: [] });

describe('host stats under a bucket: as the envelope merges them', () => {
  const g = groupSeries(
    KV_NATIVE_MAP,
    [
      kvAnswer,
      host('sys_mem_total', { n1: [[20, 8e9]], n2: [[20, 16e9]] }),
      host('sys_cpu_cores_available', { n1: [[20, 4]], n2: [[20, 8]] }),
      host('sys_swap_used', { n1: [[20, 100]], n2: [[20, 300]] }),
      // First answer: the window mean over all its points. n1: (10+30)/2 = 20; n2: (50+70)/2 = 60.
      host('sys_cpu_utilization_rate', { n1: [[10, 10], [20, 30]], n2: [[10, 50], [20, 70]] }),
      host('sys_cpu_user_rate', { n1: [[10, 4], [20, 6]], n2: [[10, 10], [20, 20]] }),
    ],
    kvItemOf,
    new CounterMemo(),
  );
  it('memory, swap and cores are summed over the nodes (not their mean)', () => {
    expect(rowValue(row('mem_total'), g, 'b', undefined)).toBe(24e9);
    expect(rowValue(row('cpu_cores_available'), g, 'b', undefined)).toBe(12);
    expect(rowValue(row('swap_used'), g, 'b', undefined)).toBe(400);
  });
  it('cpu_utilization_rate is the max over the nodes; the other CPU shares are summed', () => {
    expect(row('cpu_utilization_rate').nodeAggregate).toBe('max');
    expect(rowValue(row('cpu_utilization_rate'), g, 'b', undefined)).toBe(60);
    // n1: (4+6)/2 = 5; n2: (10+20)/2 = 15; summed: 20.
    expect(rowValue(row('cpu_user_rate'), g, 'b', undefined)).toBe(20);
    // Per node, each node's own.
    expect(rowValue(row('cpu_utilization_rate'), g, 'b', 'n1')).toBe(20);
  });
  it('only cpu_utilization_rate is a max row in this table (the other helper\'s rows aside, none is set here)', () => {
    expect(KV_NATIVE_MAP.filter((r) => r.nodeAggregate === 'max').map((r) => r.legacy)).toContain('cpu_utilization_rate');
  });
});

describe('asking for the aggregate over the nodes (bucket_stats without per_node)', () => {
  it('a max row read as a level or a window mean is asked maxed; levels summed; rates and means of summed rows per node', () => {
    const a = aggregatedMetrics(KV_NATIVE_MAP);
    expect(a.get('sys_cpu_utilization_rate')).toBe('max');
    expect(a.get('sys_mem_total')).toBe('sum');
    expect(a.get('kv_curr_items')).toBe('sum');
    expect(a.get('sys_cpu_user_rate')).toBeUndefined();
    expect(a.get('kv_ops')).toBeUndefined();
    expect(buildQueries(['sys_cpu_utilization_rate'], {}, 40, { from: 1_700_000_000, aggregated: a })).toEqual([
      { metric: [{ label: 'name', value: 'sys_cpu_utilization_rate' }], start: 1_700_000_000, step: 10, nodesAggregation: 'max' },
    ]);
  });
  it('the maxed series gives the max at each instant, and its window mean is the mean of those maxima (the envelope\'s samples)', () => {
    // Per instant: max(10, 50) = 50, max(90, 70) = 90: mean 70 — where the per-node means (50, 60) would give 60.
    const maxed = parseQueryAnswer('sys_cpu_utilization_rate', { data: [{ metric: { nodes: ['n1', 'n2'], aggregationFunction: 'max' }, values: [[10, '50'], [20, '90']] }], errors: [] }, true);
    const g = groupSeries(KV_NATIVE_MAP, [kvAnswer, maxed], kvItemOf, new CounterMemo());
    expect(rowValue(row('cpu_utilization_rate'), g, 'b', undefined)).toBe(70);
  });
});

describe('asking only the newest point of a metric only levels read', () => {
  it('levels, level ratios and the per-node docs rule read the newest point; a rate, an increase ratio or a window mean keeps the window', () => {
    const n = newestOnlyMetrics(KV_NATIVE_MAP);
    // curr_items, mem_total: levels; ep_kv_size / the resident ratio's parts: levels; couch_docs_data_size: the
    // per-node min-file rule over the newest data size, file size and vBucket count.
    for (const m of ['kv_curr_items', 'sys_mem_total', 'kv_ep_db_data_size_bytes', 'kv_ep_db_file_size_bytes', 'kv_ep_vb_total']) expect(n.has(m)).toBe(true);
    // kv_ops: ops rates; kv_cmd_lookup: the cache-miss ratio's increase; sys_cpu_utilization_rate and
    // sys_cpu_user_rate: window means.
    for (const m of ['kv_ops', 'kv_cmd_lookup', 'sys_cpu_utilization_rate', 'sys_cpu_user_rate']) expect(n.has(m)).toBe(false);
  });
  it('a metric read both by a level row and by a rate row keeps the window', () => {
    const base = { section: 'kv', perBucket: true, scale: 1, legacyFactor: 1, nsServer: '' } as const;
    const series = [{ metric: 'kv_x', matchers: {}, type: 'gauge' }] as const;
    const rows = [
      { ...base, legacy: 'x', family: 'x', derive: 'level', series },
      { ...base, legacy: 'x_rate', family: 'x_per_second', derive: 'rate', series },
      { ...base, legacy: 'y', family: 'y', derive: 'difference', series: [{ metric: 'kv_y', matchers: {}, type: 'gauge' }], denominator: [{ metric: 'kv_z', matchers: {}, type: 'gauge' }] },
    ] as unknown as typeof KV_NATIVE_MAP;
    expect([...newestOnlyMetrics(rows)].sort()).toEqual(['kv_y', 'kv_z']);
  });
});

describe('a ratio over the nodes that answered both its parts', () => {
  it('a node missing from the denominator\'s metric is left out of the numerator too', () => {
    // ep_cache_miss_rate on 7.0–7.6.7 = 100 × ep_bg_fetched increase / cmd_lookup increase (menelaus_stats). n1: 10 /
    // 100; n2: 30 / (its lookups missing).
    const s = (node: string, labels: Record<string, string>, a: number, b: number) => ({ metric: { nodes: [node], bucket: 'b', ...labels }, values: [[10, String(a)], [20, String(b)]] });
    const g = groupSeries(
      KV_NATIVE_MAP,
      [
        parseQueryAnswer('kv_ep_bg_fetched', { data: [s('n1', {}, 0, 10), s('n2', {}, 0, 30)], errors: [] }),
        parseQueryAnswer('kv_cmd_lookup', { data: [s('n1', {}, 0, 100)], errors: [{ node: 'n2', error: 'Request timed out' }] }),
      ],
      kvItemOf,
      new CounterMemo(),
    );
    // Only n1's parts: 100 × 10 / 100 = 10 (with n2's 30 fetches it would read 40).
    expect(rowValue(row('ep_cache_miss_rate'), g, 'b', undefined)).toBeCloseTo(10, 12);
    // A level row keeps the sum over whoever answered it.
    expect(rowValue(row('ep_bg_fetched'), g, 'b', undefined)).toBeCloseTo(4, 12);
  });
});
