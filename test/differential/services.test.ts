/**
 * The service collectors `query`, `analytics` and `processes` against the simulator: the same simulated traffic read
 * through the legacy service sections (6.6.5, and `stats_source: envelope` on 7.6.2) and through the range API
 * (7.6.2) gives the same families and values, but for what one generation does not serve.
 *
 * The oracle is the simulator, which builds both answers from one per-node model (src/simulator/services.ts: a
 * legacy counter is the per-second rate, the native counter the running sum of those rates, a gauge the same level
 * on both paths) and never reads cbwatch's tables. Each run polls twice, 30 s apart, at the same simulated instants,
 * and compares the second polls (rates and means are "since the previous poll" on both paths). Rates agree within the
 * window difference: the envelope averages 1-second samples, the range source 10-second scrapes of the same curves.
 *
 * What one generation does not serve (ns_server@7.6.2:src/stat_names_mappings.erl: no legacy name for n1ql_timeouts,
 * n1ql_cancelled, n1ql_prepared, n1ql_load, n1ql_node_memory; ns_server@6.6.5:src/menelaus_stats.erl: no REST route
 * for `@system-processes`) is listed in SEVEN_ONLY and checked to be absent on the envelope side.
 */
import { describe, expect, it } from 'vitest';
import { analyticsCollector } from '../../src/collectors/analytics.js';
import { processesCollector } from '../../src/collectors/processes.js';
import { queryCollector } from '../../src/collectors/query.js';
import type { Collector } from '../../src/collectors/types.js';
import type { CollectorName } from '../../src/config/schema.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { collect } from '../helpers/collect.js';

/** On a 10 s boundary: the nodes' scrapes and the envelopes' samples line up. */
const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);
const REL = 5e-3;
/** The simulator's query nodes with 3 nodes (a node's services: src/simulator/profiles.ts). */
const CB1 = 'cb1.cbsim.local:8091';
const CB3 = 'cb3.cbsim.local:8091';
const ABS = 2e-3;

/** Families served by 7.0+ only: absent from the envelope side. */
const SEVEN_ONLY = new Set([
  'couchbase_query_timeouts_per_second',
  'couchbase_query_cancelled_per_second',
  'couchbase_query_prepared_per_second',
  'couchbase_query_memory_bytes',
  'couchbase_query_load',
  'couchbase_process_resident_memory_bytes',
  'couchbase_process_cpu_utilization_ratio',
  'couchbase_node_disk_usage_ratio',
]);

type Families = Map<string, Map<string, number>>;

const COLLECTORS = [queryCollector, analyticsCollector, processesCollector] as unknown as ReadonlyArray<Collector<CollectorName>>;

interface Run {
  readonly families: Families;
  readonly notApplicable: Map<string, string | undefined>;
  /** Per collector, the item failures of the second poll by reason. */
  readonly itemErrors: Map<string, ReadonlyMap<string, number>>;
}

/** The three collectors through `source`, twice 30 s apart; the second polls' families. */
async function run(version: string, source: 'envelope' | 'range' | 'auto', knobs: Record<string, unknown> = {}): Promise<Run> {
  const clock = { now: T0 };
  const sim: Simulator = createSimulator({ version, buckets: 2, nodes: 3, seed: 46, clock: () => clock.now, knobs: { analyticsNodes: 1, ...knobs } });
  const client: CouchbaseClient = createClient({ cluster: 't', url: await sim.listen(), username: 'Administrator', password: 'password', concurrency: 8 });
  try {
    const states = COLLECTORS.map(() => new Map<string, unknown>());
    const families: Families = new Map();
    const notApplicable = new Map<string, string | undefined>();
    const itemErrors = new Map<string, ReadonlyMap<string, number>>();
    for (const [i, at] of [T0, T0 + 30_000].entries()) {
      clock.now = at;
      for (const [k, c] of COLLECTORS.entries()) {
        const r = await collect(c, client, { cluster: { statsSource: source }, state: states[k] as Map<string, unknown>, now: () => clock.now });
        expect(r.ok, `${c.name} ${version} ${source}: ${String(r.error)}`).toBe(true);
        if (i === 0) continue;
        notApplicable.set(c.name, r.notApplicable);
        itemErrors.set(c.name, r.itemErrors);
        for (const f of r.set.families()) families.set(f.def.name, new Map(f.samples.map((s) => [JSON.stringify(Object.entries(s.labels).sort()), s.value])));
      }
    }
    return { families, notApplicable, itemErrors };
  } finally {
    await client.close();
    await sim.close();
  }
}

/**
 * Every difference between two runs' families, but the 7.0+-only ones absent on the envelope side; `absent`: families
 * the version serves on neither side.
 */
function differences(env: Families, range: Families, absent: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  for (const name of new Set([...env.keys(), ...range.keys(), ...absent])) {
    const e = env.get(name);
    const r = range.get(name);
    if (absent.has(name)) {
      if ((e?.size ?? 0) + (r?.size ?? 0) > 0) out.push(`${name}: served, where the version does not serve it`);
      continue;
    }
    if (SEVEN_ONLY.has(name)) {
      if (e !== undefined) out.push(`${name}: served by the envelope side`);
      if (r === undefined || r.size === 0) out.push(`${name}: absent from the range side`);
      continue;
    }
    if (e === undefined || r === undefined) {
      out.push(`${name}: ${e === undefined ? 'absent from the envelope side' : 'absent from the range side'}`);
      continue;
    }
    const keys = new Set([...e.keys(), ...r.keys()]);
    for (const k of keys) {
      const a = e.get(k);
      const b = r.get(k);
      if (a === undefined || b === undefined) out.push(`${name} ${k}: only on the ${a === undefined ? 'range' : 'envelope'} side`);
      else if (Math.abs(a - b) > Math.max(ABS, REL * Math.max(Math.abs(a), Math.abs(b)))) out.push(`${name} ${k}: envelope ${a}, range ${b}`);
    }
  }
  return out;
}

describe('service collectors: the legacy sections and the range API agree', () => {
  const runs: Partial<Record<'v66' | 'v76env' | 'v76range', Run>> = {};

  it('6.6.5 (sections per node) and 7.6.2 (range API) give the same families and values', async () => {
    runs.v66 = await run('6.6.5', 'auto');
    runs.v76range = await run('7.6.2', 'auto');
    // Meaningful: the families dashboards and alerts read are there, on the query and analytics nodes.
    for (const f of ['couchbase_query_requests_per_second', 'couchbase_query_slow_requests_per_second', 'couchbase_query_request_time_seconds', 'couchbase_analytics_heap_used_bytes', 'couchbase_analytics_gc_per_second']) {
      expect(runs.v66.families.get(f)?.size ?? 0, f).toBeGreaterThan(0);
    }
    expect(runs.v66.notApplicable.get('processes')).toBe('per-process statistics are not served over REST before 7.0');
    expect(runs.v76range.notApplicable.get('processes')).toBeUndefined();
    expect(differences(runs.v66.families, runs.v76range.families)).toEqual([]);
  }, 120_000);

  it('on 7.6.2, stats_source envelope and range give the same families and values', async () => {
    runs.v76env = await run('7.6.2', 'envelope');
    runs.v76range ??= await run('7.6.2', 'auto');
    expect(differences(runs.v76env.families, runs.v76range.families)).toEqual([]);
  }, 120_000);

  it.each(['7.2.4', '8.0.0'])('on %s, stats_source envelope and range give the same families and values', async (version) => {
    const env = await run(version, 'envelope');
    const range = await run(version, 'auto');
    // sys_disk_usage_ratio is served from 7.6 (ns_server@7.6.2:src/ns_server_stats.erl; absent from the 7.2 line).
    const absent = version === '7.2.4' ? new Set(['couchbase_node_disk_usage_ratio']) : new Set<string>();
    expect(env.notApplicable.get('processes')).toBe('the processes statistics are served by the range API only (stats_source: envelope)');
    expect(differences(env.families, range.families, absent)).toEqual([]);
  }, 120_000);

  it.each(['6.6.5', '7.6.2'])('on %s, a query node that is down is a failure of its own and takes none of the other nodes\' series', async (version) => {
    const down = await run(version, 'auto', { nodeFaults: { [CB3]: { down: true } } });
    const requests = down.families.get('couchbase_query_requests_per_second') ?? new Map();
    expect([...requests.keys()]).toEqual([JSON.stringify([['node', CB1]])]);
    expect(down.itemErrors.get('query')?.size ?? 0).toBeGreaterThan(0);
  }, 120_000);
});
