/**
 * Issue 24, items 2 and 4: stats that are themselves an average or a share over ONE sample period are the mean
 * over the samples since the previous poll, weighted as ns_server defines them (each sample is numerator /
 * denominator of that period: src/menelaus_stats.erl computed_stats_lazy_proplist for avg_disk_commit_time,
 * hit_ratio, ep_cache_miss_rate…; src/system_stats_collector.erl for cpu_utilization_rate = 100 × (cpu_local_ms −
 * cpu_idle_ms) / cpu_local_ms), and percentages are divided by 100.
 *
 * Expected values are worked out by hand from the real captures in test/fixtures/couchbase/ (the sums are written
 * beside each expectation) or from hand-written samples, never by the code under test.
 */
import { describe, expect, it } from 'vitest';
import { bucketStatsCollector, mapBucketStats } from '../../src/collectors/bucket_stats.js';
import { reduceSamples, toBaseUnit } from '../../src/stats/samples.js';
import type { StatsEnvelope } from '../../src/couchbase/buckets.js';
import { SampleSet } from '../../src/metrics/family.js';
import { collect, fakeClient, loadFixture } from '../helpers/collect.js';

const LIST = '/pools/default/buckets';
const STATS = '/pools/default/buckets/{bucket}/stats';
const B = { bucket: 'beer-sample' };

function oneBucket(bucket: string, stats: unknown) {
  return fakeClient({ [LIST]: [{ name: bucket, bucketType: 'membase' }], [STATS]: stats });
}

type Env = { op: { samples: Record<string, unknown[]>; lastTStamp: number } };

/** One pure mapping of an envelope, first poll (no memo) unless `memo` is given; 30 s interval, 1 s steps. */
function mapOnce(env: Env, extra: { memo?: { last: number; at: number }; now?: number } = {}): SampleSet {
  const out = new SampleSet();
  mapBucketStats({ bucket: 'beer-sample', envelope: env as unknown as StatsEnvelope, intervalMs: 30_000, stepMs: 1_000, ...extra }, out);
  return out;
}

describe('4.6.3 capture (appd-4.6.3.json, lastTStamp 1507141215110), first poll, 30 s interval', () => {
  // The window: samples newer than lastTStamp − 30 s + half a step, i.e. indexes 30…59 (index 30 is 28.71 s
  // before the newest sample, index 29 is 29.70 s before it).

  it('avg_disk_commit_seconds is Σdisk_commit_total / Σdisk_commit_count / 1e6 over the window: 0.5, where the newest sample says 0', async () => {
    const r = await collect(bucketStatsCollector, oneBucket('beer-sample', loadFixture('bucket-stats/appd-4.6.3.json')));
    expect(r.ok, String(r.error)).toBe(true);
    // Three commits in the window, at indexes 32, 42, 52:
    // Σdisk_commit_total = 2016129.032258064 + 2016129.032258064 + 2018163.471241171 = 6050421.535757299 µs/s
    // Σdisk_commit_count = 4.032258064516129 + 4.032258064516129 + 4.036326942482341 = 12.100843071514599 /s
    // 6050421.535757299 / 12.100843071514599 / 1e6 = 0.5 s (each commit took 0.5 s). The newest sample is 0.
    expect(r.set.get('couchbase_bucket_avg_disk_commit_seconds', B)).toBeCloseTo(0.5, 12);
  });

  it('cpu_utilization_ratio is (Σcpu_local_ms − Σcpu_idle_ms) / Σcpu_local_ms over the window: 12.4 %, where the newest sample says 24.9 %', async () => {
    const r = await collect(bucketStatsCollector, oneBucket('beer-sample', loadFixture('bucket-stats/appd-4.6.3.json')));
    // cpu_local_ms[30…59] = 3880 + 3800 + 3870 + 3840 + 3840 + 3880 + 3850 + 3800 + 3870 + 3810 + 3870 + 3810 + 3880
    //   + 3800 + 3840 + 3870 + 3890 + 3860 + 3850 + 3780 + 3940 + 3820 + 3910 + 3930 + 3840 + 3800 + 3850 + 3850
    //   + 3880 + 3820 = 115530
    // cpu_idle_ms[30…59] = 3580 + 2680 + 3110 + 3480 + 3390 + 3440 + 3560 + 3380 + 3550 + 3540 + 3570 + 3560 + 3350
    //   + 3390 + 3370 + 3250 + 3520 + 3430 + 3590 + 3470 + 3540 + 2950 + 3470 + 3520 + 3420 + 3020 + 3270 + 3410
    //   + 3480 + 2870 = 101160
    // (115530 − 101160) / 115530 = 14370 / 115530 = 0.12438…; the newest sample is 24.86910994764398 %.
    expect(r.set.get('couchbase_bucket_cpu_utilization_ratio', B)).toBeCloseTo(14370 / 115530, 12);
  });

  it('averages with no event in the window are absent, not 0: no fetch waited for, no update, no get, no HLC drift measured', () => {
    const out = mapOnce(loadFixture<Env>('bucket-stats/appd-4.6.3.json'));
    // bg_wait_count, disk_update_count, cmd_get and ep_*_hlc_drift_count are 0 in all 60 samples of the capture.
    for (const f of [
      'couchbase_bucket_avg_bg_wait_seconds',
      'couchbase_bucket_avg_disk_update_seconds',
      'couchbase_bucket_hit_ratio',
      'couchbase_bucket_ep_cache_miss_ratio',
      'couchbase_bucket_avg_active_timestamp_drift_seconds',
      'couchbase_bucket_avg_replica_timestamp_drift_seconds',
    ]) {
      expect(out.all(f), f).toEqual([]);
    }
  });

  it('second poll 15 s later: only the samples since then (indexes 45…59)', () => {
    const env = loadFixture<Env>('bucket-stats/appd-4.6.3.json');
    // Previous answer 15 s before on the exporter's clock: the window is the samples newer than lastTStamp −
    // 15 s + 0.5 s, i.e. indexes 45…59 (index 45 is 13.86 s before the newest, index 44 14.85 s).
    const out = mapOnce(env, { memo: { last: 1507141215110 - 15_000, at: 1_000_000 }, now: 1_015_000 });
    // cpu_local_ms[45…59] = 3870 + 3890 + 3860 + 3850 + 3780 + 3940 + 3820 + 3910 + 3930 + 3840 + 3800 + 3850 + 3850
    //   + 3880 + 3820 = 57890; cpu_idle_ms[45…59] = 3250 + 3520 + 3430 + 3590 + 3470 + 3540 + 2950 + 3470 + 3520
    //   + 3420 + 3020 + 3270 + 3410 + 3480 + 2870 = 50210. (57890 − 50210) / 57890 = 7680 / 57890.
    expect(out.get('couchbase_bucket_cpu_utilization_ratio', B)).toBeCloseTo(7680 / 57890, 12);
    // One commit in the window (index 52): 2018163.471241171 / 4.036326942482341 / 1e6 = 0.5.
    expect(out.get('couchbase_bucket_avg_disk_commit_seconds', B)).toBeCloseTo(0.5, 12);
  });

  it('an answer with no new sample leaves the window means out (levels stay)', () => {
    const env = loadFixture<Env>('bucket-stats/appd-4.6.3.json');
    const out = mapOnce(env, { memo: { last: 1507141215110, at: 1_000_000 }, now: 1_030_000 });
    expect(out.all('couchbase_bucket_cpu_utilization_ratio')).toEqual([]);
    expect(out.all('couchbase_bucket_avg_disk_commit_seconds')).toEqual([]);
    expect(out.get('couchbase_bucket_curr_items', B)).toBe(7303);
  });
});

describe('5.0.1 capture (nri-couchbase-5.0.1.json, 59 samples), first poll, 30 s interval', () => {
  it('cpu_utilization_ratio is the mean of its samples 29…58 weighted by cpu_local_ms', () => {
    const env = loadFixture<Env>('bucket-stats/nri-couchbase-5.0.1.json');
    const s = env.op.samples as Record<string, number[]>;
    // In this capture the samples of cpu_utilization_rate are not 100 × (cpu_local_ms − cpu_idle_ms) /
    // cpu_local_ms of the same sample (9.54 % against 7.48 % at index 52, for instance): the envelope's system stats
    // were aggregated over the cluster's nodes. cbwatch averages the stat's own samples, weighted by the period's
    // CPU time: Σ(cpu_utilization_rate × cpu_local_ms) / Σcpu_local_ms = 4958152.250025073 / 354520 = 13.99 %
    // (the sums of the capture's last 30 samples, checked here against the file, not the code).
    const w = (s.cpu_local_ms ?? []).slice(29);
    const u = (s.cpu_utilization_rate ?? []).slice(29);
    expect(w.reduce((a, v) => a + v, 0)).toBe(354520);
    expect(u.reduce((a, v, i) => a + v * (w[i] ?? NaN), 0)).toBeCloseTo(4958152.250025073, 6);
    expect(mapOnce(env).get('couchbase_bucket_cpu_utilization_ratio', B)).toBeCloseTo(4958152.250025073 / 354520 / 100, 12);
  });
});

describe('6.x capture without cpu_local_ms (telegraf-2021.json): the CPU shares are the plain mean of the window', () => {
  it('cpu_utilization/user/sys ratios: the sum of samples 30…59 / 30 / 100', () => {
    const out = mapOnce(loadFixture<Env>('bucket-stats/telegraf-2021.json'));
    const b = { bucket: 'beer-sample' };
    // Sums of the capture's samples 30…59 (in percent): cpu_utilization_rate 592.4983375282071, cpu_user_rate
    // 419.5521688202383, cpu_sys_rate 172.94616870796875; newest samples 11.42, 7.39, 4.03.
    expect(out.get('couchbase_bucket_cpu_utilization_ratio', b)).toBeCloseTo(592.4983375282071 / 3000, 12);
    expect(out.get('couchbase_bucket_cpu_user_ratio', b)).toBeCloseTo(419.5521688202383 / 3000, 12);
    expect(out.get('couchbase_bucket_cpu_sys_ratio', b)).toBeCloseTo(172.94616870796875 / 3000, 12);
  });
});

describe('hit ratios weighted by cmd_get (hand-written samples; ns_server: 100 × get_hits / cmd_get per sample)', () => {
  it('hit_ratio and ep_cache_miss_rate over a window of three 1-s samples with 10, 0 and 90 gets', () => {
    const t0 = 1_700_000_000_000;
    const env: Env = {
      op: {
        lastTStamp: t0 + 2000,
        samples: {
          timestamp: [t0, t0 + 1000, t0 + 2000],
          cmd_get: [10, 0, 90],
          get_hits: [10, 0, 45],
          ep_bg_fetched: [5, 0, 9],
          // What ns_server puts in each sample: 100 × 10 / 10, 0 (no get: badarith → 0), 100 × 45 / 90.
          hit_ratio: [100, 0, 50],
          // 100 × 5 / 10, 0, 100 × 9 / 90.
          ep_cache_miss_rate: [50, 0, 10],
        },
      },
    };
    const out = mapOnce(env);
    // Σget_hits / Σcmd_get = (10 + 45) / (10 + 90) = 0.55; the plain mean of the samples would be 0.5, the newest 0.5.
    expect(out.get('couchbase_bucket_hit_ratio', B)).toBeCloseTo(0.55, 15);
    // Σep_bg_fetched / Σcmd_get = (5 + 9) / 100 = 0.14; the plain mean would be 0.2, the newest 0.1.
    expect(out.get('couchbase_bucket_ep_cache_miss_ratio', B)).toBeCloseTo(0.14, 15);
  });

  it('a denominator that is null over the whole window (a node or version without it): the plain mean', () => {
    const t0 = 1_700_000_000_000;
    const env: Env = { op: { lastTStamp: t0 + 1000, samples: { timestamp: [t0, t0 + 1000], cpu_local_ms: [null, null], cpu_utilization_rate: [10, 20] } } };
    // (10 + 20) / 2 = 15 % = 0.15.
    expect(mapOnce(env).get('couchbase_bucket_cpu_utilization_ratio', B)).toBeCloseTo(0.15, 15);
  });
});

describe('percentages are divided by 100 (issue 24, item 4)', () => {
  it('94 % is 0.94 exactly, as a level and as a window mean, and prints as 0.94', async () => {
    expect(reduceSamples({ kind: 'level', scale: 0.01 }, [94], 0, true)).toBe(0.94);
    expect(reduceSamples({ kind: 'mean', scale: 0.01 }, [94, 94], 0, true)).toBe(0.94);
    expect(toBaseUnit(94, 0.01)).toBe(0.94);
    // Milliseconds and microseconds the same way: 7 ms is 0.007 s, 3 µs 0.000003 s.
    expect(toBaseUnit(7, 0.001)).toBe(0.007);
    expect(toBaseUnit(3, 1e-6)).toBe(0.000003);
    const t0 = 1_700_000_000_000;
    const env = { op: { lastTStamp: t0, samples: { timestamp: [t0], vb_active_resident_items_ratio: [94] } } };
    const r = await collect(bucketStatsCollector, oneBucket('b', env));
    expect(r.text).toMatch(/^couchbase_bucket_vb_active_resident_items_ratio\{couchbase_cluster="test",bucket="b"\} 0\.94$/m);
  });

  it('a real capture: couch_docs_fragmentation 83 % (telegraf 2021 per-node envelope) is 0.83, not 0.8300000000000001', async () => {
    const env = loadFixture<Env>('bucket-node-stats/telegraf-2021-beer-sample.json');
    expect(env.op.samples.couch_docs_fragmentation?.at(-1)).toBe(83);
    const out = new SampleSet();
    mapBucketStats({ bucket: 'beer-sample', node: '172.94.77.2:8091', envelope: env as unknown as StatsEnvelope, intervalMs: 30_000 }, out);
    expect(out.get('couchbase_bucket_node_couch_docs_fragmentation_ratio', { bucket: 'beer-sample', node: '172.94.77.2:8091' })).toBe(0.83);
  });
});
