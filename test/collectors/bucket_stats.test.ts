import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUCKET_STAT_CATALOG, STAT_FAMILIES, statSpec, unknownMetricName } from '../../src/collectors/bucket-stat-catalog.js';
import { bucketStatsCollector, mapBucketStats, RESERVED_FAMILY_NAMES } from '../../src/collectors/bucket_stats.js';
import { collectionsCollector } from '../../src/collectors/collections.js';
import { allFamilies } from '../../src/metrics/catalog.js';
import { renderSets } from '../../src/metrics/render.js';
import { reduceSamples } from '../../src/stats/samples.js';
import type { SampleMemo } from '../../src/stats/samples.js';
import { bucketsCollector } from '../../src/collectors/buckets.js';
import { statsEnvelopeSchema } from '../../src/couchbase/buckets.js';
import type { StatsEnvelope } from '../../src/couchbase/buckets.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient, RequestOptions } from '../../src/couchbase/client.js';
import { SampleSet } from '../../src/metrics/family.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { FaultRule, Simulator } from '../../src/simulator/index.js';
import { collect, fakeClient, loadFixture, simulatorWithClient } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

const LIST = '/pools/default/buckets';
const STATS = '/pools/default/buckets/{bucket}/stats';
const NODE_STATS = '/pools/default/buckets/{bucket}/nodes/{node}/stats';

type Env = { op: { samples: Record<string, unknown>; lastTStamp?: number; interval?: number; samplesCount?: number }; hot_keys?: unknown[] };

/** An envelope of `n` samples one second apart ending at `last`; each stat gets `f(i)` or a constant. */
function envelope(stats: Record<string, number | null | ((i: number) => number | null)>, last = 1_700_000_060_000, n = 60): Env {
  const ts = Array.from({ length: n }, (_, i) => last - (n - 1 - i) * 1000);
  const samples: Record<string, unknown> = { timestamp: ts };
  for (const [k, v] of Object.entries(stats)) samples[k] = ts.map((_, i) => (typeof v === 'function' ? v(i) : v));
  return { op: { samples, samplesCount: n, lastTStamp: last, interval: 1000 }, hot_keys: [] };
}

function map(env: Env, extra: Partial<Parameters<typeof mapBucketStats>[0]> = {}): { out: SampleSet; skipped: string[]; memo: SampleMemo | undefined } {
  const out = new SampleSet();
  const skipped: string[] = [];
  const memo = mapBucketStats({ bucket: 'b', envelope: statsEnvelopeSchema.parse(env), skipped: (r) => skipped.push(r), ...extra }, out);
  return { out, skipped, memo };
}

/** The REST reference's "Bucket stat names", written out by hand so the catalog is checked against an independent list. */
function referenceNames(): string[] {
  const names = ['xdc_ops', 'vb_total_queue_age'];
  for (const p of ['vb_replica_', 'vb_pending_', 'vb_active_']) {
    for (const s of ['queue_size', 'queue_fill', 'queue_drain', 'queue_age', 'ops_update', 'ops_create', 'num_non_resident', 'num', 'meta_data_memory', 'itm_memory', 'eject']) names.push(p + s);
    if (p !== 'vb_active_') names.push(`${p}curr_items`);
  }
  names.push(
    ...'ep_ops_create ep_ops_update ep_oom_errors ep_tmp_oom_errors ep_num_value_ejects ep_num_ops_set_ret_meta ep_num_ops_set_meta ep_num_ops_get_meta ep_num_ops_del_ret_meta ep_num_ops_del_meta ep_num_non_resident ep_meta_data_memory ep_mem_low_wat ep_mem_high_wat ep_max_data_size ep_kv_size ep_item_commit_failed ep_flusher_todo ep_diskqueue_items ep_diskqueue_fill ep_diskqueue_drain ep_bg_fetched ep_cache_miss_rate ep_resident_items_rate ep_overhead ep_queue_size ep_vb_total'.split(' '),
    ...'disk_write_queue disk_update_total disk_update_count disk_commit_total disk_commit_count'.split(' '),
    ...'delete_misses delete_hits decr_misses decr_hits incr_hits incr_misses get_hits get_misses misses hit_ratio cas_badval cas_hits cas_misses cmd_get cmd_set evictions ops bytes_read bytes_written curr_items curr_items_tot curr_connections mem_used'.split(' '),
    ...'avg_bg_wait_time avg_disk_commit_time avg_disk_update_time bg_wait_count bg_wait_total'.split(' '),
    ...'vb_pending_resident_items_ratio vb_replica_resident_items_ratio vb_active_resident_items_ratio vb_avg_total_queue_age vb_avg_pending_queue_age vb_avg_active_queue_age vb_avg_replica_queue_age'.split(' '),
    ...'couch_total_disk_size couch_docs_fragmentation couch_views_fragmentation couch_docs_actual_disk_size couch_docs_data_size couch_docs_disk_size couch_views_actual_disk_size couch_views_data_size couch_views_disk_size couch_views_ops'.split(' '),
  );
  for (const g of ['rebalance', 'replica', 'total', 'user']) {
    for (const s of ['count', 'qlen', 'queue_backfillremaining', 'queue_backoff', 'queue_drain', 'queue_fill', 'queue_itemondisk', 'total_backlog_size']) names.push(`ep_tap_${g}_${s}`);
  }
  for (const s of 'active_vbreps bandwidth_usage changes_left commit_time data_replicated docs_checked docs_latency_aggr docs_latency_wt docs_rep_queue docs_written meta_latency_aggr meta_latency_wt num_checkpoints num_failedckpts rate_replication size_rep_queue waiting_vbreps work_time'.split(' ')) {
    names.push(`replication_${s}`);
  }
  return names;
}

const FIXTURES: Array<[string, string, string]> = [
  ['bucket-stats/appd-4.6.3.json', 'beer-sample', 'bucket_stats-4.6.3.prom'],
  ['bucket-stats/nri-couchbase-5.0.1.json', 'beer-sample', 'bucket_stats-5.0.1.prom'],
  ['bucket-stats/telegraf-2021.json', 'blastro-df', 'bucket_stats-2021.prom'],
];

/**
 * Key values of each golden, worked out by hand from the capture (not by the code under test): levels are the
 * last sample; rates the mean of the samples of the last 30 s (the default interval) before lastTStamp; the
 * newest sample time is lastTStamp / 1000.
 */
const KEY_VALUES: Record<string, Record<string, number | undefined>> = {
  'bucket_stats-4.6.3.prom': {
    couchbase_bucket_curr_items: 7303,
    couchbase_bucket_mem_used_bytes: 44289200,
    couchbase_bucket_written_bytes_per_second: 390168.34068141313,
    couchbase_bucket_rest_requests_per_second: 2.933333333333333,
    couchbase_bucket_ep_oom_errors_total: 0,
    couchbase_bucket_last_sample_timestamp_seconds: 1507141215.11,
    // Window means (issue 24): (Σcpu_local_ms − Σcpu_idle_ms) / Σcpu_local_ms over samples 30…59 = (115530 −
    // 101160) / 115530; three 0.5-s commits: Σdisk_commit_total / Σdisk_commit_count / 1e6 = 6050421.535757299 /
    // 12.100843071514599 / 1e6 (window-means.test.ts has the sums). No get in the capture: no hit ratio.
    couchbase_bucket_cpu_utilization_ratio: 14370 / 115530,
    couchbase_bucket_avg_disk_commit_seconds: 6050421.535757299 / 12.100843071514599 / 1e6,
    couchbase_bucket_hit_ratio: undefined,
  },
  'bucket_stats-5.0.1.prom': {
    couchbase_bucket_curr_items: 7303,
    couchbase_bucket_mem_used_bytes: 75645256,
    couchbase_bucket_written_bytes_per_second: 134697.99359059366,
    couchbase_bucket_rest_requests_per_second: 28.533333333333335,
    couchbase_bucket_ep_oom_errors_total: 0,
    couchbase_bucket_last_sample_timestamp_seconds: 1537982719.382,
  },
  'bucket_stats-2021.prom': {
    couchbase_bucket_curr_items: 1,
    couchbase_bucket_mem_used_bytes: 4937016,
    couchbase_bucket_written_bytes_per_second: 42200.118788934575,
    couchbase_bucket_rest_requests_per_second: 2.033333333333333,
    couchbase_bucket_ep_clock_cas_drift_threshold_exceeded_total: 0,
    couchbase_bucket_last_sample_timestamp_seconds: 1615918178.442,
    // 18446744073709551615 in the capture: Couchbase's "unavailable", never exported.
    couchbase_bucket_allocstall: undefined,
    // No cpu_local_ms in this capture: the plain mean of cpu_utilization_rate's samples 30…59, 592.4983375282071 / 30 %.
    couchbase_bucket_cpu_utilization_ratio: 592.4983375282071 / 3000,
  },
};

function oneBucket(bucket: string, stats: unknown) {
  return fakeClient({ [LIST]: [{ name: bucket, bucketType: 'membase' }], [STATS]: stats });
}

describe('the bucket stat catalog', () => {
  it('has an entry for every stat name of the REST reference', () => {
    const missing = referenceNames().filter((n) => statSpec(n) === undefined);
    expect(missing).toEqual([]);
    const ref = new Set(referenceNames());
    expect(BUCKET_STAT_CATALOG.filter((s) => s.reference).map((s) => s.stat).sort()).toEqual([...ref].sort());
  });

  it('has an entry for every bucket stat name of the real captures (keys with / are not bucket stats)', () => {
    for (const rel of ['bucket-stats/appd-4.6.3.json', 'bucket-stats/nri-couchbase-5.0.1.json', 'bucket-stats/nri-couchbase-5.0.1-b.json', 'bucket-stats/telegraf-2021.json', 'bucket-node-stats/telegraf-2021-beer-sample.json']) {
      const env = loadFixture<Env>(rel);
      const missing = Object.keys(env.op.samples).filter((k) => k !== 'timestamp' && !k.includes('/') && statSpec(k) === undefined);
      expect(missing, rel).toEqual([]);
    }
  });

  it('gives every family a unique, convention-abiding name with its unit suffix', () => {
    const names = new Set<string>();
    for (const { bucket, node, spec } of STAT_FAMILIES.values()) {
      for (const f of [bucket, node]) {
        expect(names.has(f.name), f.name).toBe(false);
        names.add(f.name);
        // Counters (and only they) end in _total; nothing ends in the histogram/summary suffixes.
        expect(f.name).not.toMatch(/_(count|sum|bucket)$/);
        expect(f.name.endsWith('_total'), f.name).toBe(spec.kind === 'cumulative');
        expect(f.type).toBe(spec.kind === 'cumulative' ? 'counter' : 'gauge');
      }
      const suffix: Record<string, RegExp> = {
        bytes: /_bytes$/,
        seconds: /_seconds$/,
        ratio: /_ratio$/,
        per_second: /_per_second$/,
        bytes_per_second: /_bytes_per_second$/,
        seconds_per_second: /_seconds_per_second$/,
        count: /^(?!.*_(bytes|seconds|ratio|per_second)$)/,
      };
      if (spec.kind === 'cumulative') {
        expect(bucket.name, spec.stat).toMatch(spec.unit === 'bytes' ? /_bytes_total$/ : /^(?!.*_(bytes|seconds)_total$).*_total$/);
        continue;
      }
      expect(bucket.name, spec.stat).toMatch(suffix[spec.unit] as RegExp);
      expect(spec.kind === 'rate', spec.stat).toBe(spec.unit.endsWith('per_second'));
      expect(bucket.labels).toEqual(['bucket']);
      expect(node.labels).toEqual(['bucket', 'node']);
      expect(bucket.help).toContain(spec.stat);
    }
  });

  it('converts Couchbase units: percent, microseconds and milliseconds', () => {
    const unit = (stat: string) => {
      const s = statSpec(stat);
      return s && [s.metric, s.kind, s.scale];
    };
    expect(unit('ep_resident_items_rate')).toEqual(['ep_resident_items_ratio', 'level', 0.01]);
    expect(unit('vb_active_resident_items_ratio')).toEqual(['vb_active_resident_items_ratio', 'level', 0.01]);
    expect(unit('couch_docs_fragmentation')).toEqual(['couch_docs_fragmentation_ratio', 'level', 0.01]);
    // Averages over one sample period are window means (issue 24): see window-means.test.ts for their values.
    expect(unit('avg_bg_wait_time')).toEqual(['avg_bg_wait_seconds', 'mean', 1e-6]);
    expect(unit('avg_disk_update_time')).toEqual(['avg_disk_update_seconds', 'mean', 1e-6]);
    expect(unit('avg_disk_commit_time')).toEqual(['avg_disk_commit_seconds', 'mean', 1]);
    expect(unit('hit_ratio')).toEqual(['hit_ratio', 'mean', 0.01]);
    expect(unit('cpu_utilization_rate')).toEqual(['cpu_utilization_ratio', 'mean', 0.01]);
    expect(unit('vb_active_queue_age')).toEqual(['vb_active_queue_age_seconds', 'level', 0.001]);
    expect(unit('vb_avg_active_queue_age')).toEqual(['vb_avg_active_queue_age_seconds', 'level', 1]);
    expect(unit('cmd_get')).toEqual(['cmd_get_per_second', 'rate', 1]);
    expect(unit('bytes_read')).toEqual(['read_bytes_per_second', 'rate', 1]);
    expect(unit('bg_wait_total')).toEqual(['bg_wait_seconds_per_second', 'rate', 1e-6]);
    expect(unit('mem_used')).toEqual(['mem_used_bytes', 'level', 1]);
    expect(unit('curr_items')).toEqual(['curr_items', 'level', 1]);
  });

  it('the appd 4.6.3 capture agrees: avg_disk_commit_time = disk_commit_total / disk_commit_count / 1e6', () => {
    const s = loadFixture<{ op: { samples: Record<string, number[]> } }>('bucket-stats/appd-4.6.3.json').op.samples;
    const i = (s.disk_commit_count ?? []).findIndex((v) => v > 0);
    expect(i).toBeGreaterThanOrEqual(0);
    const total = s.disk_commit_total?.[i] as number;
    const count = s.disk_commit_count?.[i] as number;
    expect(s.avg_disk_commit_time?.[i]).toBeCloseTo(total / count / 1e6, 6);
  });
});

describe('bucket_stats collector on real fixtures', () => {
  for (const [rel, bucket, golden] of FIXTURES) {
    it(`matches the golden exposition for ${rel}`, async () => {
      const r = await collect(bucketStatsCollector, oneBucket(bucket, loadFixture(rel)));
      expect(r.ok, String(r.error)).toBe(true);
      expect(r.skipped.size).toBe(0);
      expect(r.text).not.toMatch(/d41d8cd98f|5a222b8c|accesses|replications/);
      for (const [family, want] of Object.entries(KEY_VALUES[golden] ?? {})) {
        const got = r.set.get(family, { bucket });
        if (want === undefined) expect(got, family).toBeUndefined();
        else expect(got, family).toBeCloseTo(want, 6);
      }
      expect(r.text).not.toContain('18446744073709552000');
      await expect(r.text).toMatchFileSnapshot(`../golden/${golden}`);
    });
  }

  it('matches the golden exposition of the per-node capture (telegraf 2021, beer-sample)', async () => {
    const node = loadFixture<Env & { hostname: string }>('bucket-node-stats/telegraf-2021-beer-sample.json');
    const client = fakeClient({
      [LIST]: [{ name: 'beer-sample', bucketType: 'membase', nodes: [{ hostname: '172.94.77.2:8091' }] }],
      [STATS]: loadFixture('bucket-stats/telegraf-2021.json'),
      [NODE_STATS]: (p: Record<string, string>) => (p.node === '172.94.77.2:8091' ? node : { status: 404, text: 'Requested resource not found.' }),
    });
    const r = await collect(bucketStatsCollector, client, { options: { per_node: true } });
    expect(r.ok, String(r.error)).toBe(true);
    expect(client.calls.find((c) => c.route === NODE_STATS)?.path).toBe('/pools/default/buckets/beer-sample/nodes/172.94.77.2%3A8091/stats');
    const nodeOnly = r.text
      .split('\n')
      .filter((l) => l.includes('couchbase_bucket_node_'))
      .join('\n');
    // Key values by hand from the node capture: last samples, and the mean of the last 30 s for rates.
    const n = { bucket: 'beer-sample', node: '172.94.77.2:8091' };
    expect(r.set.get('couchbase_bucket_node_curr_items', n)).toBe(2475);
    expect(r.set.get('couchbase_bucket_node_mem_used_bytes', n)).toBe(25010456);
    expect(r.set.get('couchbase_bucket_node_written_bytes_per_second', n)).toBeCloseTo(37664.50666666669, 6);
    expect(r.set.get('couchbase_bucket_node_read_bytes_per_second', n)).toBeCloseTo(145.82, 6);
    expect(r.set.get('couchbase_bucket_node_allocstall', n)).toBe(0);
    await expect(`${nodeOnly}\n`).toMatchFileSnapshot('../golden/bucket_stats-node-2021.prom');
    expect(r.set.get('couchbase_bucket_node_curr_items', { bucket: 'beer-sample', node: '172.94.77.2:8091' })).toBe(2475);
    // The bucket-wide families keep their single label.
    expect(r.set.all('couchbase_bucket_curr_items').every((s) => Object.keys(s.labels).join() === 'bucket')).toBe(true);
  });

  it('per node: takes the node list from nodeServices when the bucket list has none, and skips a node that answers 404', async () => {
    const client = fakeClient({
      [LIST]: [{ name: 'b' }],
      '/pools/default/nodeServices': loadFixture('pools-default-nodeServices/docs-server-6.5plus.json'),
      [STATS]: envelope({ curr_items: 10 }),
      [NODE_STATS]: (p: Record<string, string>) =>
        p.node === '10.143.192.101:8091' ? { status: 404, text: 'Requested resource not found.' } : envelope({ curr_items: 5 }),
    });
    const r = await collect(bucketStatsCollector, client, { options: { per_node: true } });
    expect(r.ok, String(r.error)).toBe(true);
    expect(client.calls.filter((c) => c.route === NODE_STATS).map((c) => c.params.node)).toEqual(['10.143.192.101:8091']);
    expect(r.set.all('couchbase_bucket_node_curr_items')).toEqual([]);
    expect(r.skipped.get('node_gone')).toBe(1);
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(10);
  });

  it('reads levels from the latest sample and rates as the mean of the window (first poll)', async () => {
    const env = loadFixture<{ op: { samples: Record<string, number[]> } }>('bucket-stats/telegraf-2021.json');
    const s = env.op.samples;
    const r = await collect(bucketStatsCollector, oneBucket('blastro-df', env));
    const b = { bucket: 'blastro-df' };
    expect(r.set.get('couchbase_bucket_curr_items', b)).toBe(s.curr_items?.at(-1));
    expect(r.set.get('couchbase_bucket_mem_used_bytes', b)).toBe(s.mem_used?.at(-1));
    const ops = s.ops ?? [];
    expect(r.set.get('couchbase_bucket_ops_per_second', b)).toBeCloseTo(ops.reduce((a, v) => a + v, 0) / ops.length, 9);
    expect(r.set.get('couchbase_bucket_vb_active_resident_items_ratio', b)).toBeCloseTo((s.vb_active_resident_items_ratio?.at(-1) ?? NaN) / 100, 12);
    // bg_wait_count is 0 in all 60 samples: no background fetch was waited for, so there is no average wait.
    expect(s.bg_wait_count?.every((v) => v === 0)).toBe(true);
    expect(r.set.all('couchbase_bucket_avg_bg_wait_seconds')).toEqual([]);
  });
});

describe('bucket_stats: nulls, unknown stats, keys that are not bucket stats', () => {
  it('emits only what the edited telegraf capture has (no timestamps, one stat)', async () => {
    const r = await collect(bucketStatsCollector, oneBucket('b', loadFixture('bucket-stats/telegraf-with-missing-edited.json')));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_bucket_couch_total_disk_size_bytes', { bucket: 'b' })).toBe(559341);
    const families = r.set.families().map((f) => f.def.name);
    expect(families).toEqual(['couchbase_bucket_couch_total_disk_size_bytes', 'couchbase_bucket_last_sample_timestamp_seconds']);
  });

  it('skips null samples: a level takes the latest non-null, a rate the mean of the non-null; all-null emits nothing', () => {
    const { out } = map(
      envelope({
        curr_items: (i) => (i >= 58 ? null : i),
        ops: (i) => (i % 2 === 0 ? null : 10),
        mem_used: null,
        cmd_get: null,
      }),
    );
    expect(out.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(57);
    expect(out.get('couchbase_bucket_ops_per_second', { bucket: 'b' })).toBe(10);
    expect(out.all('couchbase_bucket_mem_used_bytes')).toEqual([]);
    expect(out.all('couchbase_bucket_cmd_get_per_second')).toEqual([]);
  });

  it('skips a stat whose value is not an array, keeps the others', () => {
    const env = envelope({ curr_items: 5 });
    env.op.samples.ops = 'n/a';
    const { out, skipped } = map(env);
    expect(skipped).toEqual(['bad_stat']);
    expect(out.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(5);
  });

  it.skipIf(missing('promtool'))('exports an unknown stat under its sanitised name with an "unit unknown" help, latest value', async () => {
    const r = await collect(bucketStatsCollector, oneBucket('b', envelope({ 'new-fancy.stat': (i) => i, ep_magic_count: 3, 'ops_per_second': 1 })));
    expect(r.ok).toBe(true);
    expect(r.set.get('couchbase_bucket_new_fancy_stat', { bucket: 'b' })).toBe(59);
    expect(r.text).toMatch(/# HELP couchbase_bucket_new_fancy_stat Couchbase bucket stat new-fancy\.stat as reported; unit unknown/);
    // Prometheus reserves _count for summaries and histograms.
    expect(r.set.get('couchbase_bucket_ep_magic_count_value', { bucket: 'b' })).toBe(3);
    // A name cbwatch already uses for a known stat is refused rather than mixed in.
    expect(r.set.all('couchbase_bucket_ops_per_second')).toEqual([]);
    expect(r.skipped.get('name_collision')).toBe(1);
    const promtool = requireBinary('promtool') as string;
    expect(execFileSync(promtool, ['check', 'metrics'], { input: r.text, encoding: 'utf8' })).toBe('');
  });

  it('sanitises unknown names into valid, non-reserved metric names', () => {
    expect(unknownMetricName('a/b c')).toBe('a_b_c');
    expect(unknownMetricName('9lives')).toBe('_9lives');
    expect(unknownMetricName('x_total')).toBe('x_total_value');
    expect(unknownMetricName('+++')).toBe('unnamed');
  });

  it('never exports replications/, views/ or spatial/ keys', async () => {
    const env = envelope({
      curr_items: 1,
      'replications/3f1a/src/dst/changes_left': 1000,
      'replications/3f1a/src/dst/docs_written': 5,
      'views/5a22/accesses': 1,
    });
    const r = await collect(bucketStatsCollector, oneBucket('b', env));
    expect(r.ok).toBe(true);
    expect(r.text).not.toMatch(/replications|views|changes_left|docs_written|accesses/);
    expect(r.set.families().map((f) => f.def.name)).toEqual(['couchbase_bucket_curr_items', 'couchbase_bucket_last_sample_timestamp_seconds']);
    expect(r.skipped.size).toBe(0);
  });
});

describe('bucket_stats: haveTStamp and the mean of new samples only', () => {
  it('sends haveTStamp (less the clock slack) after the first poll and averages only the samples since then', async () => {
    const first = envelope({ ops: 10, curr_items: 100 }, 1_700_000_060_000);
    // The second answer overlaps the first by 30 samples (as if haveTStamp were ignored): those must not count.
    const second = envelope({ ops: (i) => (i < 30 ? 10 : 40), curr_items: (i) => 100 + i }, 1_700_000_090_000);
    const queries: Array<RequestOptions['query']> = [];
    let n = 0;
    let clock = 1_700_000_060_300;
    const client = fakeClient({
      [LIST]: [{ name: 'b' }],
      [STATS]: (_p: Record<string, string>, o: RequestOptions) => {
        queries.push(o.query);
        return n++ === 0 ? first : second;
      },
    });
    const state = new Map<string, unknown>();
    const r1 = await collect(bucketStatsCollector, client, { state, now: () => clock });
    expect(r1.set.get('couchbase_bucket_ops_per_second', { bucket: 'b' })).toBe(10);
    expect(queries[0]).toEqual({ zoom: 'minute' });
    clock += 30_000;
    const r2 = await collect(bucketStatsCollector, client, { state, now: () => clock });
    expect(queries[1]).toEqual({ zoom: 'minute', haveTStamp: 1_700_000_055_000 });
    expect(r2.set.get('couchbase_bucket_ops_per_second', { bucket: 'b' })).toBe(40);
    expect(r2.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(159);
  });

  it('aligns a shorter stat array on the newest sample', () => {
    const env = envelope({ ops: (i) => i }, 1_700_000_060_000);
    (env.op.samples as Record<string, unknown[]>).ops = [1, 2, 3, 4]; // only the last 4 seconds
    const { out } = map(env, { memo: { last: 1_700_000_057_000, at: 0 }, now: 3_000 });
    // New samples: t = 58 s, 59 s, 60 s → the last three values.
    expect(out.get('couchbase_bucket_ops_per_second', { bucket: 'b' })).toBe(3);
  });

  it('leaves rates out (never re-averages old samples) when nothing is newer than the previous answer; levels stay', () => {
    const { out, memo } = map(envelope({ ops: (i) => (i < 59 ? 0 : 60), curr_items: 428 }, 1_700_000_060_000), { memo: { last: 1_700_000_060_000, at: 5 }, now: 30_005 });
    expect(out.all('couchbase_bucket_ops_per_second')).toEqual([]);
    expect(out.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(428);
    expect(out.get('couchbase_bucket_last_sample_timestamp_seconds', { bucket: 'b' })).toBe(1_700_000_060);
    // The memo keeps the time of the last answer that brought something, so the next window spans the stall.
    expect(memo).toEqual({ last: 1_700_000_060_000, at: 5 });
  });

  it('reduces a rate over the new samples and a level to the latest', () => {
    expect(reduceSamples({ kind: 'rate', scale: 1 }, [1, 2, 3, 4], 2, true)).toBe(3.5);
    expect(reduceSamples({ kind: 'rate', scale: 1 }, [1, 2, 3, 4], 2, false)).toBeUndefined();
    expect(reduceSamples({ kind: 'level', scale: 0.01 }, [50, 75, null], 0, false)).toBe(0.75);
    expect(reduceSamples({ kind: 'rate', scale: 1 }, [null, null], 0, true)).toBeUndefined();
  });
});

describe('bucket_stats: buckets that come and go', () => {
  it('drops a bucket that left the list, and forgets its timestamp', async () => {
    let buckets = [{ name: 'a' }, { name: 'b' }];
    const client = fakeClient({
      [LIST]: () => buckets,
      [STATS]: () => envelope({ curr_items: 1 }),
    });
    const state = new Map<string, unknown>();
    const r1 = await collect(bucketStatsCollector, client, { state });
    expect(r1.set.all('couchbase_bucket_curr_items').map((s) => s.labels.bucket)).toEqual(['a', 'b']);
    // Per bucket, plus the collector's own registry of unknown-stat families (a key no bucket name can be).
    const buckets_ = (): string[] => [...state.keys()].filter((k) => !k.startsWith('\u0000')).sort();
    expect(buckets_()).toEqual(['a', 'b']);
    buckets = [{ name: 'a' }];
    const r2 = await collect(bucketStatsCollector, client, { state });
    expect(r2.set.all('couchbase_bucket_curr_items').map((s) => s.labels.bucket)).toEqual(['a']);
    expect(buckets_()).toEqual(['a']);
    expect(state.size).toBe(2);
  });

  it('skips a bucket whose stats answer 404 (deleted meanwhile) and keeps the others', async () => {
    const client = fakeClient({
      [LIST]: [{ name: 'kept' }, { name: 'gone' }],
      [STATS]: (p: Record<string, string>) => (p.bucket === 'gone' ? { status: 404, text: 'Requested resource not found.' } : envelope({ curr_items: 7 })),
    });
    const r = await collect(bucketStatsCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.skipped.get('bucket_gone')).toBe(1);
    expect(r.set.all('couchbase_bucket_curr_items').map((s) => [s.labels.bucket, s.value])).toEqual([['kept', 7]]);
  });

  it('encodes bucket names as one path segment', async () => {
    const client = fakeClient({ [LIST]: [{ name: 'a/b %c' }], [STATS]: envelope({ curr_items: 1 }) });
    await collect(bucketStatsCollector, client);
    expect(client.calls.find((c) => c.route === STATS)?.path).toBe('/pools/default/buckets/a%2Fb%20%25c/stats');
  });
});

describe('bucket_stats: hot keys', () => {
  const env = (): Env => ({
    ...envelope({ curr_items: 1 }),
    hot_keys: [
      { name: 'k1', ops: 1 },
      { name: 'k3', ops: 3 },
      { name: 'k2', ops: 2 },
      { name: 'bad', ops: 'x' },
      'garbage',
    ],
  });
  it('are off by default', async () => {
    const r = await collect(bucketStatsCollector, oneBucket('b', env()));
    expect(r.set.all('couchbase_bucket_hot_key_ops_per_second')).toEqual([]);
    expect(r.text).not.toContain('k3');
  });
  it('export the top N by ops when enabled', async () => {
    const r = await collect(bucketStatsCollector, oneBucket('b', env()), { options: { hot_keys: 2 } });
    expect(r.set.all('couchbase_bucket_hot_key_ops_per_second').map((s) => [s.labels.key, s.value])).toEqual([
      ['k3', 3],
      ['k2', 2],
    ]);
  });
});

describe('bucket_stats: failures', () => {
  it('one bucket failing (5xx, 414, bad body) leaves out only its series, counted per reason; the poll succeeds', async () => {
    const client = fakeClient({
      [LIST]: [{ name: 'ok' }, { name: 'five' }, { name: 'long' }, { name: 'junk' }],
      [STATS]: (p: Record<string, string>) =>
        p.bucket === 'five' ? { status: 500, text: 'boom' } : p.bucket === 'long' ? { status: 414, text: 'URI too long' } : p.bucket === 'junk' ? { fail: 'invalid_json' } : envelope({ curr_items: 7 }),
    });
    const r = await collect(bucketStatsCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.all('couchbase_bucket_curr_items').map((x) => [x.labels.bucket, x.value])).toEqual([['ok', 7]]);
    expect(r.set.all('couchbase_bucket_last_sample_timestamp_seconds').map((x) => x.labels.bucket)).toEqual(['ok']);
    expect(Object.fromEntries(r.itemErrors)).toEqual({ http_5xx: 1, http_4xx: 1, bad_body: 1 });
  });

  it('fails when every bucket fails, with the first error', async () => {
    const r = await collect(bucketStatsCollector, fakeClient({ [LIST]: [{ name: 'a' }, { name: 'b' }], [STATS]: { status: 503, text: 'busy' } }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_HTTP');
  });

  it('per node: one node failing is that node\'s item error; the bucket-wide series stay', async () => {
    const client = fakeClient({
      [LIST]: [{ name: 'b', nodes: [{ hostname: 'n1:8091' }, { hostname: 'n2:8091' }] }],
      [STATS]: envelope({ curr_items: 10 }),
      [NODE_STATS]: (p: Record<string, string>) => (p.node === 'n2:8091' ? { fail: 'network' } : envelope({ curr_items: 4 })),
    });
    const r = await collect(bucketStatsCollector, client, { options: { per_node: true } });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'b' })).toBe(10);
    expect(r.set.all('couchbase_bucket_node_curr_items').map((x) => x.labels.node)).toEqual(['n1:8091']);
    expect(Object.fromEntries(r.itemErrors)).toEqual({ network: 1 });
  });

  it('fails when the bucket list fails', async () => {
    const r = await collect(bucketStatsCollector, fakeClient({ [LIST]: { status: 500, text: 'x' } }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_HTTP');
  });
  it('fails on a stats body that is not JSON', async () => {
    const r = await collect(bucketStatsCollector, oneBucket('b', { fail: 'invalid_json' }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_SCHEMA');
  });
  it('fails on a stats envelope without op.samples (schema drift)', async () => {
    const r = await collect(bucketStatsCollector, oneBucket('b', { op: { samplesCount: 60 } }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_SCHEMA');
  });
});

describe('bucket_stats golden expositions pass promtool check metrics', () => {
  it.skipIf(missing('promtool')).each(FIXTURES)('%s', async (rel, bucket) => {
    const promtool = requireBinary('promtool') as string;
    const r = await collect(bucketStatsCollector, oneBucket(bucket, loadFixture(rel)), { options: { hot_keys: 5 } });
    expect(execFileSync(promtool, ['check', 'metrics'], { input: r.text, encoding: 'utf8' })).toBe('');
  });
});

describe('bucket_stats against the simulator', () => {
  // Every DCP connection type on every bucket (a cluster with views, eventing, analytics and other DCP clients).
  const t = simulatorWithClient({ buckets: 4, statSet: 'full', knobs: { dcpConnectionTypes: 'all' } });

  it.skipIf(missing('promtool'))('exports every catalog stat for every bucket, no unknown families, and passes promtool', async () => {
    const r = await collect(bucketStatsCollector, t.client, { options: { hot_keys: 3, per_node: true } });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.skipped.size).toBe(0);
    const known = new Set([...STAT_FAMILIES.values()].flatMap((f) => [f.bucket.name, f.node.name]));
    const names = r.set.families().map((f) => f.def.name);
    const own = ['couchbase_bucket_hot_key_ops_per_second', 'couchbase_bucket_last_sample_timestamp_seconds'];
    expect(names.filter((n) => !known.has(n) && !own.includes(n))).toEqual([]);
    // allocstall is 2^64-1 ("unavailable") in the real capture the simulator follows: dropped by the numeric guard.
    // An average over one sample period whose weight the simulator serves as 0 in every sample of the window (no
    // commit, no update, no waited fetch, no HLC drift measured, no CPU time: read from its answer below) has no
    // window mean: absent. With a weight above 0 somewhere, it is present for every bucket.
    const weights: Record<string, string> = {
      couchbase_bucket_avg_bg_wait_seconds: 'bg_wait_count',
      couchbase_bucket_avg_disk_commit_seconds: 'disk_commit_count',
      couchbase_bucket_avg_disk_update_seconds: 'disk_update_count',
      couchbase_bucket_avg_active_timestamp_drift_seconds: 'ep_active_hlc_drift_count',
      couchbase_bucket_avg_replica_timestamp_drift_seconds: 'ep_replica_hlc_drift_count',
      couchbase_bucket_cpu_utilization_ratio: 'cpu_local_ms',
    };
    const buckets = r.set.all('couchbase_bucket_curr_items').map((x) => x.labels.bucket ?? '');
    expect(buckets).toHaveLength(4);
    // Per family, the buckets whose weight is above 0 in some sample of the simulator's answer.
    const withEvents = new Map<string, number>(Object.keys(weights).map((f) => [f, 0]));
    for (const bucket of buckets) {
      const env = (await t.client.requestJson('/pools/default/buckets/{bucket}/stats', { bucket }, statsEnvelopeSchema, { query: { zoom: 'minute' } })).data;
      for (const [family, w] of Object.entries(weights)) {
        if (!(env?.op.samples[w] as unknown[]).every((v) => v === 0)) withEvents.set(family, (withEvents.get(family) ?? 0) + 1);
      }
    }
    for (const { bucket } of STAT_FAMILIES.values()) {
      const expected = bucket.name === 'couchbase_bucket_allocstall' ? 0 : (withEvents.get(bucket.name) ?? 4);
      expect(r.set.all(bucket.name).length, bucket.name).toBe(expected);
    }
    expect(r.set.dropped.get('unavailable_marker')).toBe(4 + 4 * 3);
    expect(r.text).not.toMatch(/5a222b8c|accesses/);
    expect(r.set.all('couchbase_bucket_hot_key_ops_per_second')).toHaveLength(12);
    // Per node: one series per kv node (3 simulated nodes, all with kv) and bucket.
    expect(r.set.all('couchbase_bucket_node_curr_items')).toHaveLength(12);
    for (const s of r.set.all('couchbase_bucket_vb_active_resident_items_ratio')) expect(s.value).toBeLessThanOrEqual(1);
    const endpoints = new Set(r.requests.map((q) => q.endpoint));
    expect([...endpoints].sort()).toEqual([LIST, NODE_STATS, STATS].sort());
    const promtool = requireBinary('promtool') as string;
    expect(execFileSync(promtool, ['check', 'metrics'], { input: r.text, encoding: 'utf8' })).toBe('');
  });

  it('asks only for new samples on the next poll', async () => {
    const state = new Map<string, unknown>();
    await collect(bucketStatsCollector, t.client, { state });
    const first = (state.get('travel-sample') as { bucket: SampleMemo }).bucket.last;
    expect(first).toBeGreaterThan(0);
    // Wait (by polling, not sleeping a fixed time) until the simulator has a newer sample.
    await expect.poll(() => Math.floor(t.sim.ctx.now() / 1000) * 1000 > first, { timeout: 5000, interval: 50 }).toBe(true);
    const r = await collect(bucketStatsCollector, t.client, { state });
    expect(r.ok, String(r.error)).toBe(true);
    expect((state.get('travel-sample') as { bucket: SampleMemo }).bucket.last).toBeGreaterThan(first);
    expect(r.set.get('couchbase_bucket_curr_items', { bucket: 'travel-sample' })).toBeGreaterThan(0);
  });

  it('drops a bucket deleted from the cluster on the next poll', async () => {
    const removed = t.sim.ctx.buckets.pop();
    try {
      const r = await collect(bucketStatsCollector, t.client);
      expect(r.ok).toBe(true);
      expect(r.set.all('couchbase_bucket_curr_items').map((s) => s.labels.bucket)).not.toContain(removed?.name);
      expect(r.set.all('couchbase_bucket_curr_items')).toHaveLength(3);
    } finally {
      if (removed) t.sim.ctx.buckets.push(removed);
    }
  });
});

describe('bucket_stats under injected simulator faults', () => {
  let sim: Simulator;
  let url: string;
  const clients: CouchbaseClient[] = [];
  const route = '/pools/default/buckets/:bucket/stats';
  beforeAll(async () => {
    sim = createSimulator({ buckets: 3 });
    url = await sim.listen();
  });
  afterEach(() => sim.ctx.faults.clear());
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sim.close();
  });
  const client = (extra: Partial<Parameters<typeof createClient>[0]> = {}): CouchbaseClient => {
    const c = createClient({ cluster: 't', url, username: 'Administrator', password: 'password', ...extra });
    clients.push(c);
    return c;
  };

  const cases: Array<[string, Omit<FaultRule, 'match'>, string, Partial<Parameters<typeof createClient>[0]>]> = [
    ['status 500', { kind: 'status', status: 500 }, 'CBW_ERR_HTTP', {}],
    ['connection reset', { kind: 'reset' }, 'CBW_ERR_NETWORK', {}],
    ['hang', { kind: 'hang' }, 'CBW_ERR_TIMEOUT', { requestTimeout: 300 }],
    ['invalid JSON', { kind: 'invalid_json' }, 'CBW_ERR_SCHEMA', {}],
    ['truncated body', { kind: 'truncated' }, 'CBW_ERR_SCHEMA', {}],
    ['oversize body', { kind: 'oversize', bytes: 4 * 1024 * 1024 }, 'CBW_ERR_TOO_LARGE', { maxResponseBytes: 1024 * 1024 }],
    // Under the byte cap, but more values than the value cap: stopped while it streams in (issue 13, case 1).
    ['too many JSON values', { kind: 'oversize', bytes: 2 * 1024 * 1024, fill: '[]' }, 'CBW_ERR_TOO_LARGE', { maxAnswerValues: 100_000 }],
    ['403 with permissions', { kind: 'forbidden', permissions: ['cluster.bucket[travel-sample].stats!read'] }, 'CBW_ERR_FORBIDDEN', {}],
  ];

  it.each(cases)('%s: the collector fails with its code, the buckets collector is untouched', async (_name, fault, code, extra) => {
    const c = client(extra);
    sim.ctx.faults.add({ match: route, ...fault });
    const r = await collect(bucketStatsCollector, c);
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe(code);
    if (code === 'CBW_ERR_FORBIDDEN') expect((r.error as { permissions?: string[] }).permissions).toEqual(['cluster.bucket[travel-sample].stats!read']);
    const other = await collect(bucketsCollector, c);
    expect(other.ok, String(other.error)).toBe(true);
    expect(other.set.get('couchbase_buckets')).toBe(3);
    sim.ctx.faults.clear();
    const again = await collect(bucketStatsCollector, c);
    expect(again.ok, String(again.error)).toBe(true);
  });

  it('one bucket timing out or answering 500 through the simulator: the other buckets stay, success 1', async () => {
    const c = client({ requestTimeout: 300 });
    sim.ctx.faults.add({ match: /\/buckets\/beer-sample\/stats$/, kind: 'hang' });
    sim.ctx.faults.add({ match: /\/buckets\/gamesim-sample\/stats$/, kind: 'status', status: 500 });
    const r = await collect(bucketStatsCollector, c);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.all('couchbase_bucket_curr_items').map((x) => x.labels.bucket)).toEqual(['travel-sample']);
    expect(Object.fromEntries(r.itemErrors)).toEqual({ timeout: 1, http_5xx: 1 });
  });

  it('one bucket answering too many JSON values: that item fails as too_large, the other buckets stay, success 1', async () => {
    const c = client({ maxAnswerValues: 100_000 });
    sim.ctx.faults.add({ match: /\/buckets\/beer-sample\/stats$/, kind: 'oversize', bytes: 2 * 1024 * 1024, fill: '[]' });
    const r = await collect(bucketStatsCollector, c);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.all('couchbase_bucket_curr_items').map((x) => x.labels.bucket).sort()).toEqual(['gamesim-sample', 'travel-sample']);
    expect(Object.fromEntries(r.itemErrors)).toEqual({ too_large: 1 });
    sim.ctx.faults.clear();
    const again = await collect(bucketStatsCollector, c);
    expect(again.ok, String(again.error)).toBe(true);
    expect(again.itemErrors.size).toBe(0);
    expect(again.set.all('couchbase_bucket_curr_items')).toHaveLength(3);
  });

  it('401 on a wrong password', async () => {
    const r = await collect(bucketStatsCollector, client({ password: 'wrong' }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_AUTH');
  });
});

describe('mapBucketStats is pure', () => {
  it('returns no memo and adds nothing for an empty envelope', () => {
    const env: StatsEnvelope = statsEnvelopeSchema.parse({ op: { samples: {}, lastTStamp: 0 } });
    const out = new SampleSet();
    expect(mapBucketStats({ bucket: 'b', envelope: env }, out)).toBeUndefined();
    expect(out.size).toBe(0);
  });
});

describe('bucket_stats: an unknown stat never duplicates another collector\'s family', () => {
  it('skips envelope stats named collections, scopes and manifest_uid; /metrics with the collections collector stays valid', async () => {
    const env = envelope({ curr_items: 3, collections: 4, scopes: 2, manifest_uid: 7, brand_new: 1 });
    const stats = await collect(bucketStatsCollector, oneBucket('b', env));
    expect(stats.ok, String(stats.error)).toBe(true);
    expect(stats.skipped.get('name_collision')).toBe(3);
    const names = stats.set.families().map((f) => f.def.name);
    expect(names).not.toContain('couchbase_bucket_collections');
    expect(names).not.toContain('couchbase_bucket_scopes');
    expect(names).not.toContain('couchbase_bucket_manifest_uid');
    expect(stats.set.get('couchbase_bucket_brand_new', { bucket: 'b' })).toBe(1);
    const scopes = await collect(
      collectionsCollector,
      fakeClient({ [LIST]: [{ name: 'b' }], '/pools/default/buckets/{bucket}/scopes': loadFixture('pools-default-buckets-name-scopes/docs-server-7.6plus.json') }),
    );
    expect(scopes.ok, String(scopes.error)).toBe(true);
    const text = await renderSets([
      { base: { couchbase_cluster: 'test' }, set: stats.set },
      { base: { couchbase_cluster: 'test' }, set: scopes.set },
    ]);
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    expect(types.length).toBe(new Set(types).size);
  });

  it('reserves every couchbase_bucket_* family of the catalog that bucket_stats does not own', () => {
    const others = allFamilies().filter((f) => f.name.startsWith('couchbase_bucket_') && f.collector !== 'bucket_stats');
    expect(others.length).toBeGreaterThan(0);
    for (const f of others) expect(RESERVED_FAMILY_NAMES.has(f.name), f.name).toBe(true);
  });
});

describe('bucket_stats: label value cap', () => {
  it('exports a 5,000-character bucket name shortened to 1,024 bytes (prefix, ~, hash), counted; two such buckets stay two', async () => {
    const a = `${'x'.repeat(4999)}a`;
    const b = `${'x'.repeat(4999)}b`;
    const client = fakeClient({ [LIST]: [{ name: a }, { name: b }], [STATS]: () => envelope({ curr_items: 7 }) });
    const r = await collect(bucketStatsCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    const got = r.set.all('couchbase_bucket_curr_items').map((s) => s.labels.bucket ?? '');
    expect(got).toHaveLength(2);
    for (const v of got) {
      expect(v).toHaveLength(1024);
      expect(v).toMatch(/^x{1007}~[0-9a-f]{16}$/);
    }
    expect(got[0]).not.toBe(got[1]);
    // curr_items and the last-sample time, for each of the two buckets.
    expect(r.set.capped.get('label_value_length')).toBe(4);
    expect(r.text).not.toContain('x'.repeat(1008));
  });

  it.skipIf(missing('promtool'))('passes promtool with long bucket and stat names', async () => {
    const client = fakeClient({ [LIST]: [{ name: 'é'.repeat(3000) }], [STATS]: () => envelope({ curr_items: 7, [`${'z'.repeat(3000)}.x`]: 1 }) });
    const r = await collect(bucketStatsCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    for (const line of r.text.split('\n')) if (!line.startsWith('#')) expect(line.length).toBeLessThan(1400);
    const promtool = requireBinary('promtool') as string;
    expect(execFileSync(promtool, ['check', 'metrics'], { input: r.text, encoding: 'utf8' })).toBe('');
  });
});

describe('bucket_stats: unknown stats with very long names', () => {
  it('cuts the family name to 200 characters after the prefix, with a hash; two such names stay two families', async () => {
    const a = `${'s'.repeat(4999)}a`;
    const b = `${'s'.repeat(4999)}b`;
    const client = fakeClient({ [LIST]: [{ name: 'k' }], [STATS]: () => envelope({ [a]: 1, [b]: 2 }) });
    const r = await collect(bucketStatsCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    const names = r.set.families().map((f) => f.def.name).filter((n) => n.startsWith('couchbase_bucket_sss'));
    expect(names).toHaveLength(2);
    for (const n of names) {
      expect(n).toHaveLength('couchbase_bucket_'.length + 200);
      expect(n).toMatch(/^couchbase_bucket_s{183}_[0-9a-f]{16}$/);
    }
    expect(new Set(names).size).toBe(2);
    expect(r.text.length).toBeLessThan(5000);
  });
});

describe('bucket_stats: per-node memos follow the node list', () => {
  it('forgets the memo of a node that left the bucket, so renamed nodes never pile up', async () => {
    let poll = 0;
    const client = fakeClient({
      // Every poll the bucket lives on two nodes never seen before.
      [LIST]: () => [{ name: 'b', nodes: [{ hostname: `n${2 * poll}:8091` }, { hostname: `n${2 * poll + 1}:8091` }] }],
      [STATS]: () => envelope({ curr_items: 1 }),
      [NODE_STATS]: () => envelope({ curr_items: 1 }),
    });
    const state = new Map<string, unknown>();
    for (poll = 0; poll < 10; poll++) {
      const r = await collect(bucketStatsCollector, client, { state, options: { per_node: true } });
      expect(r.ok, String(r.error)).toBe(true);
      const memo = state.get('b') as { nodes: Map<string, unknown> };
      expect([...memo.nodes.keys()].sort()).toEqual([`n${2 * poll + 1}:8091`, `n${2 * poll}:8091`].sort());
    }
  });
});
