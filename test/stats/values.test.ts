/**
 * Neutral values: both statistics sources answer one shape (src/stats/values.ts), which the collectors map the same
 * way. The range source builds no legacy envelope, and the stats layer declares the context it needs instead of
 * importing the collectors'. Expected values are worked out by hand.
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOG_SPECS } from '../../src/collectors/bucket_stats.js';
import { statsEnvelopeSchema } from '../../src/couchbase/buckets.js';
import { envelopeBucketValues } from '../../src/stats/envelope-buckets.js';
import { nativeMapFor } from '../../src/stats/native-map.js';
import { bucketOf, kindOfRow, linesBucketValues } from '../../src/stats/range-source.js';
import { groupSeries, kvItemOf, parseQueryAnswer } from '../../src/stats/range.js';
import type { QueryResult } from '../../src/stats/range.js';

const STATS = join(import.meta.dirname, '..', '..', 'src', 'stats');
const stats = readdirSync(STATS).filter((f) => f.endsWith('.ts'));

describe('the stats layer', () => {
  it('imports nothing from src/collectors (it declares the context it needs: context.ts)', () => {
    expect(stats.filter((f) => /from '\.\.\/collectors\//.test(readFileSync(join(STATS, f), 'utf8')))).toEqual([]);
  });
  it('builds no legacy envelope from range answers: no range module names an envelope type', () => {
    const range = stats.filter((f) => /^range|^node-lines/.test(f));
    expect(range.length).toBeGreaterThan(3);
    expect(range.filter((f) => /StatsEnvelope|XdcrStatEnvelope/.test(readFileSync(join(STATS, f), 'utf8')))).toEqual([]);
  });
});

// Two points 10 s apart: a counter's increase over the window is its second value (from 0).
const ctr = (v: number, labels: Record<string, string> = {}) => ({ metric: { nodes: ['n1'], bucket: 'b', ...labels }, values: [[100, '0'], [110, String(v)]] });
const q = (metric: string, data: unknown[]): QueryResult => parseQueryAnswer(metric, { data, errors: [] });
const table = nativeMapFor('7.6');
const linesOf = (answers: QueryResult[]) => [{ table, nodes: ['n1'], groups: groupSeries(table.kv, answers, kvItemOf, new CounterMemo()) }];

describe('range source values', () => {
  it('a bucket\'s values in Couchbase\'s units, at the newest point\'s time: 40 hits of 50 gets in 10 s → cmd_get 5/s, hit_ratio 80 %', () => {
    const got = linesBucketValues(linesOf([q('kv_ops', [ctr(40, { op: 'get', result: 'hit' }), ctr(10, { op: 'get', result: 'miss' })])]), 'b', undefined, CATALOG_SPECS);
    expect(got?.newest).toBe(110_000);
    expect(got?.values.get('cmd_get')).toBe(5);
    expect(got?.values.get('get_hits')).toBe(4);
    expect(got?.values.get('hit_ratio')).toBeCloseTo(80, 12);
    // A mapped stat the answer gives no value is named without one (nothing is exported for it).
    expect(got?.values.has('curr_items')).toBe(true);
    expect(got?.values.get('curr_items')).toBeUndefined();
  });
  it('a window mean with no event to average over (no get in the window: its weight cmd_get is 0) has no value, as the envelopes\' weighted mean', () => {
    const answers = [q('kv_ops', [ctr(0, { op: 'get', result: 'hit' }), ctr(0, { op: 'get', result: 'miss' })])];
    const got = linesBucketValues(linesOf(answers), 'b', undefined, CATALOG_SPECS);
    expect(got?.values.get('cmd_get')).toBe(0);
    expect(got?.values.get('hit_ratio')).toBeUndefined();
    // Without the catalog's weights, the ratio of a zero divisor is menelaus_stats' 0.
    expect(linesBucketValues(linesOf(answers), 'b', undefined)?.values.get('hit_ratio')).toBe(0);
    // The envelope source: hit_ratio samples of 0 weighted by cmd_get samples of 0 give no value either.
    const env = statsEnvelopeSchema.parse({ op: { samples: { timestamp: [1000, 2000], cmd_get: [0, 0], hit_ratio: [0, 0] }, lastTStamp: 2000 } });
    expect(envelopeBucketValues({ bucket: 'b', envelope: env, specOf: CATALOG_SPECS }).values.get('hit_ratio')).toBeUndefined();
  });
  it('nothing of the bucket in the answer: no values', () => {
    expect(linesBucketValues(linesOf([q('kv_ops', [])]), 'b', undefined, CATALOG_SPECS)).toBeUndefined();
  });
  it('gives each row\'s kind: levels, per-second rates, window means and ratios of increases', () => {
    const kind = (legacy: string) => kindOfRow(table.kvByLegacy.get(legacy) as NonNullable<ReturnType<typeof table.kvByLegacy.get>>);
    expect([kind('curr_items'), kind('cmd_get'), kind('cpu_user_rate'), kind('hit_ratio'), kind('ep_resident_items_rate')]).toEqual(['level', 'rate', 'mean', 'mean', 'level']);
  });
});

describe('envelope source values', () => {
  it('levels are the latest sample, rates the mean of the new samples, in Couchbase\'s units (the collector scales them)', () => {
    const env = statsEnvelopeSchema.parse({ op: { samples: { timestamp: [1000, 2000, 3000], curr_items: [5, 6, null], cmd_get: [2, 4, 6], avg_bg_wait_time: [100, 300, 500] }, lastTStamp: 3000 } });
    const got = envelopeBucketValues({ bucket: 'b', envelope: env, specOf: CATALOG_SPECS, memo: { last: 1000, at: 0 }, now: 2000, intervalMs: 2000 });
    expect(got.newest).toBe(3000);
    expect(got.values.get('curr_items')).toBe(6);
    expect(got.values.get('cmd_get')).toBe(5);
    // µs as Couchbase reports them; no bg_wait_count samples: the plain mean of the new samples.
    expect(got.values.get('avg_bg_wait_time')).toBe(400);
  });
});

describe('replication_changes_left and replication_docs_rep_queue per bucket (range source)', () => {
  // ns_server stat_names_mappings.erl, pre_70_stat_to_prom_query("@xdcr-" ++ Bucket, <<"replication_changes_left">>)
  // and (…, <<"replication_docs_rep_queue">>): sum by (name) of xdcr_changes_left_total / xdcr_docs_rep_queue_total
  // with sourceBucketName = the bucket: every replication and pipeline of the bucket, every node.
  const x = (node: string, v: number, src: string, uuid: string, dst: string, pipelineType: string) => ({
    metric: { nodes: [node], sourceBucketName: src, targetClusterUUID: uuid, targetBucketName: dst, pipelineType },
    values: [[110, String(v)]],
  });
  const answers = [
    q('xdcr_changes_left_total', [
      x('n1', 100, 'b', 'u1', 't1', 'Main'),
      x('n2', 20, 'b', 'u1', 't1', 'Main'),
      x('n1', 3, 'b', 'u1', 't1', 'Backfill'),
      x('n1', 7, 'b', 'u2', 't2', 'Main'),
      x('n1', 1000, 'c', 'u1', 't3', 'Main'),
    ]),
    q('xdcr_docs_rep_queue_total', [x('n1', 5, 'b', 'u1', 't1', 'Main'), x('n2', 6, 'b', 'u2', 't2', 'Main')]),
  ];
  const lines = [{ table, nodes: ['n1', 'n2'], groups: groupSeries(table.kv, answers, bucketOf, new CounterMemo()) }];
  it('sums them over the bucket\'s replications, pipelines and nodes: b 100 + 20 + 3 + 7 = 130 changes left, 5 + 6 = 11 queued', () => {
    const b = linesBucketValues(lines, 'b', undefined, CATALOG_SPECS)?.values;
    expect(b?.get('replication_changes_left')).toBe(130);
    expect(b?.get('replication_docs_rep_queue')).toBe(11);
    expect(linesBucketValues(lines, 'c', undefined, CATALOG_SPECS)?.values.get('replication_changes_left')).toBe(1000);
  });
  it('per node: that node\'s share (n1 110, n2 20)', () => {
    expect(linesBucketValues(lines, 'b', 'n1', CATALOG_SPECS)?.values.get('replication_changes_left')).toBe(110);
    expect(linesBucketValues(lines, 'b', 'n2', CATALOG_SPECS)?.values.get('replication_changes_left')).toBe(20);
  });
  it('a bucket stat series names its bucket by `bucket`, an XDCR one by `sourceBucketName`', () => {
    expect(bucketOf({ bucket: 'b' })).toBe('b');
    expect(bucketOf({ sourceBucketName: 'c', targetBucketName: 'd' })).toBe('c');
    expect(bucketOf({})).toBeUndefined();
  });
});
