/**
 * Upstream names that never repeat: a cluster whose every answer carries stat names it never sent before
 * (simulator knob `statChurnPerAnswer`) must not grow the exporter's maps without bound. Counted in entries,
 * never in memory or time.
 */
import { describe, expect, it } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { DYNAMIC_STATE_KEY, DynamicFamilies } from '../../src/collectors/dynamic.js';
import { nodesCollector } from '../../src/collectors/nodes.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { collect, simulatorWithClient } from '../helpers/collect.js';

const POLLS = 15;
const PER_ANSWER = 200;
const CAP = 300;

function registry(state: Map<string, unknown>): DynamicFamilies {
  const reg = state.get(DYNAMIC_STATE_KEY);
  expect(reg).toBeInstanceOf(DynamicFamilies);
  return reg as DynamicFamilies;
}

describe('bucket_stats under stat-name churn', () => {
  // 2 buckets: each poll brings 2 x 200 names never seen before.
  const t = simulatorWithClient({ buckets: 2, knobs: { statChurnPerAnswer: PER_ANSWER } });

  it('keeps at most max_dynamic_families families per poll, forgets unused ones, and counts what it left out', async () => {
    const state = new Map<string, unknown>();
    const store = new SnapshotStore();
    const sizes: number[] = [];
    let firstFamilies = 0;
    for (let i = 0; i < POLLS; i++) {
      const r = await collect(bucketStatsCollector, t.client, { state, cluster: { maxDynamicFamilies: CAP } });
      expect(r.ok, String(r.error)).toBe(true);
      store.record('test', r);
      // 400 new names, room for 300: 100 left out, every poll.
      expect(r.set.capped.get('dynamic_families')).toBe(2 * PER_ANSWER - CAP);
      const churned = r.set.families().filter((f) => f.def.name.startsWith('couchbase_bucket_churn_'));
      expect(churned).toHaveLength(CAP);
      // Catalogued families plus the capped churn: never more than the first poll (which had every rate fresh).
      if (i === 0) firstFamilies = r.set.families().length;
      else expect(r.set.families().length).toBeLessThanOrEqual(firstFamilies);
      sizes.push(registry(state).size);
      // The memos of the 2 buckets and the registry: nothing else is kept between polls.
      expect(state.size).toBe(3);
    }
    // This poll's families plus the previous poll's: never more than twice the cap, and flat after the first.
    for (const n of sizes) expect(n).toBeLessThanOrEqual(2 * CAP);
    expect(new Set(sizes.slice(1))).toEqual(new Set([2 * CAP]));
    // The counter keeps rising with every poll.
    const capped = store.statusList().find((s) => s.collector === 'bucket_stats')?.capped;
    expect(capped?.get('dynamic_families')).toBe(POLLS * (2 * PER_ANSWER - CAP));
  });

  it('exports every churned stat while under the cap (default 5,000)', async () => {
    const r = await collect(bucketStatsCollector, t.client, { state: new Map() });
    expect(r.ok).toBe(true);
    expect(r.set.capped.get('dynamic_families')).toBeUndefined();
    expect(r.set.families().filter((f) => f.def.name.startsWith('couchbase_bucket_churn_'))).toHaveLength(2 * PER_ANSWER);
  });
});

describe('nodes under stat-name churn', () => {
  // 3 nodes: each /pools/default brings 200 new counters and 200 new interestingStats names per node.
  const t = simulatorWithClient({ nodes: 3, knobs: { statChurnPerAnswer: PER_ANSWER } });

  it('caps new counter families and interesting-stat names per poll and forgets them when gone', async () => {
    const state = new Map<string, unknown>();
    const sizes: number[] = [];
    for (let i = 0; i < POLLS; i++) {
      const r = await collect(nodesCollector, t.client, { state, cluster: { maxDynamicFamilies: CAP } });
      expect(r.ok, String(r.error)).toBe(true);
      const counters = r.set.families().filter((f) => /^couchbase_cluster_churn_\d+_total$/.test(f.def.name));
      const interesting = r.set.all('couchbase_node_interesting_stat').filter((s) => s.labels.stat?.startsWith('churn_'));
      // 200 counters + 3 x 200 interesting names = 800 upstream names, room for 300.
      expect(counters.length + interesting.length).toBe(CAP);
      expect(r.set.capped.get('dynamic_families')).toBe(4 * PER_ANSWER - CAP);
      sizes.push(registry(state).size);
    }
    for (const n of sizes) expect(n).toBeLessThanOrEqual(2 * CAP);
  });
});
