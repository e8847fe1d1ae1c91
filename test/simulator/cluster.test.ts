/** The simulator's cluster-health modules: node scenarios over time, auto-failover, rebalance, collections, backup. */
import { afterEach, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { SimOptions, Simulator } from '../../src/simulator/index.js';

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
  return { status: res.statusCode, body: (res.body ? JSON.parse(res.body) : undefined) as T };
}

interface Pools {
  nodes: Array<{ hostname: string; status: string; clusterMembership: string; systemStats?: unknown; serverGroup: string }>;
  balanced: boolean;
  rebalanceStatus: string;
  counters: Record<string, number>;
  memoryQuota: number;
}

const byHost = (p: Pools): Record<string, [string, string]> => Object.fromEntries(p.nodes.map((n) => [n.hostname, [n.status, n.clusterMembership]]));

describe('cluster module', () => {
  it('default: three healthy active nodes in three server groups, balanced, counters of past rebalances', async () => {
    const { sim } = simAt({});
    const p = (await get<Pools>(sim, '/pools/default')).body;
    expect(Object.values(byHost(p))).toEqual([
      ['healthy', 'active'],
      ['healthy', 'active'],
      ['healthy', 'active'],
    ]);
    expect(p.balanced).toBe(true);
    expect(p.rebalanceStatus).toBe('none');
    expect(p.counters).toEqual({ rebalance_start: 2, rebalance_success: 2 });
    expect(p.memoryQuota).toBe(4096);
    const g = (await get<{ groups: Array<{ name: string; nodes: unknown[] }> }>(sim, '/pools/default/serverGroups')).body;
    expect(g.groups.map((x) => [x.name, x.nodes.length])).toEqual([
      ['Group 1', 1],
      ['Group 2', 1],
      ['Group 3', 1],
    ]);
  });

  it('demo: the second node goes unhealthy, warms up and comes back; the last node stays failed over; the cluster is unbalanced', async () => {
    const { sim, at } = simAt({ scenario: 'demo' });
    const cb2 = 'cb2.cbsim.local:8091';
    const cb3 = 'cb3.cbsim.local:8091';
    at(10);
    let p = (await get<Pools>(sim, '/pools/default')).body;
    expect(byHost(p)[cb2]).toEqual(['healthy', 'active']);
    expect(byHost(p)[cb3]).toEqual(['healthy', 'inactiveFailed']);
    expect(p.balanced).toBe(false);
    expect(p.counters.failover_node).toBe(1);
    // The flap the demo announces shows within its first minute.
    at(50);
    p = (await get<Pools>(sim, '/pools/default')).body;
    expect(byHost(p)[cb2]).toEqual(['unhealthy', 'active']);
    expect(p.nodes.find((n) => n.hostname === cb2)?.systemStats).toBeUndefined();
    at(150);
    expect(byHost((await get<Pools>(sim, '/pools/default')).body)[cb2]).toEqual(['warmup', 'active']);
    at(200);
    expect(byHost((await get<Pools>(sim, '/pools/default')).body)[cb2]).toEqual(['healthy', 'active']);
    at(650);
    expect(byHost((await get<Pools>(sim, '/pools/default')).body)[cb2]).toEqual(['unhealthy', 'active']);
    const ns = (await get<{ nodesExt: Array<{ alternateAddresses?: { external: { hostname: string } } }> }>(sim, '/pools/default/nodeServices')).body;
    expect(ns.nodesExt.every((n) => n.alternateAddresses?.external.hostname.endsWith('.external.cbsim.example'))).toBe(true);
  });

  it('incident: nodes fail over one by one as the auto-failover count grows to maxCount, never the node answering', async () => {
    const { sim, at } = simAt({ scenario: 'incident' });
    const failed = async (): Promise<string[]> =>
      (await get<Pools>(sim, '/pools/default')).body.nodes.filter((n) => n.clusterMembership === 'inactiveFailed').map((n) => `${n.hostname} ${n.status}`);
    at(0);
    expect(await failed()).toEqual([]);
    at(130);
    expect(await failed()).toEqual(['cb3.cbsim.local:8091 unhealthy']);
    at(250);
    expect(await failed()).toEqual(['cb2.cbsim.local:8091 unhealthy', 'cb3.cbsim.local:8091 unhealthy']);
    at(100_000);
    expect(await failed()).toHaveLength(2);
    const p = (await get<Pools>(sim, '/pools/default')).body;
    expect(p.counters.rebalance_fail).toBe(1);
    expect(p.counters.failover_node).toBe(2);
  });

  it('knob unhealthyNodes marks nodes unhealthy in any scenario, and a test may set the model directly', async () => {
    const { sim } = simAt({ knobs: { unhealthyNodes: 1 } });
    expect(byHost((await get<Pools>(sim, '/pools/default')).body)['cb2.cbsim.local:8091']).toEqual(['unhealthy', 'active']);
    (sim.ctx.nodes[2] as { status: string }).status = 'warmup';
    expect(byHost((await get<Pools>(sim, '/pools/default')).body)['cb3.cbsim.local:8091']).toEqual(['warmup', 'active']);
  });
});

describe('autofailover module', () => {
  interface Afo {
    enabled: boolean;
    count: number;
    maxCount: number;
    failoverServerGroup: boolean;
  }
  it('default: enabled, count 0 of 1; demo: 1 of 3', async () => {
    const a = (await get<Afo>(simAt({}).sim, '/settings/autoFailover')).body;
    expect([a.enabled, a.count, a.maxCount, a.failoverServerGroup]).toEqual([true, 0, 1, false]);
    const d = (await get<Afo>(simAt({ scenario: 'demo' }).sim, '/settings/autoFailover')).body;
    expect([d.count, d.maxCount, d.failoverServerGroup]).toEqual([1, 3, true]);
  });

  it('incident: the count climbs every 120 s to maxCount 2 and stays until resetCount', async () => {
    const { sim, at } = simAt({ scenario: 'incident' });
    const count = async (): Promise<number> => (await get<Afo>(sim, '/settings/autoFailover')).body.count;
    at(119);
    expect(await count()).toBe(0);
    at(120);
    expect(await count()).toBe(1);
    at(240);
    expect(await count()).toBe(2);
    at(3600);
    expect(await count()).toBe(2);
    const res = await sim.app.inject({ method: 'POST', url: '/settings/autoFailover/resetCount', headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(await count()).toBe(0);
    // A reset does not bring failed-over nodes back.
    expect((await get<Pools>(sim, '/pools/default')).body.nodes.filter((n) => n.clusterMembership === 'inactiveFailed')).toHaveLength(2);
  });

  it('honours the knobs autofailoverCount, autofailoverMaxCount and autofailoverEnabled', async () => {
    const a = (await get<Afo>(simAt({ knobs: { autofailoverCount: 3, autofailoverMaxCount: 3, autofailoverEnabled: false } }).sim, '/settings/autoFailover')).body;
    expect([a.enabled, a.count, a.maxCount]).toEqual([false, 3, 3]);
  });
});

describe('rebalance module', () => {
  type Task = { type: string; status: string; progress?: number; errorMessage?: string; perNode?: Record<string, { progress: number }> };
  it('demo: a rebalance runs 10 minutes out of 15 with per-node progress, next to a compaction', async () => {
    const { sim, at } = simAt({ scenario: 'demo' });
    at(60);
    let tasks = (await get<Task[]>(sim, '/pools/default/tasks')).body;
    const r = tasks.find((t) => t.type === 'rebalance');
    expect(r?.status).toBe('running');
    expect(r?.progress).toBeCloseTo(10, 6);
    expect(Object.keys(r?.perNode ?? {})).toEqual(['ns_1@cb1.cbsim.local', 'ns_1@cb2.cbsim.local', 'ns_1@cb3.cbsim.local']);
    expect(tasks.some((t) => t.type === 'bucket_compaction' && t.status === 'running')).toBe(true);
    expect((await get<Pools>(sim, '/pools/default')).body.rebalanceStatus).toBe('running');
    at(700);
    tasks = (await get<Task[]>(sim, '/pools/default/tasks')).body;
    expect(tasks.filter((t) => t.type === 'rebalance').map((t) => t.status)).toEqual(['notRunning']);
  });

  it('incident: the last rebalance failed (errorMessage); default: notRunning, no error', async () => {
    const inc = (await get<Task[]>(simAt({ scenario: 'incident' }).sim, '/pools/default/tasks')).body;
    expect(inc.filter((t) => t.type === 'rebalance')).toHaveLength(1);
    expect(inc[0]?.errorMessage).toMatch(/Rebalance failed/);
    const def = (await get<Task[]>(simAt({}).sim, '/pools/default/tasks')).body;
    expect(def.filter((t) => t.type === 'rebalance').map((t) => [t.status, t.errorMessage])).toEqual([['notRunning', undefined]]);
  });
});

describe('collections and backup modules', () => {
  it('answers scopes per bucket and 404 for an unknown bucket', async () => {
    const { sim } = simAt({});
    const ok = await get<{ uid: string; scopes: Array<{ name: string }> }>(sim, `/pools/default/buckets/${encodeURIComponent('travel-sample')}/scopes`);
    expect(ok.status).toBe(200);
    expect(ok.body.scopes.map((s) => s.name).slice(0, 2)).toEqual(['_default', '_system']);
    expect(Number.parseInt(ok.body.uid, 16)).toBeGreaterThan(0);
    expect((await sim.app.inject({ method: 'GET', url: '/pools/default/buckets/nope/scopes', headers: AUTH })).statusCode).toBe(404);
  });

  it('serves active and archived repositories, task history with a limit, behind auth, and no archive route', async () => {
    const { sim } = simAt({});
    expect((await get<Array<{ id: string }>>(sim, '/api/v1/cluster/self/repository/active')).body.map((r) => r.id)).toEqual(['hourlyBackups']);
    expect((await get<Array<{ id: string }>>(sim, '/api/v1/cluster/self/repository/archived')).body.map((r) => r.id)).toEqual(['oldRepo2023']);
    expect((await get<unknown[]>(sim, '/api/v1/cluster/self/repository/active/hourlyBackups/taskHistory?limit=3')).body).toHaveLength(3);
    expect((await get(sim, '/api/v1/cluster/self/repository/active/nope/taskHistory')).status).toBe(404);
    expect((await sim.app.inject({ method: 'GET', url: '/api/v1/cluster/self/repository/active' })).statusCode).toBe(401);
    const archive = await sim.app.inject({ method: 'POST', url: '/api/v1/cluster/self/repository/active/hourlyBackups/archive', headers: AUTH, payload: { id: 'x' } });
    expect(archive.statusCode).toBe(404);
    const self = (await get<{ active: Record<string, unknown>; archived: Record<string, unknown> }>(sim, '/api/v1/cluster/self')).body;
    expect(Object.keys(self.active)).toEqual(['hourlyBackups']);
  });

  it('incident: the active repository is unhealthy and its last two backups failed', async () => {
    const { sim } = simAt({ scenario: 'incident' });
    const repo = (await get<Array<{ health: { healthy: boolean } }>>(sim, '/api/v1/cluster/self/repository/active')).body[0];
    expect(repo?.health.healthy).toBe(false);
    const h = (await get<Array<{ status: string }>>(sim, '/api/v1/cluster/self/repository/active/hourlyBackups/taskHistory')).body;
    expect(h.slice(0, 3).map((t) => t.status)).toEqual(['failed', 'failed', 'done']);
  });
});
