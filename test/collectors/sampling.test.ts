/**
 * The sampling rules of bucket_stats and xdcr (src/stats/samples.ts), against the simulator with a clock
 * stepped by hand. Every expected value is worked out by hand from the stat curves set through the simulator's
 * `bucketStatValues` knob (t = real epoch ms); the simulator serves each zoom with its own spacing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { zoomFor } from '../../src/stats/samples.js';
import { xdcrCollector } from '../../src/collectors/xdcr.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { collect } from '../helpers/collect.js';
import type { CollectResult } from '../helpers/collect.js';

/** 2023-11-14 00:00:00 UTC: a whole day, so every zoom's sample grid starts here. */
const T1 = 1_699_920_000_000;
const S = 1000;
const MIN = 60 * S;
const B = { bucket: 'travel-sample' };

interface Rig {
  sim: Simulator;
  client: CouchbaseClient;
  clock: { now: number };
  knobs: Record<string, unknown>;
  state: Map<string, unknown>;
}

async function rig(knobs: Record<string, unknown> = {}, opts: { buckets?: number; replications?: number } = {}): Promise<Rig> {
  const clock = { now: T1 };
  const sim = createSimulator({ buckets: opts.buckets ?? 1, replications: opts.replications ?? 0, clock: () => clock.now, knobs });
  const client = createClient({ cluster: 't', url: await sim.listen(), username: 'Administrator', password: 'password' });
  return { sim, client, clock, knobs: sim.ctx.options.knobs, state: new Map() };
}

/** `interval` as the configuration file reads it: a duration string such as 5m. */
function configured(interval: string): { interval: number } {
  // collect() parses options with the configuration schema, which turns the string into milliseconds.
  return { interval } as unknown as { interval: number };
}

async function pollBuckets(r: Rig, interval: string): Promise<CollectResult> {
  const res = await collect(bucketStatsCollector, r.client, { state: r.state, now: () => r.clock.now, options: configured(interval) });
  expect(res.ok, String(res.error)).toBe(true);
  return res;
}

const gets = (res: CollectResult): number | undefined => res.set.get('couchbase_bucket_cmd_get_per_second', B);

describe('zoom follows the poll interval', () => {
  it('is the finest zoom whose window covers the interval (reference table)', () => {
    expect(zoomFor(15 * S).name).toBe('minute');
    expect(zoomFor(60 * S).name).toBe('minute');
    expect(zoomFor(90 * S).name).toBe('hour');
    expect(zoomFor(5 * MIN).name).toBe('hour');
    expect(zoomFor(60 * MIN).name).toBe('hour');
    expect(zoomFor(2 * 60 * MIN).name).toBe('day');
    expect(zoomFor(2 * 24 * 60 * MIN).name).toBe('week');
  });
});

describe('bucket_stats: a rate is the mean of exactly the samples since the previous poll', () => {
  let r: Rig;
  afterEach(async () => {
    await r.client.close();
    await r.sim.close();
  });

  it('15 s (minute zoom, 1 s samples): gets of 1, 2, … 15 per second export their mean, 8', async () => {
    r = await rig({ bucketStatValues: { cmd_get: (t: number) => Math.max(0, (t - T1) / S) } });
    await pollBuckets(r, '15s');
    r.clock.now = T1 + 15 * S;
    expect(gets(await pollBuckets(r, '15s'))).toBe(8);
  });

  it('60 s (minute zoom): 30 s at 100/s then 30 s at 300/s export 200', async () => {
    r = await rig({ bucketStatValues: { cmd_get: (t: number) => (t <= T1 + 30 * S ? 100 : 300) } });
    await pollBuckets(r, '60s');
    r.clock.now = T1 + 60 * S;
    expect(gets(await pollBuckets(r, '60s'))).toBe(200);
  });

  it('90 s (hour zoom, 4 s samples): the windows of consecutive polls neither overlap nor leave a gap', async () => {
    r = await rig({ bucketStatValues: { cmd_get: (t: number) => (t <= T1 + 44 * S ? 1000 : t <= T1 + 88 * S ? 0 : 460) } });
    await pollBuckets(r, '90s');
    r.clock.now = T1 + 90 * S;
    // Newest sample at +88 s (4 s grid): samples +4…+88 s, 11 at 1000 and 11 at 0.
    expect(gets(await pollBuckets(r, '90s'))).toBe(500);
    r.clock.now = T1 + 180 * S;
    // Samples +92…+180 s only (23 of them, all 460): +88 s was counted by the previous poll.
    expect(gets(await pollBuckets(r, '90s'))).toBe(460);
  });

  it('5 m (hour zoom): 4 minutes at 1000 gets/s then 1 idle minute export 800', async () => {
    r = await rig({ bucketStatValues: { cmd_get: (t: number) => (t <= T1 ? 500 : t <= T1 + 4 * MIN ? 1000 : 0), curr_items: (t: number) => (t - T1) / S } });
    const first = await pollBuckets(r, '5m');
    // First poll: the last interval's samples (all 500 before T1).
    expect(gets(first)).toBe(500);
    r.clock.now = T1 + 5 * MIN;
    const second = await pollBuckets(r, '5m');
    // 75 samples 4 s apart: 60 at 1000, 15 at 0.
    expect(gets(second)).toBe(800);
    // A level is the newest sample: +300 s.
    expect(second.set.get('couchbase_bucket_curr_items', B)).toBe(300);
    expect(second.set.get('couchbase_bucket_last_sample_timestamp_seconds', B)).toBe((T1 + 5 * MIN) / 1000);
  });

  it('2 h (day zoom, 1 min samples): an hour at 10/s and an hour at 30/s export 20', async () => {
    r = await rig({ bucketStatValues: { cmd_get: (t: number) => (t <= T1 + 60 * MIN ? 10 : 30) } });
    await pollBuckets(r, '2h');
    r.clock.now = T1 + 120 * MIN;
    expect(gets(await pollBuckets(r, '2h'))).toBe(20);
  });
});

describe('bucket_stats: an answer with no new sample never makes an old value look fresh', () => {
  let r: Rig;
  beforeEach(async () => {
    r = await rig({ bucketStatValues: { cmd_get: (t: number) => Math.max(0, (t - T1) / S), curr_items: () => 428 } });
  });
  afterEach(async () => {
    await r.client.close();
    await r.sim.close();
  });

  it('stalled stats: no rate, the level stays (no 428 → nothing → 428), the newest sample time stops', async () => {
    r.clock.now = T1 + 30 * S;
    const fresh = await pollBuckets(r, '30s');
    expect(gets(fresh)).toBe(15.5);
    r.knobs.statsStalledAt = T1 + 30 * S;
    r.clock.now = T1 + 60 * S;
    const stalled = await pollBuckets(r, '30s');
    expect(gets(stalled)).toBeUndefined();
    expect(stalled.set.get('couchbase_bucket_curr_items', B)).toBe(428);
    expect(stalled.set.get('couchbase_bucket_last_sample_timestamp_seconds', B)).toBe((T1 + 30 * S) / 1000);
    delete r.knobs.statsStalledAt;
    r.clock.now = T1 + 90 * S;
    const resumed = await pollBuckets(r, '30s');
    expect(resumed.set.get('couchbase_bucket_curr_items', B)).toBe(428);
    // The window spans the stall: every sample since the last fresh answer (+31…+90 s).
    expect(gets(resumed)).toBe(60.5);
  });

  it('a node clock stepped back an hour: the memo is reset at once and rates are back on the next poll', async () => {
    r.clock.now = T1 + 30 * S;
    await pollBuckets(r, '30s');
    r.knobs.statsClockSkewMs = [-60 * MIN];
    r.clock.now = T1 + 60 * S;
    const stepped = await pollBuckets(r, '30s');
    expect(gets(stepped)).toBeUndefined();
    expect(stepped.set.get('couchbase_bucket_curr_items', B)).toBe(428);
    expect(stepped.set.get('couchbase_bucket_last_sample_timestamp_seconds', B)).toBe((T1 + 60 * S - 60 * MIN) / 1000);
    r.clock.now = T1 + 90 * S;
    // Real seconds +61…+90 (the simulator stamps them an hour early).
    expect(gets(await pollBuckets(r, '30s'))).toBe(75.5);
  });
});

describe('bucket_stats behind a load balancer over nodes whose clocks differ by seconds', () => {
  it('no gaps and no double counting: each poll averages exactly the real seconds since the previous one', async () => {
    // Requests go round-robin to three nodes: on time, 3 s ahead, 2 s behind.
    const r = await rig({ statsClockSkewMs: [0, 3000, -2000], bucketStatValues: { cmd_get: (t: number) => Math.max(0, (t - T1) / S) } });
    try {
      await pollBuckets(r, '30s');
      for (let i = 1; i <= 6; i++) {
        r.clock.now = T1 + i * 30 * S;
        // Real seconds 30(i-1)+1 … 30i, whose values are those numbers: mean 30(i-1) + 15.5.
        expect(gets(await pollBuckets(r, '30s')), `poll ${i}`).toBe(30 * (i - 1) + 15.5);
      }
    } finally {
      await r.client.close();
      await r.sim.close();
    }
  });
});

describe('xdcr: zoom, stalled stats and the newest sample time per replication', () => {
  it('asks the zoom of the interval, and with stalled stats keeps levels, drops rates, stops the sample time', async () => {
    const r = await rig({}, { buckets: 3, replications: 2 });
    try {
      const poll = async (interval: string): Promise<CollectResult> => {
        const res = await collect(xdcrCollector, r.client, { state: r.state, now: () => r.clock.now, options: configured(interval) });
        expect(res.ok, String(res.error)).toBe(true);
        return res;
      };
      await poll('5m');
      r.clock.now = T1 + 5 * MIN;
      const fresh = await poll('5m');
      const rep = fresh.set.all('couchbase_xdcr_last_sample_timestamp_seconds');
      expect(rep).toHaveLength(2);
      expect(rep.every((s) => s.value === (T1 + 5 * MIN) / 1000)).toBe(true);
      expect(fresh.set.all('couchbase_xdcr_rate_replicated_per_second').length).toBeGreaterThan(0);
      r.knobs.statsStalledAt = T1 + 5 * MIN;
      r.clock.now = T1 + 10 * MIN;
      const stalled = await poll('5m');
      expect(stalled.set.all('couchbase_xdcr_rate_replicated_per_second')).toEqual([]);
      expect(stalled.set.all('couchbase_xdcr_changes_left')).toHaveLength(fresh.set.all('couchbase_xdcr_changes_left').length);
      expect(stalled.set.all('couchbase_xdcr_last_sample_timestamp_seconds').every((s) => s.value === (T1 + 5 * MIN) / 1000)).toBe(true);
    } finally {
      await r.client.close();
      await r.sim.close();
    }
  });
});

describe('past the poll deadline, failing requests are the poll\'s failure, not item errors', () => {
  it('xdcr and bucket_stats whose stats requests hang: success 0, no item error counted', async () => {
    const sim = createSimulator({ buckets: 3, replications: 4 });
    const client = createClient({ cluster: 't', url: await sim.listen(), username: 'Administrator', password: 'password' });
    try {
      sim.ctx.faults.add({ match: /\/stats(\/|$)/, kind: 'hang' });
      for (const collector of [xdcrCollector, bucketStatsCollector] as const) {
        const res = await collect(collector as typeof xdcrCollector, client, { options: { timeout: 1 } as unknown as { timeout: number } });
        expect(res.ok, collector.name).toBe(false);
        // Let the aborted requests settle: nothing may be counted after the poll ended either.
        await new Promise((r) => setTimeout(r, 300));
        expect([...res.itemErrors], collector.name).toEqual([]);
      }
    } finally {
      sim.ctx.faults.clear();
      await client.close();
      await sim.close();
    }
  });
});

describe('xdcr: rates over exactly the samples since the previous poll, on every zoom and behind a load balancer', () => {
  const poll = async (r: Rig, interval: string): Promise<CollectResult> => {
    const res = await collect(xdcrCollector, r.client, { state: r.state, now: () => r.clock.now, options: configured(interval) });
    expect(res.ok, String(res.error)).toBe(true);
    return res;
  };
  /** rate_replicated of every replication on every node, as exported. */
  const rates = (res: CollectResult): number[] => [...new Set(res.set.all('couchbase_xdcr_rate_replicated_per_second').map((s) => s.value))];

  it('5 m (hour zoom): 4 minutes at 1000 docs/s then an idle minute export 800 on every node', async () => {
    const r = await rig({ xdcrStatValues: { rate_replicated: (t: number) => (t <= T1 ? 500 : t <= T1 + 4 * MIN ? 1000 : 0), changes_left: () => 42 } }, { buckets: 3, replications: 2 });
    try {
      expect(rates(await poll(r, '5m'))).toEqual([500]);
      r.clock.now = T1 + 5 * MIN;
      const res = await poll(r, '5m');
      expect(rates(res)).toEqual([800]);
      // 2 replications x 3 nodes.
      expect(res.set.all('couchbase_xdcr_rate_replicated_per_second')).toHaveLength(6);
      expect(res.set.all('couchbase_xdcr_changes_left').every((s) => s.value === 42)).toBe(true);
    } finally {
      await r.client.close();
      await r.sim.close();
    }
  });

  it('behind a load balancer over skewed clocks, each poll averages exactly the real seconds since the previous one', async () => {
    const r = await rig({ statsClockSkewMs: [0, 3000, -2000, 1000], xdcrStatValues: { rate_replicated: (t: number) => Math.max(0, (t - T1) / S) } }, { buckets: 3, replications: 1 });
    try {
      await poll(r, '15s');
      for (let i = 1; i <= 4; i++) {
        r.clock.now = T1 + i * 15 * S;
        expect(rates(await poll(r, '15s')), `poll ${i}`).toEqual([15 * (i - 1) + 8]);
      }
    } finally {
      await r.client.close();
      await r.sim.close();
    }
  });
});
