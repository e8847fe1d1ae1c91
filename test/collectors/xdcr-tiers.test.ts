/**
 * The two stat tiers of the xdcr collector (issue 12, item 5): how many stat requests each poll makes, that a
 * slow-tier rate is exact over its own period, what a slow-tier stat shows between its polls, and that the stats
 * the alerts and dashboards read are on the fast tier by default. Expected values are worked out by hand from the
 * stat curves set through the simulator's `xdcrStatValues` knob and from the stat table's order (reference doc).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { STAT_FAMILIES, xdcrCollector } from '../../src/collectors/xdcr.js';
import { mostStatsPerPoll, planTiers, statsDue } from '../../src/stats/envelope-xdcr.js';
import { collectorSchemas } from '../../src/config/schema.js';
import { XDCR_STATS } from '../../src/couchbase/xdcr.js';
import type { CollectorOptions } from '../../src/config/schema.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { collect, fakeClient } from '../helpers/collect.js';
import type { CollectResult } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

/** 2023-11-14 00:00:00 UTC: a whole day, so every zoom's sample grid starts here. */
const T1 = 1_699_920_000_000;
const S = 1000;
const ROOT = join(import.meta.dirname, '..', '..');
const STAT_ROUTE = '/pools/default/buckets/{bucket}/stats/{destination_endpoint}';

interface Rig {
  sim: Simulator;
  client: CouchbaseClient;
  clock: { now: number };
  state: Map<string, unknown>;
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.client.close();
  await rig?.sim.close();
  rig = undefined;
});

async function start(replications: number, knobs: Record<string, unknown> = {}): Promise<Rig> {
  const clock = { now: T1 };
  const sim = createSimulator({ buckets: replications, replications, clock: () => clock.now, knobs });
  const client = createClient({ cluster: 't', url: await sim.listen(), username: 'Administrator', password: 'password' });
  rig = { sim, client, clock, state: new Map() };
  return rig;
}

/** Options as the configuration file writes them (collect() parses them with the configuration schema). */
function opts(o: Record<string, unknown>): Partial<CollectorOptions<'xdcr'>> {
  return o as unknown as Partial<CollectorOptions<'xdcr'>>;
}

async function pollAt(r: Rig, seconds: number, o: Record<string, unknown> = { interval: '30s' }): Promise<CollectResult> {
  r.clock.now = T1 + seconds * S;
  const res = await collect(xdcrCollector, r.client, { state: r.state, now: () => r.clock.now, options: opts(o) });
  expect(res.ok, String(res.error)).toBe(true);
  return res;
}

/** The fast tier before bandwidth_usage joined the defaults: 17 slow stats, two of them rates. */
const THREE_FAST = { interval: '30s', fast_stats: ['changes_left', 'docs_rep_queue', 'rate_replicated'] };

const statRequests = (res: CollectResult): number => res.requests.filter((q) => q.endpoint === STAT_ROUTE).length;

describe('request count per poll (10 replications, 30 s interval, hand clock)', () => {
  it('default tiers (4 fast stats, 4 min): 200 stat requests at the first poll, then 60 at every poll t = 30 … 270 s, 6 per replication', async () => {
    const r = await start(10);
    // First poll: all 20 stats of each replication. Then 4 fast stats + the 16 slow ones spread over 8 polls by
    // their order in the stat table: 2 each.
    const got: number[] = [];
    for (let i = 0; i <= 9; i++) {
      const res = await pollAt(r, 30 * i);
      got.push(statRequests(res));
      // The tasks list and the remote cluster list, once per poll.
      expect(res.requests.length - statRequests(res)).toBe(2);
    }
    expect(got).toEqual([200, 60, 60, 60, 60, 60, 60, 60, 60, 60]);
    // Over one slow period after the first poll (8 polls): 10 x (8 x 4 + 16) = 480, where one request per stat and
    // poll made 10 x 20 x 8 = 1600.
    expect(got.slice(1, 9).reduce((a, b) => a + b, 0)).toBe(480);
  });

  it('slow_stats_interval 2m: 200 stat requests at t = 0, then 80 at t = 30, 60, 90, 120 s; with 3 fast stats 200, 70, 70, 70, 80', async () => {
    const r = await start(10);
    // First poll 20 per replication; then 16 slow stats over 4 polls: 4 each, + 4 fast.
    const got: number[] = [];
    for (const t of [0, 30, 60, 90, 120]) got.push(statRequests(await pollAt(r, t, { interval: '30s', slow_stats_interval: '2m' })));
    expect(got).toEqual([200, 80, 80, 80, 80]);
    // A fresh state (what a reload that rebuilt the collector starts from): the replications' first poll again,
    // 20 each; then 17 slow stats at phases 1, 2, 3, 0: 4, 4, 4, 5, + 3 fast.
    r.state.clear();
    got.length = 0;
    for (const t of [150, 180, 210, 240, 270]) got.push(statRequests(await pollAt(r, t, { ...THREE_FAST, slow_stats_interval: '2m' })));
    expect(got).toEqual([200, 70, 70, 70, 80]);
  });

  it('a slow tier no longer than the interval turns the tiers off: 20 per replication every poll', async () => {
    const r = await start(10);
    for (const t of [0, 30]) expect(statRequests(await pollAt(r, t, { interval: '30s', slow_stats_interval: '30s' }))).toBe(200);
  });
});

describe("a replication's first poll asks every stat (issue 24, item 1)", () => {
  it('20 stat requests at its first poll, every family present; the tiers from the second; a replication that appears later gets its own first poll', async () => {
    const clock = { now: T1 };
    // Every stat answers two 1-s samples, 4 and 6, the newest at the exporter's clock (only node n1:8091).
    const env = () => ({ timestamp: [clock.now - 1000, clock.now], lastTStamp: clock.now, nodeStats: { 'n1:8091': [4, 6] } });
    const tasks = [{ type: 'xdcr', id: 'u1/a/t', status: 'running' }];
    const client = fakeClient({ '/pools/default/tasks': () => tasks, '/pools/default/remoteClusters': [], [STAT_ROUTE]: env });
    const state = new Map<string, unknown>();
    const poll = async (t: number): Promise<{ res: CollectResult; asked: Map<string, string[]> }> => {
      clock.now = T1 + t * S;
      client.calls.length = 0;
      const res = await collect(xdcrCollector, client, { state, now: () => clock.now, options: opts({ interval: '30s' }) });
      expect(res.ok, String(res.error)).toBe(true);
      // Source bucket → the stats asked for it this poll.
      const asked = new Map<string, string[]>();
      for (const c of client.calls.filter((x) => x.route === STAT_ROUTE)) {
        const b = c.params.bucket ?? '';
        asked.set(b, [...(asked.get(b) ?? []), (c.params.destination_endpoint ?? '').split('/').pop() ?? '']);
      }
      return { res, asked };
    };
    const all20 = ['bandwidth_usage', 'changes_left', 'data_replicated', 'docs_checked', 'docs_failed_cr_source', 'docs_filtered', 'docs_opt_repd', 'docs_received_from_dcp', 'docs_rep_queue', 'docs_processed', 'docs_written', 'meta_latency_wt', 'num_checkpoints', 'num_failedckpts', 'rate_received_from_dcp', 'rate_replicated', 'size_rep_queue', 'time_committing', 'wtavg_docs_latency', 'wtavg_meta_latency'];
    const fast = ['bandwidth_usage', 'changes_left', 'docs_rep_queue', 'rate_replicated'];

    // t=0 (start): all 20, and the panels of the slow tier have their value at once: wtavg_docs_latency is the
    // newest sample, 6 ms = 0.006 s; docs_written the newest count, 6; rate_received_from_dcp (a slow rate) the
    // mean of the samples of its first window (the slow period, 4 min: both samples), (4 + 6) / 2 = 5.
    const p0 = await poll(0);
    expect([...(p0.asked.get('a') ?? [])].sort()).toEqual([...all20].sort());
    expect(p0.res.set.get('couchbase_xdcr_wtavg_docs_latency_seconds', { source_bucket: 'a', target_cluster_uuid: 'u1', target_cluster_name: '', target_bucket: 't', node: 'n1:8091' })).toBe(0.006);
    expect(p0.res.set.all('couchbase_xdcr_docs_written_total').map((x) => x.value)).toEqual([6]);
    expect(p0.res.set.all('couchbase_xdcr_rate_received_from_dcp_per_second').map((x) => x.value)).toEqual([5]);
    // t=30: the four fast stats + the slow phase 1 of the default table (docs_checked, num_checkpoints).
    const p30 = await poll(30);
    expect([...(p30.asked.get('a') ?? [])].sort()).toEqual([...fast, 'docs_checked', 'num_checkpoints'].sort());
    // wtavg_docs_latency was not asked: its first answer is kept (a level), not dropped.
    expect(p30.res.set.all('couchbase_xdcr_wtavg_docs_latency_seconds').map((x) => x.value)).toEqual([0.006]);
    // t=60: replication b appears: its first poll asks all 20, while a is at its slow phase 2.
    tasks.push({ type: 'xdcr', id: 'u1/b/t', status: 'running' });
    const p60 = await poll(60);
    expect([...(p60.asked.get('b') ?? [])].sort()).toEqual([...all20].sort());
    expect([...(p60.asked.get('a') ?? [])].sort()).toEqual([...fast, 'docs_failed_cr_source', 'num_failedckpts'].sort());
  });

  it('an error on a slow stat shows at the first poll', async () => {
    const clock = { now: T1 };
    const client = fakeClient({
      '/pools/default/tasks': [{ type: 'xdcr', id: 'u1/a/t', status: 'running' }],
      '/pools/default/remoteClusters': [],
      // wtavg_meta_latency (slow phase 7 of the default table) answers 500; the others answer one sample.
      [STAT_ROUTE]: (p: Record<string, string>) =>
        (p.destination_endpoint ?? '').endsWith('/wtavg_meta_latency') ? { status: 500, text: 'boom' } : { timestamp: [clock.now], lastTStamp: clock.now, nodeStats: { 'n1:8091': [1] } },
    });
    const res = await collect(xdcrCollector, client, { state: new Map(), now: () => clock.now, options: opts({ interval: '30s' }) });
    expect(res.ok).toBe(true);
    expect([...res.itemErrors.values()].reduce((a, b) => a + b, 0)).toBe(1);
    expect(res.set.all('couchbase_xdcr_wtavg_meta_latency_seconds')).toEqual([]);
    expect(res.set.all('couchbase_xdcr_wtavg_docs_latency_seconds').map((x) => x.value)).toEqual([0.001]);
  });
});

describe('which stats each poll asks (the stat table order of the REST reference)', () => {
  it('default: the fast four every poll, the slow ones in table order, spread modulo 8', () => {
    const d = collectorSchemas.xdcr.parse({});
    const plan = planTiers(d.fast_stats, 30_000, d.slow_stats_interval);
    const fast = ['bandwidth_usage', 'changes_left', 'docs_rep_queue', 'rate_replicated'];
    const slow = (k: number): string[] => statsDue(plan, k).map((s) => s.stat).filter((s) => !fast.includes(s)).sort();
    expect(plan.every).toBe(8);
    expect(plan.slowZoom.name).toBe('hour');
    // A replication's first poll: all 20.
    expect(statsDue(plan, 0).map((s) => s.stat)).toEqual(XDCR_STATS.map((s) => s.stat));
    expect(slow(8)).toEqual(['data_replicated', 'meta_latency_wt']);
    expect(slow(1)).toEqual(['docs_checked', 'num_checkpoints']);
    expect(slow(2)).toEqual(['docs_failed_cr_source', 'num_failedckpts']);
    expect(slow(3)).toEqual(['docs_filtered', 'rate_received_from_dcp']);
    expect(slow(4)).toEqual(['docs_opt_repd', 'size_rep_queue']);
    expect(slow(5)).toEqual(['docs_received_from_dcp', 'time_committing']);
    expect(slow(6)).toEqual(['docs_processed', 'wtavg_docs_latency']);
    expect(slow(7)).toEqual(['docs_written', 'wtavg_meta_latency']);
    expect(slow(16)).toEqual(slow(8));
    for (let k = 0; k < 8; k++) expect(statsDue(plan, k).map((s) => s.stat)).toEqual(expect.arrayContaining(fast));
  });

  it('three fast stats, 3 min: the slow ones in table order, spread modulo 6', () => {
    const plan = planTiers(['changes_left', 'docs_rep_queue', 'rate_replicated'], 30_000, 180_000);
    const fast = ['changes_left', 'docs_rep_queue', 'rate_replicated'];
    const slow = (k: number): string[] => statsDue(plan, k).map((s) => s.stat).filter((s) => !fast.includes(s)).sort();
    expect(plan.every).toBe(6);
    expect(plan.slowZoom.name).toBe('hour');
    expect(plan.fastZoom.name).toBe('minute');
    expect(slow(0)).toHaveLength(17);
    expect(slow(6)).toEqual(['bandwidth_usage', 'docs_received_from_dcp', 'rate_received_from_dcp']);
    expect(slow(1)).toEqual(['data_replicated', 'docs_processed', 'size_rep_queue']);
    expect(slow(2)).toEqual(['docs_checked', 'docs_written', 'time_committing']);
    expect(slow(3)).toEqual(['docs_failed_cr_source', 'meta_latency_wt', 'wtavg_docs_latency']);
    expect(slow(4)).toEqual(['docs_filtered', 'num_checkpoints', 'wtavg_meta_latency']);
    expect(slow(5)).toEqual(['docs_opt_repd', 'num_failedckpts']);
    expect(slow(12)).toEqual(slow(6));
    for (let k = 0; k < 6; k++) expect(statsDue(plan, k).map((s) => s.stat)).toEqual(expect.arrayContaining(fast));
  });

  it('a slow period that is not a whole number of intervals is rounded up', () => {
    expect(planTiers([], 30_000, 45_000).every).toBe(2);
    expect(planTiers([], 30_000, 30_000).every).toBe(1);
    expect(planTiers([], 30_000, 1_000).fast.size).toBe(20);
    expect(mostStatsPerPoll(planTiers(['changes_left', 'docs_rep_queue', 'rate_replicated'], 30_000, 180_000))).toBe(6);
    expect(mostStatsPerPoll(planTiers(['bandwidth_usage', 'changes_left', 'docs_rep_queue', 'rate_replicated'], 30_000, 240_000))).toBe(6);
    expect(mostStatsPerPoll(planTiers(['changes_left', 'docs_rep_queue', 'rate_replicated'], 30_000, 120_000))).toBe(8);
    expect(mostStatsPerPoll(planTiers([], 30_000, 30_000))).toBe(20);
  });
});

describe('slow tier: rates exact over its own period, levels kept between its polls', () => {
  it('bandwidth_usage on a 2 min tier (3 fast stats): 60 s at 600 B/s then 60 s at 1200 B/s export 900; nothing in between', async () => {
    const r = await start(1, {
      xdcrStatValues: {
        bandwidth_usage: (t: number) => (t <= T1 ? 50 : t <= T1 + 60 * S ? 600 : 1200),
        size_rep_queue: (t: number) => (t <= T1 + 30 * S ? 111 : 222),
        changes_left: () => 7,
      },
    });
    const o = { ...THREE_FAST, slow_stats_interval: '2m' };
    const bw = (res: CollectResult): number[] => [...new Set(res.set.all('couchbase_xdcr_bandwidth_usage_bytes_per_second').map((s) => s.value))];
    const queue = (res: CollectResult): number[] => [...new Set(res.set.all('couchbase_xdcr_size_rep_queue_bytes').map((s) => s.value))];
    const slowTs = (res: CollectResult): number[] => res.set.all('couchbase_xdcr_slow_stats_sample_timestamp_seconds').map((s) => s.value);
    const nodes = r.sim.ctx.nodes.filter((n) => n.services.includes('kv') && n.membership === 'active').length;

    // t=0, the replication's first poll, asks every stat: bandwidth_usage (slow phase 0) over its first window,
    // the 2 min before: 30 samples of 50 (4 s apart); size_rep_queue (phase 1) too: its newest 4-s sample, T1, is 111.
    const p0 = await pollAt(r, 0, o);
    expect(bw(p0)).toEqual([50]);
    expect(queue(p0)).toEqual([111]);
    // t=30: size_rep_queue (phase 1) asked: the newest 4-s sample, T1+28 s, is 111. bandwidth_usage is a rate: absent.
    const p30 = await pollAt(r, 30, o);
    expect(bw(p30)).toEqual([]);
    expect(queue(p30)).toEqual([111]);
    expect(p30.set.all('couchbase_xdcr_size_rep_queue_bytes')).toHaveLength(nodes);
    // t=60, 90: size_rep_queue is kept at its last answer (111, sampled at T1+28 s; Couchbase has 222 by now, which
    // the next slow poll brings), and the slow sample time says how old it is. The fast tier moves on.
    for (const t of [60, 90]) {
      const p = await pollAt(r, t, o);
      expect(bw(p), `t=${t}`).toEqual([]);
      expect(queue(p), `t=${t}`).toEqual([111]);
      expect(p.set.all('couchbase_xdcr_changes_left').every((s) => s.value === 7)).toBe(true);
      expect(p.set.all('couchbase_xdcr_last_sample_timestamp_seconds').map((s) => s.value)).toEqual([(T1 + t * S) / 1000]);
      // Oldest kept slow value: docs_filtered, docs_written, wtavg_meta_latency (phase 0, sampled at T1).
      expect(slowTs(p)).toEqual([T1 / 1000]);
      const promtool = missing('promtool') ? undefined : requireBinary('promtool');
      if (promtool !== undefined) expect(execFileSync(promtool, ['check', 'metrics'], { input: p.text, encoding: 'utf8' })).toBe('');
    }
    // t=120: bandwidth_usage again, over exactly the 2 min since t=0: 15 samples of 600 (T1+4 … T1+60 s) and 15 of
    // 1200 (T1+64 … T1+120 s): 900. A 30 s window would say 1200, a 60-sample minute zoom 1200 as well.
    const p120 = await pollAt(r, 120, o);
    expect(bw(p120)).toEqual([900]);
    expect(p120.set.all('couchbase_xdcr_bandwidth_usage_bytes_per_second')).toHaveLength(nodes);
    expect(queue(p120)).toEqual([111]);
    // t=150: size_rep_queue asked again: 222.
    expect(queue(await pollAt(r, 150, o))).toEqual([222]);
  });

  it('asks the slow tier with the zoom of its period and haveTStamp from its own previous answer', async () => {
    const clock = { now: T1 };
    // Every answer: two samples, the newest at the exporter's clock.
    const env = () => ({ timestamp: [clock.now - 4000, clock.now], lastTStamp: clock.now, nodeStats: { 'n1:8091': [1, 1] } });
    const client = fakeClient({ '/pools/default/tasks': [{ type: 'xdcr', id: 'u1/b/t', status: 'running' }], '/pools/default/remoteClusters': [], [STAT_ROUTE]: env });
    const state = new Map<string, unknown>();
    const o = opts({ ...THREE_FAST, slow_stats_interval: '2m' });
    const calls = (): Array<{ stat: string; zoom: unknown; have: unknown }> =>
      client.calls.filter((c) => c.route === STAT_ROUTE).map((c) => ({ stat: (c.params.destination_endpoint ?? '').split('/').pop() ?? '', zoom: c.options.query?.zoom, have: c.options.query?.haveTStamp }));
    for (const t of [0, 30, 60, 90, 120]) {
      clock.now = T1 + t * S;
      client.calls.length = 0;
      const res = await collect(xdcrCollector, client, { state, now: () => clock.now, options: o });
      expect(res.ok).toBe(true);
      const c = calls();
      const bw = c.find((x) => x.stat === 'bandwidth_usage');
      const cl = c.find((x) => x.stat === 'changes_left');
      // changes_left (fast): minute zoom (30 s), haveTStamp from the previous poll's answer less 5 s.
      expect(cl).toEqual({ stat: 'changes_left', zoom: 'minute', have: t === 0 ? undefined : T1 + (t - 30) * S - 5000 });
      if (t === 0) expect(bw).toEqual({ stat: 'bandwidth_usage', zoom: 'hour', have: undefined });
      else if (t === 120) expect(bw).toEqual({ stat: 'bandwidth_usage', zoom: 'hour', have: T1 - 8000 });
      else expect(bw).toBeUndefined();
    }
  });

  it('kept values follow the replication labels of the current poll (a renamed remote reference)', async () => {
    const clock = { now: T1 };
    const env = () => ({ timestamp: [clock.now], lastTStamp: clock.now, nodeStats: { 'n1:8091': [3] } });
    let name = 'dc-old';
    const client = fakeClient({
      '/pools/default/tasks': [{ type: 'xdcr', id: 'u1/b/t', status: 'running' }],
      '/pools/default/remoteClusters': () => [{ name, uuid: 'u1', hostname: 'h:8091', deleted: false }],
      [STAT_ROUTE]: env,
    });
    const state = new Map<string, unknown>();
    const o = opts({ ...THREE_FAST, slow_stats_interval: '2m' });
    const poll = async (t: number): Promise<CollectResult> => {
      clock.now = T1 + t * S;
      return collect(xdcrCollector, client, { state, now: () => clock.now, options: o });
    };
    await poll(0);
    // size_rep_queue: slow phase 1, asked at t=30 under dc-old.
    expect((await poll(30)).set.all('couchbase_xdcr_size_rep_queue_bytes').map((x) => x.labels.target_cluster_name)).toEqual(['dc-old']);
    name = 'dc-new';
    const p60 = await poll(60);
    expect(p60.set.all('couchbase_xdcr_size_rep_queue_bytes').map((x) => [x.labels.target_cluster_name, x.labels.node, x.value])).toEqual([['dc-new', 'n1:8091', 3]]);
    expect(p60.set.all('couchbase_xdcr_slow_stats_sample_timestamp_seconds').map((x) => [x.labels.target_cluster_name, x.value])).toEqual([['dc-new', T1 / 1000]]);
  });

  it('a failed slow ask drops its kept values until its next answer; the other replications keep theirs', async () => {
    const r = await start(2, { xdcrStatValues: { size_rep_queue: () => 5 } });
    const o = { ...THREE_FAST, slow_stats_interval: '2m' };
    await pollAt(r, 0, o);
    const ok = await pollAt(r, 30, o);
    expect(ok.set.all('couchbase_xdcr_size_rep_queue_bytes').length).toBeGreaterThan(0);
    const reps = [...new Set(ok.set.all('couchbase_xdcr_size_rep_queue_bytes').map((s) => s.labels.target_cluster_uuid ?? ''))];
    expect(reps).toHaveLength(2);
    // Next slow poll of size_rep_queue (t=150) fails for the first replication's source bucket only.
    await pollAt(r, 60, o);
    await pollAt(r, 90, o);
    await pollAt(r, 120, o);
    const first = reps[0] as string;
    r.sim.ctx.faults.add({ match: new RegExp(`/stats/replications%2F${first}%2F[^/]*%2Fsize_rep_queue`), kind: 'status', status: 500 });
    const failed = await pollAt(r, 150, o);
    expect([...failed.itemErrors.values()].reduce((a, b) => a + b, 0)).toBe(1);
    const left = (res: CollectResult): string[] => [...new Set(res.set.all('couchbase_xdcr_size_rep_queue_bytes').map((s) => s.labels.target_cluster_uuid ?? ''))];
    expect(left(failed)).toEqual([reps[1]]);
    r.sim.ctx.faults.clear();
    // Between polls it stays absent (nothing known to be true), while the other replication's value is kept.
    expect(left(await pollAt(r, 180, o))).toEqual([reps[1]]);
  });
});

/** The couchbase_xdcr_* stat family names (from STAT_FAMILIES) an expression reads. */
function xdcrStatsIn(text: string): Set<string> {
  const byMetric = new Map([...STAT_FAMILIES].map(([stat, f]) => [f.name, stat]));
  const out = new Set<string>();
  for (const m of text.matchAll(/couchbase_xdcr_[a-z_]+/g)) {
    const stat = byMetric.get(m[0]);
    if (stat !== undefined) out.add(stat);
  }
  return out;
}

describe('the stats alerts and dashboards need are on the fast tier by default', () => {
  const defaults = collectorSchemas.xdcr.parse({});

  it('defaults: 4 min slow tier; fast = the XDCR stats of the alert rules, of the XDCR dashboard first row and every rate a dashboard graphs', () => {
    expect(defaults.slow_stats_interval).toBe(240_000);
    const wanted = new Set<string>();
    // Every alert rule of alerts/rules/.
    const dir = join(ROOT, 'alerts', 'rules');
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.yml'))) {
      const doc = parseYaml(readFileSync(join(dir, f), 'utf8')) as { groups?: Array<{ rules?: Array<{ expr?: string }> }> };
      for (const g of doc.groups ?? []) for (const rule of g.rules ?? []) for (const s of xdcrStatsIn(String(rule.expr ?? ''))) wanted.add(s);
    }
    // The XDCR dashboard's first row (the panels before the second row panel).
    const dash = JSON.parse(readFileSync(join(ROOT, 'dashboards', 'cbwatch-xdcr.json'), 'utf8')) as { panels: Array<{ type: string; targets?: Array<{ expr?: string }> }> };
    expect(dash.panels[0]?.type).toBe('row');
    const firstRow = dash.panels.slice(1, dash.panels.findIndex((p, i) => i > 0 && p.type === 'row'));
    for (const p of firstRow) for (const t of p.targets ?? []) for (const s of xdcrStatsIn(String(t.expr ?? ''))) wanted.add(s);
    // Every XDCR stat the overview dashboard shows, and every XDCR rate any dashboard graphs: a slow-tier rate is
    // absent between its polls (levels and counters keep their last value, so they may stay slow).
    const rates = new Set(XDCR_STATS.filter((s) => s.kind === 'rate').map((s) => s.stat));
    for (const f of readdirSync(join(ROOT, 'dashboards')).filter((x) => x.endsWith('.json'))) {
      const text = readFileSync(join(ROOT, 'dashboards', f), 'utf8');
      for (const s of xdcrStatsIn(text)) if (f === 'cbwatch-overview.json' || rates.has(s)) wanted.add(s);
    }
    // Hand-checked today: the backlog (alerts, first row, overview), the queue (first row), the replication rate
    // (CouchbaseXdcrReplicationStuck, the Throughput row) and the bandwidth (the Throughput row).
    expect([...wanted].sort()).toEqual(['bandwidth_usage', 'changes_left', 'docs_rep_queue', 'rate_replicated']);
    for (const s of wanted) expect(defaults.fast_stats, s).toContain(s);
  });
});
