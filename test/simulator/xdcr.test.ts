/** The simulator's XDCR module: references, tasks entries, per-node stat envelopes and the scenarios over a set clock. */
import { afterEach, describe, expect, it } from 'vitest';
import { remoteClusterSchema, xdcrStatEnvelopeSchema } from '../../src/couchbase/xdcr.js';
import { tasksSchema } from '../../src/couchbase/tasks.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { SimOptions, Simulator } from '../../src/simulator/index.js';
import { SIM_XDCR_STATS, xdcrSimReplications } from '../../src/simulator/modules/xdcr.js';
import { XDCR_STATS } from '../../src/couchbase/xdcr.js';

const AUTH = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };

let sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

/** A simulator whose clock the test sets: `at(seconds)` puts simulated time that far after the start. */
function simAt(opts: SimOptions): { sim: Simulator; at: (s: number) => void } {
  const sim = createSimulator(opts);
  sims.push(sim);
  let t = sim.ctx.startedAt;
  (sim.ctx as { now: () => number }).now = () => t;
  return { sim, at: (s) => void (t = sim.ctx.startedAt + s * 1000) };
}

async function get<T>(sim: Simulator, url: string): Promise<{ status: number; body: T }> {
  const res = await sim.app.inject({ method: 'GET', url, headers: AUTH });
  return { status: res.statusCode, body: (res.body && res.statusCode < 300 ? JSON.parse(res.body) : res.body) as T };
}

function statUrl(id: string, source: string, stat: string, query = ''): string {
  return `/pools/default/buckets/${encodeURIComponent(source)}/stats/${encodeURIComponent(`replications/${id}/${stat}`)}${query}`;
}

interface Envelope {
  lastTStamp: number;
  timestamp: number[];
  nodeStats: Record<string, number[]>;
}

async function xdcrTasks(sim: Simulator) {
  const tasks = tasksSchema.parse((await get<unknown>(sim, '/pools/default/tasks')).body);
  return tasks.filter((t) => t.type === 'xdcr');
}

/** Sum over nodes of the latest changes_left sample. */
async function backlog(sim: Simulator, id: string, source: string): Promise<number> {
  const env = (await get<Envelope>(sim, statUrl(id, source, 'changes_left'))).body;
  return Object.values(env.nodeStats).reduce((a, arr) => a + (arr.at(-1) ?? 0), 0);
}

/** Simulated seconds since start of the newest sample at simulated second s (samples sit on whole seconds). */
function sampleSec(sim: Simulator, s: number): number {
  const t = sim.ctx.startedAt + s * 1000;
  return (t - (t % 1000) - sim.ctx.startedAt) / 1000;
}

describe('xdcr module', () => {
  it('serves the 20 stat names the collector asks for', () => {
    expect([...SIM_XDCR_STATS]).toEqual(XDCR_STATS.map((s) => s.stat));
  });

  it('default: two live references, four running replications without errors, two from one bucket to the same bucket name', async () => {
    const { sim } = simAt({});
    const refs = (await get<unknown[]>(sim, '/pools/default/remoteClusters')).body.map((r) => remoteClusterSchema.parse(r));
    expect(refs.map((r) => [r.name, r.deleted, r.connectivityStatus])).toEqual([
      ['dr-east', false, 'RC_OK'],
      ['analytics-west', false, 'RC_OK'],
    ]);
    const tasks = await xdcrTasks(sim);
    expect(tasks).toHaveLength(4);
    expect(tasks.every((t) => t.status === 'running' && t.pauseRequested === false && t.errors?.length === 0)).toBe(true);
    const [a, b] = tasks;
    expect(a?.source).toBe('travel-sample');
    expect(b?.source).toBe('travel-sample');
    expect(a?.id?.split('/')[2]).toBe(b?.id?.split('/')[2]);
    expect(a?.id?.split('/')[0]).toBe(refs[0]?.uuid);
    expect(b?.id?.split('/')[0]).toBe(refs[1]?.uuid);
    // A calm backlog: every replication under 300 in total.
    for (const t of tasks) expect(await backlog(sim, t.id as string, t.source as string)).toBeLessThan(300);
  });

  it('answers a stat with one sample array per data node, 60 samples a second apart, and haveTStamp', async () => {
    const { sim, at } = simAt({ scenario: 'demo' });
    at(120);
    const [rep] = xdcrSimReplications(sim.ctx);
    if (!rep) throw new Error('no replication');
    const env = xdcrStatEnvelopeSchema.parse((await get<unknown>(sim, statUrl(rep.id, rep.source, 'changes_left'))).body) as unknown as Envelope;
    // At 120 s of the demo the second node is down and the last one failed over: ns_server gathers the stat from
    // the bucket's live servers only (menelaus_stats, live_bucket_nodes), so nodeStats holds the first node alone.
    const kv = ['cb1.cbsim.local:8091'];
    expect(Object.keys(env.nodeStats)).toEqual(kv);
    expect(env.timestamp).toHaveLength(60);
    expect(env.timestamp[1]! - env.timestamp[0]!).toBe(1000);
    expect(env.lastTStamp).toBe(sim.ctx.startedAt - (sim.ctx.startedAt % 1000) + 120_000);
    for (const n of kv) expect(env.nodeStats[n]?.at(-1)).toBe(rep.changesLeft(n, env.lastTStamp));
    const newer = (await get<Envelope>(sim, statUrl(rep.id, rep.source, 'changes_left', `?zoom=minute&haveTStamp=${env.lastTStamp - 3000}`))).body;
    expect(newer.timestamp).toEqual(env.timestamp.slice(-3));
    const none = (await get<Envelope>(sim, statUrl(rep.id, rep.source, 'changes_left', `?haveTStamp=${env.lastTStamp}`))).body;
    expect(none.timestamp).toEqual([]);
    expect(Object.values(none.nodeStats).every((a) => a.length === 0)).toBe(true);
  });

  it('demo: #0 grows steadily, #1 drains to 0, #2 paused and frozen, #3 lists errors; a deleted reference', async () => {
    const { sim, at } = simAt({ scenario: 'demo' });
    const reps = xdcrSimReplications(sim.ctx);
    const [grow, drain, paused, erroring] = reps as [(typeof reps)[0], (typeof reps)[0], (typeof reps)[0], (typeof reps)[0]];
    const seen: number[][] = [];
    // Times when no node is down (the demo's second node is down from 20 s to 140 s of every 10 minutes).
    for (const s of [0, 160, 300, 600]) {
      at(s);
      seen.push([await backlog(sim, grow.id, grow.source), await backlog(sim, drain.id, drain.source), await backlog(sim, paused.id, paused.source)]);
    }
    const near = (a: number, b: number) => Math.abs(a - b) <= 3; // per-node rounding
    expect(seen.map((x) => x[0]).every((v, i, all) => i === 0 || v! > all[i - 1]!)).toBe(true);
    expect(near(seen[3]![0]!, 5000 + 10 * sampleSec(sim, 600))).toBe(true);
    expect(seen.map((x) => x[1])).toEqual([expect.any(Number), expect.any(Number), expect.any(Number), 0]);
    expect(near(seen[1]![1]!, 50_000 - 100 * sampleSec(sim, 160))).toBe(true);
    expect(seen.every((x) => near(x[2]!, 3500))).toBe(true);
    const tasks = await xdcrTasks(sim);
    const byId = new Map(tasks.map((t) => [t.id, t]));
    expect(byId.get(paused.id)?.status).toBe('paused');
    expect(byId.get(paused.id)?.pauseRequested).toBe(true);
    expect(byId.get(erroring.id)?.errors).toHaveLength(2);
    // The task entry's changesLeft is the sum of the per-node values at the same time.
    expect(near(byId.get(grow.id)?.changesLeft ?? -1, 5000 + 10 * 600)).toBe(true);
    const pausedRate = (await get<Envelope>(sim, statUrl(paused.id, paused.source, 'rate_replicated'))).body;
    expect(Object.values(pausedRate.nodeStats).flat().every((v) => v === 0)).toBe(true);
    const latency = (await get<Envelope>(sim, statUrl(erroring.id, erroring.source, 'wtavg_docs_latency'))).body;
    // The two remaining servers (the demo's last node was failed over).
    expect(Object.values(latency.nodeStats).map((a) => a.at(-1)! >= 237)).toEqual([true, true]);
    const refs = (await get<Array<{ name: string; deleted: boolean }>>(sim, '/pools/default/remoteClusters')).body;
    expect(refs.filter((r) => r.deleted).map((r) => r.name)).toEqual(['old-dc']);
  });

  it('incident: the growing backlog starts above 20 000 and grows by 50 per simulated second', async () => {
    const { sim, at } = simAt({ scenario: 'incident' });
    const [grow] = xdcrSimReplications(sim.ctx);
    if (!grow) throw new Error('no replication');
    at(0);
    const b0 = await backlog(sim, grow.id, grow.source);
    at(1800);
    const b30 = await backlog(sim, grow.id, grow.source);
    expect(Math.abs(b0 - 20_000)).toBeLessThanOrEqual(3);
    expect(Math.abs(b30 - 20_000 - 50 * sampleSec(sim, 1800))).toBeLessThanOrEqual(3);
  });

  it('the knob xdcrGrowthPerSec sets the growth', async () => {
    const { sim, at } = simAt({ scenario: 'demo', knobs: { xdcrGrowthPerSec: 1000 } });
    const [grow] = xdcrSimReplications(sim.ctx);
    if (!grow) throw new Error('no replication');
    at(200); // no node down then
    expect(Math.abs((await backlog(sim, grow.id, grow.source)) - 5000 - 1000 * sampleSec(sim, 200))).toBeLessThanOrEqual(3);
  });

  it('scales to 200 replications with distinct ids over every bucket', async () => {
    const { sim } = simAt({ replications: 200, buckets: 5 });
    const tasks = await xdcrTasks(sim);
    expect(tasks).toHaveLength(200);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(200);
    expect(new Set(tasks.map((t) => t.source))).toEqual(new Set(sim.ctx.buckets.map((b) => b.name)));
    const odd = tasks.find((t) => t.source === 'sessions_%cache');
    expect(odd).toBeDefined();
    const res = await get<Envelope>(sim, statUrl(odd?.id as string, 'sessions_%cache', 'docs_written'));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.nodeStats)).toHaveLength(3);
    // Every replication's endpoint answers, however long (fastify caps named parameters at 100 characters).
    for (const t of tasks) expect((await get(sim, statUrl(t.id as string, t.source as string, 'changes_left'))).status, t.id).toBe(200);
  });

  it('404 for an unknown stat, replication, a mismatched or deleted source bucket; settings per replication', async () => {
    const { sim } = simAt({ scenario: 'demo' });
    const [rep, other] = xdcrSimReplications(sim.ctx);
    if (!rep || !other) throw new Error('no replication');
    expect((await get(sim, statUrl(rep.id, rep.source, 'no_such_stat'))).status).toBe(404);
    // The endpoint must be ONE encoded segment: raw slashes are not the replication stats endpoint.
    expect((await get(sim, `/pools/default/buckets/${rep.source}/stats/replications/${rep.id}/changes_left`)).status).toBe(404);
    expect((await get(sim, statUrl(rep.id, rep.source, 'changes_left'))).status).toBe(200);
    expect((await get(sim, statUrl(`${rep.id}x`, rep.source, 'changes_left'))).status).toBe(404);
    expect((await get(sim, `/pools/default/buckets/beer-sample/stats/${encodeURIComponent(`replications/${rep.id}/changes_left`)}`)).status).toBe(404);
    const settings = await get<{ pauseRequested: boolean; checkpointInterval: number }>(sim, `/settings/replications/${encodeURIComponent(sim.ctx.options.replications > 2 ? (xdcrSimReplications(sim.ctx)[2]?.id as string) : rep.id)}`);
    expect(settings.status).toBe(200);
    expect(settings.body.pauseRequested).toBe(true);
    expect(settings.body.checkpointInterval).toBe(600);
    expect((await get(sim, `/settings/replications/${encodeURIComponent('nope/a/b')}`)).status).toBe(404);
    // The source bucket goes away while the tasks list still names the replication.
    sim.ctx.buckets.splice(
      sim.ctx.buckets.findIndex((b) => b.name === rep.source),
      1,
    );
    expect((await get(sim, statUrl(rep.id, rep.source, 'changes_left'))).status).toBe(404);
    expect((await xdcrTasks(sim)).some((t) => t.id === rep.id)).toBe(true);
  });

  it('requires credentials', async () => {
    const { sim } = simAt({});
    const res = await sim.app.inject({ method: 'GET', url: '/pools/default/remoteClusters' });
    expect(res.statusCode).toBe(401);
  });
});
