/**
 * The index, search_index and eventing statistics against the simulator on a 6.6.5 cluster (the legacy sections,
 * per node) and a 7.6 cluster (the native series through the shared range request), under `stats_source: auto`: the
 * same families, and the same values for the same series, on both.
 *
 * The oracle is the simulator, which builds both answers from one per-node model by ns_server's rules and never
 * reads cbwatch's mapping; the values pinned here by hand go through its `serviceStatValues` knob (served alike on
 * both paths): a level is served as it is, a counter as a per-second rate in the section and as the running sum of
 * those rates natively, so the hand-computed mean per event (ns_server's avg_scan_latency = total_scan_duration /
 * num_rows_returned, ns_server@7.6.2:src/menelaus_stats.erl; avg_queries_latency = total_request_time /
 * total_queries) is the same through either source. Each run polls twice, 30 s apart on the simulator's clock.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { eventingCollector } from '../../src/collectors/eventing.js';
import { indexCollector } from '../../src/collectors/index-service.js';
import { searchIndexCollector } from '../../src/collectors/search-index.js';
import { runPoll } from '../../src/collectors/context.js';
import { createSharedCache } from '../../src/collectors/shared.js';
import type { Collector } from '../../src/collectors/types.js';
import { defaultClusterConfig, resolveCollectorOptions } from '../../src/config/defaults.js';
import { collectorSchemas } from '../../src/config/schema.js';
import type { CollectorName } from '../../src/config/schema.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import type { Sample } from '../../src/metrics/family.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { collect } from '../helpers/collect.js';

/** On a 10 s boundary: the nodes' scrapes and the sections' samples line up. */
const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);
const COLLECTORS = [indexCollector, searchIndexCollector, eventingCollector] as const;
/** The statistics families (the state and status families come from other answers). */
const STATS = /^couchbase_(index_(items|docs_|resident|fragmentation|data_size|disk_size|memory_used|scan_latency|requests|rows_returned|cache_hit|node_memory|node_ram)|search_(index|node)_|eventing_(dcp_backlog|on_|timeouts))/;
const CB1 = 'cb1.cbsim.local:8091';
const DEF = { bucket: 'travel-sample', scope: '_default', collection: '_default', index: 'def_type', node: CB1 };

/** Pinned on both paths (the simulator's serviceStatValues knob: levels as they are, counters as per-second rates). */
const PINNED: Record<string, () => number> = {
  'index/def_type/items_count': () => 12_345,
  'index/def_type/num_rows_returned': () => 200,
  'index/def_type/total_scan_duration': () => 400_000_000,
  'fts/travel-hotels/total_queries': () => 4,
  'fts/travel-hotels/total_request_time': () => 60_000_000,
  'eventing/enrich_orders/on_update_success': () => 777,
};

type Families = Map<string, Map<string, number>>;
const key = (s: Sample): string => JSON.stringify(Object.entries(s.labels).sort());

interface Run {
  readonly families: Families;
  readonly notes: string[];
  readonly sim: Simulator;
  readonly client: CouchbaseClient;
}

const open: Array<{ sim: Simulator; client: CouchbaseClient }> = [];
afterAll(async () => {
  for (const o of open) {
    await o.client.close();
    await o.sim.close();
  }
});

async function start(version: string, knobs: Record<string, unknown>, clock: { now: number }): Promise<{ sim: Simulator; client: CouchbaseClient }> {
  const sim = createSimulator({ version, buckets: 2, nodes: 3, seed: 46, clock: () => clock.now, knobs: { eventingNodes: 2, eventingStatuses: { audit_log: 'paused' }, serviceStatValues: PINNED, ...knobs } });
  const client = createClient({ cluster: 't', url: await sim.listen(), username: 'Administrator', password: 'password', concurrency: 8 });
  open.push({ sim, client });
  return { sim, client };
}

/** The three collectors, twice 30 s apart, under `auto`; the second polls' statistics families. */
async function run(version: string, knobs: Record<string, unknown> = {}, statsSource: 'auto' | 'envelope' = 'auto'): Promise<Run> {
  const clock = { now: T0 };
  const { sim, client } = await start(version, knobs, clock);
  const families: Families = new Map();
  const notes: string[] = [];
  for (const c of COLLECTORS) {
    const state = new Map<string, unknown>();
    clock.now = T0;
    await collect(c as Collector<CollectorName>, client, { cluster: { statsSource }, state, now: () => clock.now });
    clock.now = T0 + 30_000;
    const r = await collect(c as Collector<CollectorName>, client, { cluster: { statsSource }, state, now: () => clock.now });
    expect(r.ok, `${version} ${c.name}: ${String(r.error)}`).toBe(true);
    expect([...r.itemErrors], `${version} ${c.name}`).toEqual([]);
    notes.push(`${c.name}: ${r.note ?? ''}`);
    for (const f of r.set.families()) if (STATS.test(f.def.name)) families.set(f.def.name, new Map(f.samples.map((s) => [key(s), s.value])));
  }
  return { families, notes, sim, client };
}

/** Rates: the sections average 1-second samples, the range source 10-second scrapes of the same curves. */
function close(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= Math.max(1e-6, 5e-3 * Math.max(Math.abs(a), Math.abs(b)));
}

describe('index, search_index and eventing statistics on 6.6.5 (sections), 7.2.4, 7.6 and 8.0.0 (range API)', () => {
  let old: Run;
  let now: Run;

  it('read the sections before 7.0 and the range API from 7.0', async () => {
    old = await run('6.6.5');
    now = await run('7.6.5');
    expect(old.notes.filter((n) => !n.startsWith('eventing')).every((n) => n.includes('statistics: envelope')), old.notes.join(' | ')).toBe(true);
    expect(now.notes.filter((n) => !n.startsWith('eventing')).every((n) => n.includes('statistics: range')), now.notes.join(' | ')).toBe(true);
  }, 120_000);

  it('give the same families on both', () => {
    expect([...now.families.keys()].sort()).toEqual([...old.families.keys()].sort());
    for (const f of ['couchbase_index_items', 'couchbase_index_scan_latency_seconds', 'couchbase_index_node_ram_ratio', 'couchbase_search_index_docs', 'couchbase_search_node_memory_bytes', 'couchbase_eventing_dcp_backlog', 'couchbase_eventing_on_update_success_total']) {
      expect(old.families.has(f), f).toBe(true);
    }
  });

  it('give the same value for every series of the 6.6.5 cluster (7.6 adds the indexes of named collections)', () => {
    const diffs: string[] = [];
    for (const [name, series] of old.families) {
      // The node's use includes 7.6's extra index: checked below.
      if (name === 'couchbase_index_node_memory_used_bytes' || name === 'couchbase_index_node_ram_ratio') continue;
      const other = now.families.get(name) ?? new Map<string, number>();
      for (const [k, v] of series) {
        const w = other.get(k);
        if (w === undefined) diffs.push(`${name} ${k}: only on 6.6.5`);
        else if (!close(v, w)) diffs.push(`${name} ${k}: 6.6.5 ${v}, 7.6 ${w}`);
      }
    }
    expect(diffs).toEqual([]);
    const extra = [...(now.families.get('couchbase_index_items') ?? new Map()).keys()].filter((k) => !old.families.get('couchbase_index_items')?.has(k));
    expect(extra.length).toBeGreaterThan(0);
    expect(extra.every((k) => k.includes('"inventory"')), extra.join(' ')).toBe(true);
    // Per index node, 7.6's use is 6.6.5's plus the memory of the indexes only 7.6 has on that node.
    for (const [k, used] of old.families.get('couchbase_index_node_memory_used_bytes') ?? new Map<string, number>()) {
      const node = (JSON.parse(k) as Array<[string, string]>)[0]?.[1] as string;
      const added = [...(now.families.get('couchbase_index_memory_used_bytes') ?? new Map<string, number>())].filter(([s]) => s.includes('"inventory"') && s.includes(`"${node}"`)).reduce((n, [, v]) => n + v, 0);
      expect(added, node).toBeGreaterThan(0);
      expect(now.families.get('couchbase_index_node_memory_used_bytes')?.get(k), node).toBe(used + added);
      const quota = now.families.get('couchbase_index_node_memory_quota_bytes')?.get(k) as number;
      expect(now.families.get('couchbase_index_node_ram_ratio')?.get(k), node).toBeCloseTo((used + added) / quota, 12);
      expect(old.families.get('couchbase_index_node_ram_ratio')?.get(k), node).toBeCloseTo(used / quota, 12);
    }
  });

  it('give the pinned values by hand on both', () => {
    for (const r of [old, now]) {
      const get = (family: string, labels: Record<string, string>): number | undefined => r.families.get(family)?.get(JSON.stringify(Object.entries(labels).sort()));
      expect(get('couchbase_index_items', DEF)).toBe(12_345);
      expect(get('couchbase_index_rows_returned_per_second', DEF)).toBeCloseTo(200, 6);
      // 400,000,000 ns/s over 200 rows/s: 2 ms per row.
      expect(get('couchbase_index_scan_latency_seconds', DEF)).toBeCloseTo(0.002, 9);
      // 60 ms of request time per second over 4 queries/s: 15 ms per query, on each Search node holding the index.
      const hotels = [...(r.families.get('couchbase_search_index_query_latency_seconds') ?? new Map())].filter(([k]) => k.includes('"travel-hotels"'));
      expect(hotels.length).toBeGreaterThan(0);
      for (const [, v] of hotels) expect(v).toBeCloseTo(0.015, 9);
      // A running total summed over the two eventing nodes: 2 × 777.
      expect(get('couchbase_eventing_on_update_success_total', { function: 'enrich_orders' })).toBe(1554);
    }
  });

  it('on 7.2.4 and 8.0.0 the range API gives the same families and values as on 7.6, with the pinned values', async () => {
    for (const version of ['7.2.4', '8.0.0']) {
      const other = await run(version);
      expect(other.notes.filter((n) => !n.startsWith('eventing')).every((n) => n.includes('statistics: range')), `${version}: ${other.notes.join(' | ')}`).toBe(true);
      expect([...other.families.keys()].sort(), version).toEqual([...now.families.keys()].sort());
      const diffs: string[] = [];
      for (const [name, series] of now.families) {
        const got = other.families.get(name) ?? new Map<string, number>();
        for (const [k, v] of series) {
          const w = got.get(k);
          if (w === undefined) diffs.push(`${name} ${k}: only on 7.6`);
          else if (!close(v, w)) diffs.push(`${name} ${k}: 7.6 ${v}, ${version} ${w}`);
        }
      }
      expect(diffs, version).toEqual([]);
      const get = (family: string, labels: Record<string, string>): number | undefined => other.families.get(family)?.get(JSON.stringify(Object.entries(labels).sort()));
      expect(get('couchbase_index_items', DEF), version).toBe(12_345);
      expect(get('couchbase_index_scan_latency_seconds', DEF), version).toBeCloseTo(0.002, 9);
      expect(get('couchbase_eventing_on_update_success_total', { function: 'enrich_orders' }), version).toBe(1554);
    }
  }, 120_000);

  it('on 7.6, the sections (stats_source: envelope) give the same series and values as the range API, but the scope of an index in a named collection', async () => {
    const env = await run('7.6.5', {}, 'envelope');
    expect([...env.families.keys()].sort()).toEqual([...now.families.keys()].sort());
    // The legacy key `index/<index>/<stat>` has no scope or collection (ns_server@7.6.2:src/stat_names_mappings.erl
    // map_index_stats matches bucket and index only): such an index is labelled `_default`.`_default` there.
    const unscoped = (k: string): string => k.replace('"inventory"', '"_default"').replace('"hotel"', '"_default"');
    const diffs: string[] = [];
    for (const [name, series] of now.families) {
      const other = env.families.get(name) ?? new Map<string, number>();
      for (const [k, v] of series) {
        const w = other.get(unscoped(k));
        if (w === undefined) diffs.push(`${name} ${k}: range only`);
        else if (!close(v, w)) diffs.push(`${name} ${k}: range ${v}, envelope ${w}`);
      }
      if (other.size !== series.size) diffs.push(`${name}: ${series.size} series by range, ${other.size} by envelope`);
    }
    expect(diffs).toEqual([]);
  }, 120_000);

  it('export no statistics for a paused function (its status is still exported)', () => {
    for (const r of [old, now]) {
      expect([...(r.families.get('couchbase_eventing_dcp_backlog') ?? new Map()).keys()]).toEqual([JSON.stringify([['function', 'enrich_orders']])]);
    }
  });
});

describe('phantom work and series', () => {
  it('an index and a function that disappear take their series with them (6.6.5 and 7.6)', async () => {
    for (const version of ['6.6.5', '7.6.5']) {
      const clock = { now: T0 };
      const { sim, client } = await start(version, {}, clock);
      const poll = async (c: Collector<CollectorName>, state: Map<string, unknown>, at: number): Promise<string> => {
        clock.now = at;
        const r = await collect(c, client, { cluster: { statsSource: 'auto' }, state, now: () => clock.now });
        expect(r.ok, `${version} ${c.name}: ${String(r.error)}`).toBe(true);
        return r.text;
      };
      const states = new Map(COLLECTORS.map((c) => [c.name, new Map<string, unknown>()] as const));
      const before = new Map<string, string>();
      for (const c of COLLECTORS) before.set(c.name, await poll(c as Collector<CollectorName>, states.get(c.name) as Map<string, unknown>, T0));
      expect(before.get('index')).toContain('index="idx_deferred",node=');
      expect(before.get('eventing')).toContain('couchbase_eventing_dcp_backlog{couchbase_cluster="test",function="enrich_orders"}');
      Object.assign(sim.ctx.options.knobs, { indexesDropped: ['idx_deferred'], eventingFunctionsDropped: ['enrich_orders'] });
      const index = await poll(indexCollector as Collector<CollectorName>, states.get('index') as Map<string, unknown>, T0 + 30_000);
      expect(index, version).not.toContain('idx_deferred');
      expect(index).toContain('index="def_type",node=');
      const eventing = await poll(eventingCollector as Collector<CollectorName>, states.get('eventing') as Map<string, unknown>, T0 + 30_000);
      expect(eventing, version).not.toContain('enrich_orders');
    }
  }, 120_000);

  it('a cluster without the Eventing service costs the eventing collector no statistics request', async () => {
    const clock = { now: T0 };
    const { sim, client } = await start('7.6.5', { eventingNodes: 0 }, clock);
    const r = await collect(eventingCollector, client, { cluster: { statsSource: 'auto' }, now: () => clock.now });
    expect(r.ok).toBe(true);
    expect(r.notApplicable).toBe('no eventing service');
    const counts = (await (await sim.app.inject({ method: 'GET', url: '/_sim/requests', headers: { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` } })).json()) as { byRoute: Record<string, number> };
    expect(Object.keys(counts.byRoute).filter((k) => /stats|event/.test(k))).toEqual([]);
  });

  it('the three collectors polled at one tick on 7.6 share one range request', async () => {
    const clock = { now: T0 };
    const { sim, client } = await start('7.6.5', {}, clock);
    const shared = createSharedCache(() => clock.now);
    const cluster = defaultClusterConfig({ url: client.baseUrl, statsSource: 'auto' });
    for (const c of COLLECTORS) {
      const options = resolveCollectorOptions(c.name, collectorSchemas[c.name].parse({}) as never);
      const out = await runPoll({ collector: c as Collector<CollectorName>, cluster, options, client, shared, now: () => clock.now });
      expect(out.ok, `${c.name}: ${String(out.error)}`).toBe(true);
    }
    const counts = (await (await sim.app.inject({ method: 'GET', url: '/_sim/requests', headers: { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` } })).json()) as { byRoute: Record<string, number> };
    const range = Object.entries(counts.byRoute).filter(([k]) => k.includes('/pools/default/stats/range'));
    expect(range.reduce((n, [, v]) => n + v, 0)).toBe(1);
  });
});
