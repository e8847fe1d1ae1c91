/**
 * The simulator's DCP connection types follow kv_engine: a type has kv_dcp_* series only while the bucket has
 * connections of it (ep_engine.cc doConnAggStats builds its per-type counters from the connections it visits), and
 * a 7.0+ envelope, built by ns_server from the series it gets back, has no ep_dcp_<type>_* key for a type without
 * them. The simulated cluster (cb1: kv, n1ql, index, fts, backup; cb2: kv, fts; cb3: kv, index, n1ql; one replica
 * per bucket; replications from every bucket by default) has replica, xdcr, 2i and fts connections and no views,
 * eventing, analytics or other ones. Expected lists are written by hand from that description.
 */
import { describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator, SimOptions } from '../../src/simulator/index.js';

const AUTH = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };

async function withSim<T>(opts: SimOptions, fn: (sim: Simulator) => Promise<T>): Promise<T> {
  const sim = createSimulator(opts);
  try {
    return await fn(sim);
  } finally {
    await sim.close();
  }
}

/** `bucket:connection_type` of every kv_dcp_connection_count series the range API answers, sorted. */
async function rangeTypes(sim: Simulator): Promise<string[]> {
  const res = await sim.app.inject({
    method: 'POST',
    url: '/pools/default/stats/range',
    headers: { ...AUTH, 'content-type': 'application/json' },
    payload: JSON.stringify([{ metric: [{ label: 'name', value: 'kv_dcp_connection_count' }], step: 10, start: -10 }]),
  });
  expect(res.statusCode).toBe(200);
  const body = JSON.parse(res.body) as Array<{ data: Array<{ metric: Record<string, string> }> }>;
  return [...new Set((body[0]?.data ?? []).map((d) => `${d.metric['bucket']}:${d.metric['connection_type']}`))].sort();
}

/** The envelope's ep_dcp_<type>_count keys of one bucket, sorted, and its samples. */
async function envelope(sim: Simulator, bucket: string): Promise<{ counts: string[]; samples: Record<string, number[]> }> {
  const res = await sim.app.inject({ method: 'GET', url: `/pools/default/buckets/${bucket}/stats?zoom=minute`, headers: AUTH });
  expect(res.statusCode).toBe(200);
  const samples = (JSON.parse(res.body) as { op: { samples: Record<string, number[]> } }).op.samples;
  return { counts: Object.keys(samples).filter((k) => /^ep_dcp_.+_count$/.test(k) && !k.endsWith('_producer_count')).sort(), samples };
}

describe('DCP connection types (7.6.5)', () => {
  it('the range API answers the types with connections only: replication, xdcr, secidx, fts on each bucket', async () => {
    await withSim({ buckets: 3, statSet: 'full' }, async (sim) => {
      expect(await rangeTypes(sim)).toEqual(
        ['beer-sample', 'gamesim-sample', 'travel-sample'].flatMap((b) => [`${b}:fts`, `${b}:replication`, `${b}:secidx`, `${b}:xdcr`]),
      );
    });
  });

  it('the envelope has their keys only, and views+indexes is 2i + fts', async () => {
    await withSim({ buckets: 3, statSet: 'full' }, async (sim) => {
      const { counts, samples } = await envelope(sim, 'travel-sample');
      expect(counts).toEqual(['ep_dcp_2i_count', 'ep_dcp_fts_count', 'ep_dcp_replica_count', 'ep_dcp_views+indexes_count', 'ep_dcp_xdcr_count']);
      for (const k of Object.keys(samples)) expect(k, k).not.toMatch(/^ep_dcp_(views|cbas|eventing|other)_/);
      const sum = samples['ep_dcp_views+indexes_items_remaining'] ?? [];
      const twoI = samples['ep_dcp_2i_items_remaining'] ?? [];
      const fts = samples['ep_dcp_fts_items_remaining'] ?? [];
      expect(sum).toHaveLength(60);
      for (let i = 0; i < sum.length; i++) expect(sum[i]).toBeCloseTo((twoI[i] as number) + (fts[i] as number), 0);
    });
  });

  it('a bucket whose only replication is paused has no xdcr connections (demo: beer-sample)', async () => {
    await withSim({ buckets: 3, scenario: 'demo', statSet: 'full' }, async (sim) => {
      const types = await rangeTypes(sim);
      expect(types.filter((t) => t.startsWith('beer-sample:'))).toEqual(['beer-sample:fts', 'beer-sample:replication', 'beer-sample:secidx']);
      expect(types).toContain('travel-sample:xdcr');
      expect((await envelope(sim, 'beer-sample')).counts).not.toContain('ep_dcp_xdcr_count');
    });
  });

  it('one data node keeps no replicas: no replication connections', async () => {
    await withSim({ buckets: 1, nodes: 1, statSet: 'full' }, async (sim) => {
      expect((await rangeTypes(sim)).some((t) => t.endsWith(':replication'))).toBe(false);
    });
  });

  it("knob dcpConnectionTypes 'all': every type on every bucket, views as mapreduce_view", async () => {
    await withSim({ buckets: 1, statSet: 'full', knobs: { dcpConnectionTypes: 'all' } }, async (sim) => {
      const b = 'travel-sample';
      expect(await rangeTypes(sim)).toEqual([`${b}:cbas`, `${b}:eventing`, `${b}:fts`, `${b}:mapreduce_view`, `${b}:other`, `${b}:replication`, `${b}:secidx`, `${b}:xdcr`]);
      expect((await envelope(sim, b)).counts).toHaveLength(9);
    });
  });

  it('the knob set at runtime (POST /_sim/knobs) changes the series the range API answers at once', async () => {
    await withSim({ buckets: 1, statSet: 'full' }, async (sim) => {
      const b = 'travel-sample';
      expect(await rangeTypes(sim)).toEqual([`${b}:fts`, `${b}:replication`, `${b}:secidx`, `${b}:xdcr`]);
      const res = await sim.app.inject({ method: 'POST', url: '/_sim/knobs', headers: { ...AUTH, 'content-type': 'application/json' }, payload: JSON.stringify({ dcpConnectionTypes: ['replica'] }) });
      expect(res.statusCode).toBe(200);
      expect(await rangeTypes(sim)).toEqual([`${b}:replication`]);
    });
  });

  it('before 7.0 the envelope (ns_server\'s own collector) keeps every type', async () => {
    await withSim({ buckets: 1, statSet: 'full', version: '6.6.5' }, async (sim) => {
      expect((await envelope(sim, 'travel-sample')).counts).toEqual([
        'ep_dcp_2i_count',
        'ep_dcp_cbas_count',
        'ep_dcp_eventing_count',
        'ep_dcp_fts_count',
        'ep_dcp_other_count',
        'ep_dcp_replica_count',
        'ep_dcp_views+indexes_count',
        'ep_dcp_views_count',
        'ep_dcp_xdcr_count',
      ]);
    });
  });
});
