/**
 * One poll's plan of the range source (planPoll): its window, the metrics asked for their newest point alone, the
 * sample budget's later starts and the batches. Expected values are worked out by hand from the constants the
 * module documents (10 s step, 20 s of slack on a first poll, 11 queries a request, 180,000 samples a query).
 */
import { describe, expect, it } from 'vitest';
import { KV_NATIVE_MAP, nativeMetricsOf } from '../../src/stats/native-map.js';
import { planPoll } from '../../src/stats/range.js';

// A multiple of the 10 s step, in seconds.
const T = 1_700_000_000;

describe('planPoll', () => {
  it('a first poll at a 30 s interval: a window of the interval and 20 s back, ending at the poll\'s clock on the step', () => {
    const p = planPoll(KV_NATIVE_MAP, { nowMs: (T + 7) * 1000, lastPollMs: undefined, intervalMs: 30_000, items: undefined, sizes: new Map(), sumOverNodes: false });
    // now = T + 7 s: the end rounds down to T; the start is T + 7 - 30 - 20 = T - 43, rounded down to T - 50.
    expect(p.end).toBe(T);
    expect(p.from).toBe(T - 50);
    expect(p.window).toBe(50);
    // Levels only: asked for the end alone.
    expect(p.fromByMetric.get('kv_curr_items')).toBe(T);
    // A rate over 50 s of kv_ops at 1,000 buckets (17 series a bucket): 6 points, within the budget (90 s).
    expect(p.fromByMetric.has('kv_ops')).toBe(false);
    // Per node unless a bucket-wide value is all that is read.
    expect(p.aggregated.size).toBe(0);
    expect(p.summed.size).toBe(0);
  });

  it('a poll after another starts at the instant after the previous one\'s end', () => {
    const p = planPoll(KV_NATIVE_MAP, { nowMs: (T + 30) * 1000, lastPollMs: (T + 4) * 1000, intervalMs: 30_000, items: 100, sizes: new Map(), sumOverNodes: false });
    expect(p.from).toBe(T + 10);
    expect(p.end).toBe(T + 30);
  });

  it('after an hour\'s gap at 1,000 buckets, the queries that would pass the sample budget start later', () => {
    const p = planPoll(KV_NATIVE_MAP, { nowMs: T * 1000, lastPollMs: (T - 7200) * 1000, intervalMs: 30_000, items: 1000, sizes: new Map(), sumOverNodes: false });
    expect(p.from).toBe(T - 3600);
    // floor(180,000 / 17,000) = 10 points: 90 s; kv_dcp_* un-narrowed, 16 a bucket: 11 points, 100 s; one series a
    // bucket: 180 points, 1,790 s; one a node: the whole window.
    expect(p.fromByMetric.get('kv_ops')).toBe(T - 90);
    expect(p.fromByMetric.get('kv_dcp_items_sent')).toBe(T - 100);
    expect(p.fromByMetric.get('kv_cmd_lookup')).toBe(T - 1790);
    expect(p.fromByMetric.has('sys_cpu_user_rate')).toBe(false);
  });

  it('the metrics in as few batches as 11 a request allow, each once', () => {
    const p = planPoll(KV_NATIVE_MAP, { nowMs: T * 1000, lastPollMs: undefined, intervalMs: 30_000, items: undefined, sizes: new Map(), sumOverNodes: true });
    const metrics = nativeMetricsOf(KV_NATIVE_MAP);
    expect(p.batches).toHaveLength(Math.ceil(metrics.length / 11));
    for (const b of p.batches) expect(b.length).toBeLessThanOrEqual(11);
    expect(p.batches.flat().sort()).toEqual([...metrics].sort());
    // Bucket-wide only: the levels are summed over the nodes, and read as one series.
    expect(p.aggregated.get('kv_curr_items')).toBe('sum');
    expect(p.summed.has('kv_curr_items')).toBe(true);
    expect(p.summed.has('kv_ops')).toBe(false);
  });
});
