/**
 * One collector's hanging endpoint never fails a collector that does not request it (DESIGN.md failure
 * model; `npm run chaos` found the opposite: a hang on /settings/security/:service failed seven other
 * collectors, a hang on the XDCR stat route three). The per-cluster request slots are shared by every
 * collector; these tests hold one collector's requests hanging and poll the others next to it, against the
 * simulator, with the exporter's own client. No timing is asserted: the hanging requests are held for longer
 * than the neighbours' poll deadline, so a neighbour either gets slots of its own or fails.
 */
import { describe, expect, it } from 'vitest';
import { runPoll } from '../../src/collectors/context.js';
import type { PollOutcome } from '../../src/collectors/context.js';
import { COLLECTORS } from '../../src/collectors/index.js';
import { createSharedCache } from '../../src/collectors/shared.js';
import type { Collector } from '../../src/collectors/types.js';
import { defaultClusterConfig, resolveCollectorOptions } from '../../src/config/defaults.js';
import type { CollectorName } from '../../src/config/schema.js';
import { collectorSchemas } from '../../src/config/schema.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import type { FaultRule } from '../../src/simulator/index.js';
import { simulatorWithClient } from '../helpers/collect.js';

const t = simulatorWithClient({ nodes: 3, buckets: 3 });

const NEIGHBOURS: CollectorName[] = ['buckets', 'bucket_stats', 'nodes', 'collections', 'certificates'];
/** The neighbours' poll deadline: generous for a loaded machine, shorter than a hanging request is held. */
const NEIGHBOUR_TIMEOUT_MS = 4_000;
/** The faulted collector's deadline: its hanging requests hold their slots until then. */
const FAULTED_TIMEOUT_MS = 9_000;

/** A first poll (no state from an earlier one: the sampled collectors answer every series then). */
function poll(name: CollectorName, client: CouchbaseClient, shared: ReturnType<typeof createSharedCache>, timeoutMs: number): Promise<PollOutcome> {
  const collector = COLLECTORS[name] as Collector;
  const options = { ...resolveCollectorOptions(name, collectorSchemas[name].parse({}) as never), timeout: timeoutMs };
  // Faults on the envelope routes: the envelopes, not the range API the 7.6 simulator also offers (stats_source).
  const cluster = defaultClusterConfig({ url: client.baseUrl, statsSource: 'envelope' });
  return runPoll({ collector, cluster, options: options as never, client, shared });
}

/** Series identities (family + labels) of a poll: what "lost series" compares. */
function seriesKeys(o: PollOutcome): string[] {
  const keys: string[] = [];
  for (const { def, samples } of o.set.families()) for (const s of samples) keys.push(`${def.name}${JSON.stringify(Object.entries(s.labels).sort())}`);
  return keys.sort();
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never happened: ${what}`);
}

/**
 * Polls the neighbours once healthy (the baseline), then starts `faulted` with `fault` in place, waits until
 * the fault has answered at least once, and polls the neighbours again while the faulted poll is still held.
 */
async function neighboursDuringFault(faulted: CollectorName, fault: FaultRule): Promise<{ baseline: Map<string, PollOutcome>; during: Map<string, PollOutcome>; faultedOutcome: PollOutcome }> {
  // A request timeout longer than every deadline: a hanging request is held until its poll gives up.
  const client = createClient({ cluster: 't', url: t.client.baseUrl, username: 'Administrator', password: 'password', concurrency: 8, requestTimeout: 30_000 });
  try {
    const baseline = new Map<string, PollOutcome>();
    const warm = createSharedCache();
    for (const n of NEIGHBOURS) baseline.set(n, await poll(n, client, warm, 20_000));
    for (const [n, o] of baseline) expect(o.ok, `${n} healthy: ${String(o.error)}`).toBe(true);

    t.sim.ctx.faults.add(fault);
    const rule = t.sim.ctx.faults.rules[0] as FaultRule;
    const shared = createSharedCache();
    const faultedRun = poll(faulted, client, shared, FAULTED_TIMEOUT_MS);
    await until(() => (rule.hits ?? 0) >= 1, `${faulted} requested the faulted route`);
    // Let the faulted collector send what it can before the neighbours ask.
    await until(() => client.load().inFlight >= 4, 'the faulted collector holds several slots');
    const during = new Map<string, PollOutcome>();
    await Promise.all(NEIGHBOURS.map(async (n) => during.set(n, await poll(n, client, shared, NEIGHBOUR_TIMEOUT_MS))));
    const faultedOutcome = await faultedRun;
    return { baseline, during, faultedOutcome };
  } finally {
    t.sim.ctx.faults.clear();
    await client.close();
  }
}

function expectNeighboursWhole(r: { baseline: Map<string, PollOutcome>; during: Map<string, PollOutcome> }): void {
  for (const n of NEIGHBOURS) {
    const o = r.during.get(n) as PollOutcome;
    expect(o.ok, `${n}: ${String(o.error)}`).toBe(true);
    expect(Object.fromEntries(o.itemErrors), n).toEqual({});
    expect(seriesKeys(o), n).toEqual(seriesKeys(r.baseline.get(n) as PollOutcome));
  }
}

function expectFaultedReported(o: PollOutcome): void {
  // The faulted collector shows it: its poll fails, or the items behind the route are counted as failed.
  expect(!o.ok || o.itemErrors.size > 0, `faulted collector: ok=${o.ok} itemErrors=${JSON.stringify(Object.fromEntries(o.itemErrors))}`).toBe(true);
}

describe('a hanging endpoint of one collector leaves the other collectors whole', () => {
  it('hang on /settings/security/:service (security): buckets, bucket_stats, nodes, collections, certificates keep every series', async () => {
    const r = await neighboursDuringFault('security', { match: '/settings/security/:service', kind: 'hang' });
    expectNeighboursWhole(r);
    expectFaultedReported(r.faultedOutcome);
  }, 60_000);

  it('hang on the XDCR stat route (xdcr): buckets, bucket_stats, nodes, collections, certificates keep every series', async () => {
    const r = await neighboursDuringFault('xdcr', { match: '/pools/default/buckets/:bucket/stats/*', kind: 'hang' });
    expectNeighboursWhole(r);
    expectFaultedReported(r.faultedOutcome);
  }, 60_000);
});

describe('a reset on /pools/default (the nodes list, shared through the poll cache)', () => {
  it('fails nodes (its own list) and no collector that does not request it', async () => {
    const others: CollectorName[] = ['buckets', 'bucket_stats', 'collections', 'xdcr', 'certificates'];
    const client = createClient({ cluster: 't', url: t.client.baseUrl, username: 'Administrator', password: 'password', requestTimeout: 30_000 });
    try {
      const warm = createSharedCache();
      const baseline = new Map<string, PollOutcome>();
      for (const n of others) baseline.set(n, await poll(n, client, warm, 20_000));
      t.sim.ctx.faults.add({ match: '/pools/default', kind: 'reset' });
      const shared = createSharedCache();
      // Nothing hangs here (a reset answers at once): a deadline no loaded machine reaches, so a failure is the reset's.
      const [nodes, ...rest] = await Promise.all(['nodes' as CollectorName, ...others].map((n) => poll(n, client, shared, 60_000)));
      expect(nodes?.ok).toBe(false);
      expect((nodes?.error as { code?: string }).code).toBe('CBW_ERR_NETWORK');
      for (const o of rest) {
        expect(o.ok, `${o.collector}: ${String(o.error)}`).toBe(true);
        expect(Object.fromEntries(o.itemErrors), o.collector).toEqual({});
        expect(seriesKeys(o), o.collector).toEqual(seriesKeys(baseline.get(o.collector) as PollOutcome));
      }
    } finally {
      t.sim.ctx.faults.clear();
      await client.close();
    }
  }, 180_000);
});
