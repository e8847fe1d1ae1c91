import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUCKET_STAT_CATALOG } from '../../src/collectors/bucket-stat-catalog.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { loadFixture } from '../helpers/collect.js';

const AUTH = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };

interface Envelope {
  op: { samples: Record<string, number[]>; samplesCount: number; lastTStamp: number; interval: number; tstampParam?: number };
  hot_keys?: Array<{ name: string; ops: number }>;
  hostname?: string;
}

async function get<T>(sim: Simulator, url: string): Promise<{ status: number; body: T; text: string }> {
  const res = await sim.app.inject({ method: 'GET', url, headers: AUTH });
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, body: body as T, text: res.body };
}

describe('simulator bucket endpoints', () => {
  let sim: Simulator;
  beforeAll(async () => {
    // Every DCP connection type, as the capture the names are compared with has (a cluster with all of them). The
    // capture predates 7.0 GA (March 2021): a 6.6 profile serves its envelope whole (a 7.x one leaves out what its
    // native series cannot fill: 'a 7.x envelope leaves out …' below).
    sim = createSimulator({ version: '6.6.5', buckets: 5, knobs: { dcpConnectionTypes: 'all' } });
    await sim.app.ready();
  });
  afterAll(async () => {
    await sim.close();
  });

  it('requires credentials', async () => {
    for (const url of ['/pools/default/buckets', '/pools/default/buckets/travel-sample/stats']) {
      const res = await sim.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(401);
    }
  });

  it('lists every bucket of the model with its settings, quota and moving basic stats', async () => {
    const { status, body } = await get<Array<Record<string, unknown>>>(sim, '/pools/default/buckets');
    expect(status).toBe(200);
    expect(body.map((b) => b.name)).toEqual(sim.ctx.buckets.map((b) => b.name));
    for (const [i, b] of body.entries()) {
      const m = sim.ctx.buckets[i];
      expect(b.bucketType).toBe(m?.bucketType);
      expect(b.replicaNumber).toBe(m?.replicaNumber);
      expect((b.quota as { rawRAM: number }).rawRAM).toBe(m?.ramQuotaBytes);
      expect('flush' in (b.controllers as object)).toBe(m?.flushEnabled);
      const bs = b.basicStats as Record<string, number>;
      expect(bs.quotaPercentUsed).toBeGreaterThan(0);
      expect(bs.quotaPercentUsed).toBeLessThan(100);
      expect(bs.itemCount).toBeGreaterThan(0);
      expect((b.nodes as unknown[]).length).toBe(3);
    }
  });

  it('answers one bucket by name (URL-encoded), 404 for an unknown one', async () => {
    const one = await get<Record<string, unknown>>(sim, '/pools/default/buckets/sessions_%25cache');
    expect(one.status).toBe(200);
    expect(one.body.name).toBe('sessions_%cache');
    const missing = await get(sim, '/pools/default/buckets/nope');
    expect(missing.status).toBe(404);
    const stats = await get(sim, '/pools/default/buckets/nope/stats');
    expect(stats.status).toBe(404);
  });

  it('serves a minute of samples, one per second, with the real envelope\'s stat names', async () => {
    const { body } = await get<Envelope>(sim, '/pools/default/buckets/travel-sample/stats?zoom=minute');
    const ts = body.op.samples.timestamp ?? [];
    expect(ts).toHaveLength(60);
    expect(body.op.interval).toBe(1000);
    expect(body.op.samplesCount).toBe(60);
    expect(body.op.lastTStamp).toBe(ts.at(-1));
    expect(ts.every((t, i) => t % 1000 === 0 && (i === 0 || t - (ts[i - 1] as number) === 1000))).toBe(true);
    expect(ts.at(-1)).toBeLessThanOrEqual(sim.ctx.now());
    const real = Object.keys(loadFixture<Envelope>('bucket-stats/telegraf-2021.json').op.samples).sort();
    expect(Object.keys(body.op.samples).sort()).toEqual(real);
    for (const [k, arr] of Object.entries(body.op.samples)) expect(arr, k).toHaveLength(60);
    expect(body.hot_keys?.length).toBe(10);
  });

  it('keeps only samples newer than haveTStamp', async () => {
    const full = await get<Envelope>(sim, '/pools/default/buckets/travel-sample/stats');
    const ts = full.body.op.samples.timestamp ?? [];
    const have = ts[49] as number;
    const part = await get<Envelope>(sim, `/pools/default/buckets/travel-sample/stats?zoom=minute&haveTStamp=${have}`);
    const pts = part.body.op.samples.timestamp ?? [];
    expect(pts.length).toBeGreaterThanOrEqual(10);
    expect(pts.every((t) => t > have)).toBe(true);
    expect(part.body.op.tstampParam).toBe(have);
    expect(part.body.op.samples.curr_items).toHaveLength(pts.length);
  });

  it('gives the same value for the same second (deterministic) and values that move over time', async () => {
    const a = await get<Envelope>(sim, '/pools/default/buckets/beer-sample/stats');
    const b = await get<Envelope>(sim, '/pools/default/buckets/beer-sample/stats');
    const ta = a.body.op.samples.timestamp ?? [];
    const tb = b.body.op.samples.timestamp ?? [];
    const shared = ta.filter((t) => tb.includes(t));
    expect(shared.length).toBeGreaterThan(0);
    for (const t of shared) {
      expect(a.body.op.samples.ops?.[ta.indexOf(t)]).toBe(b.body.op.samples.ops?.[tb.indexOf(t)]);
    }
    expect(new Set(a.body.op.samples.ops).size).toBeGreaterThan(1);
  });

  it('follows the zoom table of the reference; hot keys only with zoom=minute', async () => {
    const hour = await get<Envelope>(sim, '/pools/default/buckets/travel-sample/stats?zoom=hour');
    expect(hour.body.op.samples.timestamp).toHaveLength(900);
    expect(hour.body.op.interval).toBe(4000);
    expect(hour.body.hot_keys).toBeUndefined();
    const day = await get<Envelope>(sim, '/pools/default/buckets/travel-sample/stats?zoom=day');
    expect(day.body.op.samples.timestamp).toHaveLength(1440);
  });

  it('per-node stats split additive stats over the kv nodes and name the node', async () => {
    const whole = await get<Envelope>(sim, '/pools/default/buckets/travel-sample/stats');
    const t = whole.body.op.lastTStamp;
    let items = 0;
    for (const n of sim.ctx.nodes) {
      const r = await get<Envelope>(sim, `/pools/default/buckets/travel-sample/nodes/${encodeURIComponent(n.hostname)}/stats?haveTStamp=${t - 1}`);
      expect(r.status).toBe(200);
      expect(r.body.hostname).toBe(n.hostname);
      if (r.body.op.lastTStamp !== t) return; // the clock crossed a second between requests: nothing to compare
      items += r.body.op.samples.curr_items?.at(-1) ?? NaN;
      expect(r.body.op.samples.vb_active_resident_items_ratio?.at(-1)).toBe(100);
    }
    expect(items).toBeCloseTo(whole.body.op.samples.curr_items?.at(-1) ?? NaN, -1);
    const unknown = await get(sim, '/pools/default/buckets/travel-sample/nodes/nowhere%3A8091/stats');
    expect(unknown.status).toBe(404);
  });

  it('lists the bucket\'s servers', async () => {
    const { body } = await get<{ servers: Array<{ hostname: string; stats: { uri: string } }> }>(sim, '/pools/default/buckets/orders.eu/nodes');
    expect(body.servers.map((s) => s.hostname)).toEqual(sim.ctx.nodes.map((n) => n.hostname));
    expect(body.servers[0]?.stats.uri).toBe('/pools/default/buckets/orders.eu/nodes/cb1.cbsim.local%3A8091/stats');
  });

  it('forgets a bucket removed from the model', async () => {
    const removed = sim.ctx.buckets.pop();
    try {
      const list = await get<Array<{ name: string }>>(sim, '/pools/default/buckets');
      expect(list.body.map((b) => b.name)).not.toContain(removed?.name);
      expect((await get(sim, `/pools/default/buckets/${encodeURIComponent(removed?.name ?? '')}/stats`)).status).toBe(404);
    } finally {
      if (removed) sim.ctx.buckets.push(removed);
    }
  });
});

describe('simulator stat sets and scale', () => {
  it('the full set adds every catalog name and per-design-document keys', async () => {
    const sim = createSimulator({ version: '6.6.5', buckets: 1, statSet: 'full', knobs: { dcpConnectionTypes: 'all' } });
    try {
      const { body } = await get<Envelope>(sim, '/pools/default/buckets/travel-sample/stats');
      const names = Object.keys(body.op.samples);
      for (const s of BUCKET_STAT_CATALOG) expect(names, s.stat).toContain(s.stat);
      expect(names.some((n) => n.startsWith('views/'))).toBe(true);
    } finally {
      await sim.close();
    }
  });

  it('a 7.x envelope leaves out the names ns_server fills from no native series, by server line', async () => {
    // stat_names_mappings.erl builds the 7.0+ envelope from native series: TAP, the pre-4.0 per-bucket XDCR totals
    // (all but replication_changes_left and replication_docs_rep_queue), spatial views, memcached evictions,
    // odp_report_failed, ep_max_data_size, cpu_idle_ms / cpu_local_ms and the DCP backlog have none on any 7.x line;
    // kv_dcp_producer_count and kv_vb_itm_memory_bytes stop at 7.2; couch_views_data_size, _disk_size and _ops at 8.0.
    const always = ['ep_tap_total_qlen', 'replication_docs_checked', 'replication_bandwidth_usage', 'couch_spatial_ops', 'evictions', 'odp_report_failed', 'ep_max_data_size', 'cpu_idle_ms', 'cpu_local_ms', 'ep_dcp_replica_total_backlog_size', 'ep_dcp_views+indexes_total_backlog_size'];
    const from76 = ['ep_dcp_replica_producer_count', 'ep_dcp_views+indexes_producer_count', 'vb_active_itm_memory', 'vb_replica_itm_memory'];
    const from80 = ['couch_views_data_size', 'couch_views_disk_size', 'couch_views_fragmentation', 'couch_views_ops'];
    const kept = ['replication_changes_left', 'couch_views_actual_disk_size', 'vb_active_num', 'vb_pending_num', 'hibernated_requests', 'mem_total', 'ep_dcp_replica_items_remaining'];
    const cases: Array<[string, readonly string[], readonly string[]]> = [
      ['6.6.5', [], [...always, ...from76, ...from80, 'replication_docs_rep_queue']],
      ['7.2.4', always, [...from76, ...from80, 'replication_docs_rep_queue']],
      ['7.6.8', [...always, ...from76], [...from80, 'replication_docs_rep_queue']],
      // replication_docs_rep_queue: the sum of xdcr_docs_rep_queue_total, which 8.0's goxdcr no longer exports.
      ['8.0.0', [...always, ...from76, ...from80, 'replication_docs_rep_queue'], []],
    ];
    for (const [version, absent, present] of cases) {
      const sim = createSimulator({ version, buckets: 1, statSet: 'full', knobs: { dcpConnectionTypes: 'all' } });
      try {
        const names = Object.keys((await get<Envelope>(sim, '/pools/default/buckets/travel-sample/stats')).body.op.samples);
        for (const n of absent) expect(names, `${version} ${n}`).not.toContain(n);
        for (const n of [...present, ...kept]) expect(names, `${version} ${n}`).toContain(n);
      } finally {
        await sim.close();
      }
    }
  });

  it('scales to 100 buckets with the full stat set', async () => {
    const sim = createSimulator({ version: '6.6.5', buckets: 100, statSet: 'full', knobs: { dcpConnectionTypes: 'all' } });
    try {
      const list = await get<Array<{ name: string }>>(sim, '/pools/default/buckets');
      expect(list.body).toHaveLength(100);
      expect(new Set(list.body.map((b) => b.name)).size).toBe(100);
      const last = list.body.at(-1)?.name ?? '';
      const stats = await get<Envelope>(sim, `/pools/default/buckets/${encodeURIComponent(last)}/stats`);
      expect(stats.status).toBe(200);
      expect(Object.keys(stats.body.op.samples).length).toBeGreaterThan(BUCKET_STAT_CATALOG.length);
    } finally {
      await sim.close();
    }
  });
});

describe('simulator bucket scenarios', () => {
  async function firstBucket(scenario: string) {
    const sim = createSimulator({ scenario, buckets: 3 });
    try {
      const list = await get<Array<{ basicStats: { quotaPercentUsed: number } }>>(sim, '/pools/default/buckets');
      const stats = await get<Envelope>(sim, '/pools/default/buckets/travel-sample/stats');
      const s = stats.body.op.samples;
      return {
        used: list.body[0]?.basicStats.quotaPercentUsed ?? NaN,
        resident: s.vb_active_resident_items_ratio?.at(-1),
        tmpOom: s.ep_tmp_oom_errors?.at(-1),
        miss: s.ep_cache_miss_rate?.at(-1),
      };
    } finally {
      await sim.close();
    }
  }

  it('default: calm', async () => {
    const r = await firstBucket('default');
    expect(r.used).toBeLessThan(50);
    expect(r).toMatchObject({ resident: 100, tmpOom: 0, miss: 0 });
  });
  it('demo: bucket 0 near its quota and partly resident', async () => {
    const r = await firstBucket('demo');
    expect(r.used).toBeGreaterThan(86.5);
    expect(r.used).toBeLessThan(89.5);
    // Residency is computed from the item counts (menelaus_stats computed_stats_lazy_proplist), whole items.
    expect(r.resident).toBeCloseTo(72, 2);
    expect(r).toMatchObject({ tmpOom: 0, miss: 4 });
  });
  it('incident: bucket 0 at 97% with temporary OOM errors', async () => {
    const r = await firstBucket('incident');
    // 97% with a ±1% wave.
    expect(r.used).toBeGreaterThan(95.5);
    expect(r.used).toBeLessThan(98.5);
    expect(r.resident).toBeCloseTo(35, 2);
    expect(r).toMatchObject({ tmpOom: 5, miss: 12 });
  });
  it('incident: bucket 1\'s disk-write queue grows with simulated time', async () => {
    const sim = createSimulator({ scenario: 'incident', buckets: 3, speed: 600 });
    try {
      const q = async () => (await get<Envelope>(sim, '/pools/default/buckets/beer-sample/stats')).body.op.samples.disk_write_queue?.at(-1) ?? 0;
      const before = await q();
      await expect.poll(q, { timeout: 5000, interval: 20 }).toBeGreaterThan(before + 1000);
    } finally {
      await sim.close();
    }
  });
});

describe('simulator 7.x envelope: the per-bucket XDCR totals', () => {
  // ns_server stat_names_mappings.erl, pre_70_stat_to_prom_query("@xdcr-" ++ Bucket, <<"replication_changes_left">>)
  // and (…, <<"replication_docs_rep_queue">>): sum by (name) of xdcr_changes_left_total / xdcr_docs_rep_queue_total
  // with sourceBucketName = Bucket, over every replication and node; a name with no series is left out.
  const knobs = { xdcrStatValues: { changes_left: () => 7, docs_rep_queue: () => 2 } };
  async function samplesOf(version: string): Promise<{ servers: number; names: string[][]; last: (b: number, s: string) => number | undefined }> {
    const sim = createSimulator({ version, buckets: 4, replications: 4, statSet: 'full', knobs });
    try {
      const list = await get<Array<{ name: string }>>(sim, '/pools/default/buckets');
      const nodes = await get<{ servers: unknown[] }>(sim, `/pools/default/buckets/${encodeURIComponent(list.body[0]?.name ?? '')}/nodes`);
      const envs = await Promise.all(list.body.map(async (b) => (await get<Envelope>(sim, `/pools/default/buckets/${encodeURIComponent(b.name)}/stats`)).body.op.samples));
      return { servers: nodes.body.servers.length, names: envs.map((e) => Object.keys(e)), last: (b, s) => envs[b]?.[s]?.at(-1) };
    } finally {
      await sim.close();
    }
  }

  it('7.6: the sums over the bucket\'s replications and nodes; absent for a bucket with no outgoing replication', async () => {
    const { servers, names, last } = await samplesOf('7.6.2');
    // Replications #0 and #1 leave bucket 0, #2 bucket 1, #3 bucket 2; bucket 3 has none.
    expect(last(0, 'replication_changes_left')).toBe(2 * servers * 7);
    expect(last(0, 'replication_docs_rep_queue')).toBe(2 * servers * 2);
    expect(last(1, 'replication_changes_left')).toBe(servers * 7);
    expect(last(2, 'replication_docs_rep_queue')).toBe(servers * 2);
    expect(names[3]).not.toContain('replication_changes_left');
    expect(names[3]).not.toContain('replication_docs_rep_queue');
  });

  it('8.0: replication_changes_left only (no xdcr_docs_rep_queue_total there)', async () => {
    const { servers, names, last } = await samplesOf('8.0.0');
    expect(last(0, 'replication_changes_left')).toBe(2 * servers * 7);
    expect(names[0]).not.toContain('replication_docs_rep_queue');
  });
});
