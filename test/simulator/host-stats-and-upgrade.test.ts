/**
 * Two cluster shapes the differential test compares the statistics sources on (test/differential), checked here
 * against ns_server's rules with hand-computed expectations:
 * - a non-data node (index + query, a 64 GiB machine): menelaus_stats sums a bucket's host stats (`@system`) over
 *   every active node of any service (section_nodes("@system") → ns_cluster_membership:actual_active_nodes()), the
 *   max for cpu_utilization_rate (get_aggregate_method); the node serves its own sys_* series;
 * - a cluster mid-upgrade across 7.6.8: ns_server computes ep_cache_miss_rate once, on the node serving the
 *   request, with that node's formula (computed_stats_lazy_proplist: ep_bg_fetched / cmd_lookup before 7.6.8,
 *   get_misses / cmd_get from 7.6.8 on).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { NON_DATA_HOST, nonDataNode, setNodeVersions } from '../../src/simulator/profiles.js';

/** On a 10 s boundary: the envelope's newest sample and the nodes' newest scrape are the same instant. */
const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);
const AUTH = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };

interface Envelope {
  op: { samples: Record<string, number[]> };
}
interface RangeAnswer {
  data: Array<{ metric: Record<string, unknown>; values: Array<[number, string]> }>;
  errors: unknown[];
}

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function get<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await (sim as Simulator).app.inject({ method: 'GET', url, headers: AUTH });
  return { status: res.statusCode, body: String(res.headers['content-type'] ?? '').includes('json') ? (res.json() as T) : (res.body as T) };
}

async function range(queries: unknown[]): Promise<RangeAnswer[]> {
  const res = await (sim as Simulator).app.inject({ method: 'POST', url: '/pools/default/stats/range', headers: { ...AUTH, 'content-type': 'application/json' }, payload: JSON.stringify(queries) });
  expect(res.statusCode).toBe(200);
  return res.json() as RangeAnswer[];
}

const last = (e: Envelope, stat: string): number => {
  const v = e.op.samples[stat]?.at(-1);
  if (v === undefined) throw new Error(`no ${stat} in the envelope`);
  return v;
};

describe('a non-data node (index + query) on a machine of its own', () => {
  it('counts in every bucket\'s host stats: summed over every active node, the max for cpu_utilization_rate', async () => {
    sim = createSimulator({ version: '7.6.5', buckets: 1, statSet: 'full', clock: () => T0 });
    sim.ctx.nodes.push(nonDataNode(sim.ctx.nodes));
    const extra = 'cb4.cbsim.local:8091';
    const servers = (await get<{ servers: Array<{ hostname: string }> }>('/pools/default/buckets/travel-sample/nodes')).body.servers.map((s) => s.hostname);
    expect(servers).toEqual(['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091', 'cb3.cbsim.local:8091']);
    const whole = (await get<Envelope>('/pools/default/buckets/travel-sample/stats')).body;
    // Each data node's own reading (its per-node envelope), plus the non-data node's machine.
    const own: Record<string, number[]> = { mem_total: [], mem_free: [], cpu_cores_available: [], cpu_utilization_rate: [] };
    for (const node of servers) {
      const e = (await get<Envelope>(`/pools/default/buckets/travel-sample/nodes/${encodeURIComponent(node)}/stats`)).body;
      for (const stat of Object.keys(own)) own[stat]?.push(last(e, stat));
    }
    const sum = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0);
    for (const stat of ['mem_total', 'mem_free', 'cpu_cores_available']) expect(last(whole, stat), stat).toBeCloseTo(sum(own[stat] ?? []) + (NON_DATA_HOST[stat] as number), 0);
    expect(last(whole, 'mem_total')).toBeGreaterThan(64 * 1024 ** 3);
    expect(last(whole, 'cpu_utilization_rate')).toBe(90);
    expect(Math.max(...(own.cpu_utilization_rate ?? []))).toBeLessThan(90);

    // The range API: the node's own sys_* series, and the nodes' sum equal to the envelope's.
    const [one, all] = await range([
      { metric: [{ label: 'name', value: 'sys_mem_total' }], nodes: [extra], start: T0 / 1000 - 10, end: T0 / 1000 },
      { metric: [{ label: 'name', value: 'sys_mem_total' }], nodesAggregation: 'sum', start: T0 / 1000 - 10, end: T0 / 1000 },
    ]);
    expect(one?.data.map((d) => d.metric.nodes)).toEqual([[extra]]);
    expect(Number(one?.data[0]?.values.at(-1)?.[1])).toBe(64 * 1024 ** 3);
    expect(all?.data[0]?.metric.nodes).toContain(extra);
    expect(Number(all?.data[0]?.values.at(-1)?.[1])).toBeCloseTo(last(whole, 'mem_total'), 0);

    // Its native /metrics: the host's series, no bucket's.
    const text = (await get<string>(`/_node/${extra}/metrics`)).body;
    expect(text).toContain(`sys_mem_total{category="system"} ${64 * 1024 ** 3}`);
    expect(text).toContain('sys_cpu_utilization_rate{category="system"} 90');
    expect(text).not.toMatch(/^kv_curr_items\{/m);
  });
});

describe('a cluster mid-upgrade across 7.6.8', () => {
  /** Background fetches (the default scenario has none), so that both formulas give a number. */
  const knobs = { bucketStatValues: { ep_bg_fetched: (): number => 12 } };

  it('computes ep_cache_miss_rate once, with the formula of the node serving the request', async () => {
    sim = createSimulator({ version: '7.6.8', buckets: 1, statSet: 'full', clock: () => T0, knobs });
    setNodeVersions(sim.ctx.nodes, { 'cb2.cbsim.local:8091': '7.6.2', 'cb3.cbsim.local:8091': '7.6.2' });
    const versions = (await get<{ nodes: Array<{ hostname: string; version: string }> }>('/pools/default')).body.nodes.map((n) => n.version.replace(/-.*/, ''));
    expect(versions.sort()).toEqual(['7.6.2', '7.6.2', '7.6.8']);

    // The serving node (cb1) runs 7.6.8: get_misses / cmd_get over the merged nodes.
    let e = (await get<Envelope>('/pools/default/buckets/travel-sample/stats')).body;
    const newer = (100 * last(e, 'get_misses')) / last(e, 'cmd_get');
    const older = (100 * last(e, 'ep_bg_fetched')) / last(e, 'cmd_lookup');
    expect(Math.abs(newer - older)).toBeGreaterThan(0.1);
    expect(last(e, 'ep_cache_miss_rate')).toBeCloseTo(newer, 2);

    // The same cluster served by a 7.6.2 node: ep_bg_fetched / cmd_lookup.
    setNodeVersions(sim.ctx.nodes, { 'cb1.cbsim.local:8091': '7.6.2', 'cb2.cbsim.local:8091': '7.6.8' });
    e = (await get<Envelope>('/pools/default/buckets/travel-sample/stats')).body;
    expect(last(e, 'ep_cache_miss_rate')).toBeCloseTo((100 * last(e, 'ep_bg_fetched')) / last(e, 'cmd_lookup'), 2);
  });
});
