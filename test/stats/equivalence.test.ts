/**
 * The acceptance test of the range source: on a simulated 7.x cluster at the realistic scenario (100 buckets with
 * the full stat set, 4 nodes, 100 replications), `stats_source: auto` produces the same families as `envelope`
 * and, series by series, the same values within rounding, for the same underlying counters; on a simulated 6.x
 * cluster `auto` reads the envelopes and never asks the range API.
 *
 * Both runs poll the same simulator at the same simulated instants (a hand clock on 10 s boundaries, where the
 * nodes' Prometheus scrapes), twice, 30 s apart: the second poll's rates are "since the previous poll" on both
 * paths. The simulator builds its envelopes and its native metrics from one model (a native counter is the running
 * sum of the envelope's per-second rates), so the two paths must agree exactly up to float rounding.
 *
 * What may differ, and only that: a family the envelope has and the range source cannot give — a legacy stat with
 * no row in the mapping table (NO_NATIVE_EQUIVALENT), or a row whose native series this simulator does not serve
 * (found by asking the simulator itself for every native series of the table, so it cannot hide a regression).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { xdcrCollector } from '../../src/collectors/xdcr.js';
import type { Collector } from '../../src/collectors/types.js';
import type { CollectorName } from '../../src/config/schema.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import type { Sample } from '../../src/metrics/family.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { KV_NATIVE_MAP, nativeMapFor, serverLineOf, XDCR_NATIVE_MAP } from '../../src/stats/native-map.js';
import type { NativeMapRow, ServerLine } from '../../src/stats/native-map.js';
import { collect } from '../helpers/collect.js';


const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);

/**
 * "The same value within rounding": the simulator's envelopes carry rates rounded to 4 decimals (a real envelope
 * rounds too), while the native counters add up the unrounded rates; a sum of two such stats (cmd_get = hits +
 * misses) differs by up to 1e-4. Anything else is a float-path difference (relative 1e-9).
 */
const ABS = 2e-4;
/** The simulator's per-node envelopes round each sample to 3 decimals (a node's share of a bucket's count). */
const ABS_NODE = 1e-3;
const REL = 1e-9;
/**
 * A gauge's window mean (derive 'mean': the CPU shares): the range source averages the native 10 s scrapes since
 * the previous poll, the simulator's 7.x envelope its one-second samples of the same curve (a real 7.x server
 * builds both from the same 10 s scrapes). On a curve that moves 2% over 3 minutes the two agree within 0.5%.
 */
const REL_MEAN = 5e-3;

function close(a: number, b: number, abs: number): boolean {
  return a === b || Math.abs(a - b) <= Math.max(abs, REL * Math.max(Math.abs(a), Math.abs(b)));
}

function seriesMap(samples: readonly Sample[]): Map<string, number> {
  return new Map(samples.map((s) => [JSON.stringify(Object.entries(s.labels).sort()), s.value]));
}

interface Run {
  readonly families: Map<string, Map<string, number>>;
  readonly endpoints: Set<string>;
  readonly requests: number;
  readonly ok: boolean;
  readonly note: string | undefined;
}

async function twoPolls<N extends CollectorName>(
  collector: Collector<N>,
  client: CouchbaseClient,
  clock: { now: number },
  statsSource: 'auto' | 'envelope',
  options: Record<string, unknown> = {},
): Promise<{ first: Run; second: Run }> {
  const state = new Map<string, unknown>();
  const one = async (): Promise<Run> => {
    const r = await collect(collector, client, { cluster: { statsSource }, state, now: () => clock.now, options: options as never });
    const families = new Map<string, Map<string, number>>();
    for (const f of r.set.families()) families.set(f.def.name, seriesMap(f.samples));
    return { families, endpoints: new Set(r.requests.map((q) => q.endpoint)), requests: r.requests.length, ok: r.ok, note: r.note };
  };
  return { first: await one(), second: await one() };
}


/** The label sets the simulator serves for each native metric `rows` read (one range request, the last 20 s). */
async function readServed(url: string, rows: readonly NativeMapRow[], served: Map<string, Array<Record<string, string>>>): Promise<void> {
  const names = [...new Set(rows.flatMap((r) => [...r.series, ...(r.denominator ?? [])].map((x) => x.metric)))];
  const res = await fetch(`${url}/pools/default/stats/range`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify(names.map((n) => ({ metric: [{ label: 'name', value: n }], start: -20, step: 10 }))),
  });
  const body = (await res.json()) as Array<{ data: Array<{ metric: Record<string, string> }> }>;
  names.forEach((n, i) => served.set(n, (body[i]?.data ?? []).map((d) => d.metric)));
}

/** Rows some of whose native series (name and matchers) are not among `served`. */
function unservedRows(rows: readonly NativeMapRow[], served: ReadonlyMap<string, ReadonlyArray<Record<string, string>>>): Set<NativeMapRow> {
  return new Set(
    rows.filter((r) =>
      [...r.series, ...(r.denominator ?? [])].some(
        (x) => !(served.get(x.metric) ?? []).some((l) => Object.entries(x.matchers).every(([k, v]) => (typeof v === 'string' ? l[k] === v : v.includes(l[k] ?? '')))),
      ),
    ),
  );
}

/** Poll envelope and auto at T0, then both again at T0 + 30 s. */
async function compare<N extends CollectorName>(
  collector: Collector<N>,
  client: CouchbaseClient,
  clock: { now: number },
  options: Record<string, unknown> = {},
): Promise<{ env: Run; auto: Run; autoFirst: Run }> {
  const state = { env: new Map<string, unknown>(), auto: new Map<string, unknown>() };
  const poll = async (source: 'auto' | 'envelope', st: Map<string, unknown>): Promise<Run> => {
    const r = await collect(collector, client, { cluster: { statsSource: source }, state: st, now: () => clock.now, options: options as never });
    const families = new Map<string, Map<string, number>>();
    for (const f of r.set.families()) families.set(f.def.name, seriesMap(f.samples));
    return { families, endpoints: new Set(r.requests.map((q) => q.endpoint)), requests: r.requests.length, ok: r.ok, note: r.note };
  };
  clock.now = T0;
  await poll('envelope', state.env);
  const autoFirst = await poll('auto', state.auto);
  clock.now = T0 + 30_000;
  const env = await poll('envelope', state.env);
  const auto = await poll('auto', state.auto);
  return { env, auto, autoFirst };
}

/** Families of rows, bucket-wide (and per node). */
function familiesOf(rows: readonly NativeMapRow[], perNode: boolean): Map<string, NativeMapRow> {
  const out = new Map<string, NativeMapRow>();
  for (const r of rows) {
    out.set(r.family, r);
    if (perNode && r.section === 'kv') out.set(r.family.replace(/^couchbase_bucket_/, 'couchbase_bucket_node_'), r);
  }
  return out;
}

/**
 * Check `auto` against `env`: same values for every series of every family both have; `auto` has nothing more;
 * every family only `env` has is accounted for. Returns the families compared.
 */
function expectEquivalent(env: Run, auto: Run, rows: Map<string, NativeMapRow>, unserved: ReadonlySet<NativeMapRow>): string[] {
  const compared: string[] = [];
  const mismatches: string[] = [];
  for (const [name, autoSeries] of auto.families) {
    const envSeries = env.families.get(name);
    expect(envSeries, `${name}: auto has a family the envelope does not`).toBeDefined();
    if (envSeries === undefined) continue;
    compared.push(name);
    expect([...autoSeries.keys()].sort(), `${name}: the same series`).toEqual([...envSeries.keys()].sort());
    for (const [k, v] of envSeries) {
      const a = autoSeries.get(k);
      const tolerance = name.startsWith('couchbase_bucket_node_') ? ABS_NODE : ABS;
      const ok = a !== undefined && (close(a, v, tolerance) || (rows.get(name)?.derive === 'mean' && Math.abs(a - v) <= REL_MEAN * Math.abs(v)));
      if (!ok) mismatches.push(`${name}${k}: envelope ${v}, auto ${String(a)}`);
    }
  }
  // Nothing is exempt: the simulator's envelope follows ns_server's rules (host stats summed, max for
  // cpu_utilization_rate, the cache-miss formula and small-file rule by line) and so does the range source.
  expect([...new Set(mismatches.map((m) => m.split('[')[0]))], mismatches.slice(0, 12).join('\n')).toEqual([]);
  const onlyEnv = [...env.families.keys()].filter((n) => !auto.families.has(n));
  const unexplained = onlyEnv.filter((n) => {
    const row = rows.get(n);
    // No row: the legacy stat has no native equivalent (or is not a stat family: hot keys, source notes…).
    if (row === undefined) return false;
    // A row whose native series the simulator does not serve.
    return !unserved.has(row);
  });
  expect(unexplained, 'families the envelope has, the mapping table maps, and auto lacks').toEqual([]);
  return compared;
}

describe('stats_source auto = envelope on a simulated 7.x cluster (realistic scenario)', () => {
  let sim: Simulator;
  let client: CouchbaseClient;
  const clock = { now: T0 };
  /** The label sets the simulator answers for each native name the mapping table reads (asked once, of the simulator itself). */
  const served = new Map<string, Array<Record<string, string>>>();

  beforeAll(async () => {
    sim = createSimulator({ version: '7.6.5', buckets: 100, nodes: 4, replications: 100, statSet: 'full', seed: 7, clock: () => clock.now });
    const url = await sim.listen();
    client = createClient({ cluster: 't', url, username: 'Administrator', password: 'password', concurrency: 16 });
    clock.now = T0;
    await readServed(url, [...KV_NATIVE_MAP, ...XDCR_NATIVE_MAP], served);
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });

  /** Rows some of whose native series (name and matchers) the simulator does not serve: their families may be absent. */
  const unserved = (): Set<NativeMapRow> => unservedRows([...KV_NATIVE_MAP, ...XDCR_NATIVE_MAP], served);

  it('bucket_stats: same families and values, from 8 range requests instead of 100 envelopes', async () => {
    const { env, auto, autoFirst } = await compare(bucketStatsCollector, client, clock);
    expect(env.ok && auto.ok && autoFirst.ok).toBe(true);
    expect(auto.note).toMatch(/^statistics: range/);
    expect(env.note).toMatch(/^statistics: envelope/);
    // Requests: the bucket list, /pools/default (the active nodes of any service, whom host stats are asked of, as
    // menelaus_stats section_nodes("@system") sums them; shared with the nodes collector) + the range batches (82
    // native names on the 7.6 line, 11 to a request); the envelope path asks once per bucket.
    expect([...auto.endpoints].sort()).toEqual(['/pools/default', '/pools/default/buckets', '/pools/default/stats/range']);
    expect(auto.requests).toBe(1 + 1 + 8);
    expect(env.requests).toBe(1 + 100);
    const compared = expectEquivalent(env, auto, familiesOf(KV_NATIVE_MAP, false), unserved());
    // Meaningful: most of what dashboards and alerts read is compared, levels, rates and ratios alike.
    for (const f of [
      'couchbase_bucket_curr_items',
      'couchbase_bucket_mem_used_bytes',
      'couchbase_bucket_ops_per_second',
      'couchbase_bucket_cmd_get_per_second',
      'couchbase_bucket_ep_bg_fetched_per_second',
      'couchbase_bucket_ep_tmp_oom_errors_per_second',
      'couchbase_bucket_disk_write_queue',
      'couchbase_bucket_vb_active_resident_items_ratio',
      'couchbase_bucket_ep_cache_miss_ratio',
      'couchbase_bucket_hit_ratio',
      'couchbase_bucket_vb_active_queue_age_seconds',
      'couchbase_bucket_last_sample_timestamp_seconds',
    ]) {
      expect(compared, f).toContain(f);
    }
    expect(compared.length).toBeGreaterThanOrEqual(35);
  }, 120_000);

  it('bucket_stats per node: the per-node families from the same range batch', async () => {
    const { env, auto } = await compare(bucketStatsCollector, client, clock, { per_node: true });
    expect(env.ok && auto.ok).toBe(true);
    expect(auto.requests).toBe(1 + 1 + 8);
    expect(env.requests).toBe(1 + 100 + 100 * 4);
    const compared = expectEquivalent(env, auto, familiesOf(KV_NATIVE_MAP, true), unserved());
    expect(compared).toContain('couchbase_bucket_node_ops_per_second');
    expect(compared).toContain('couchbase_bucket_node_mem_used_bytes');
  }, 180_000);

  it('xdcr: same families and values per replication and node, from the range batch and no per-stat request', async () => {
    const opts = { slow_stats_interval: '30s' };
    const { env, auto } = await compare(xdcrCollector, client, clock, opts);
    expect(env.ok && auto.ok).toBe(true);
    expect(auto.note).toMatch(/^statistics: range/);
    const statRequests = (r: Run): boolean => r.endpoints.has('/pools/default/buckets/{bucket}/stats/{destination_endpoint}');
    expect(statRequests(auto)).toBe(false);
    expect(statRequests(env)).toBe(true);
    const compared = expectEquivalent(env, auto, familiesOf(XDCR_NATIVE_MAP, false), unserved());
    for (const f of ['couchbase_xdcr_changes_left', 'couchbase_xdcr_docs_written_total', 'couchbase_xdcr_wtavg_docs_latency_seconds', 'couchbase_xdcr_last_sample_timestamp_seconds']) {
      expect(compared, f).toContain(f);
    }
  }, 180_000);
});
/**
 * The other server lines (issue 37 §3): a smaller cluster of each profile, its nodes reporting that version, so the
 * range source reads that line's table (native-map.ts nativeMapFor). The simulator serves each profile's own native
 * names (7.0–7.2 theirs, src/simulator/native.ts); a row of the line's table whose series it does not serve (a stat
 * the simulator does not model) may be absent, as above.
 */

describe.each(['7.0.5', '7.1.4', '7.2.4', '7.6.8', '8.0.0'])('stats_source auto = envelope on a simulated %s cluster (each line its own table)', (version) => {
  let sim: Simulator;
  let client: CouchbaseClient;
  const clock = { now: T0 };
  const served = new Map<string, Array<Record<string, string>>>();
  const table = nativeMapFor(serverLineOf(version) as ServerLine);

  beforeAll(async () => {
    sim = createSimulator({ version, buckets: 8, nodes: 3, replications: 4, statSet: 'full', seed: 7, clock: () => clock.now });
    const url = await sim.listen();
    client = createClient({ cluster: 't', url, username: 'Administrator', password: 'password', concurrency: 8 });
    clock.now = T0;
    await readServed(url, table.all, served);
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });
  const unserved = (): Set<NativeMapRow> => unservedRows(table.all, served);

  it('bucket_stats and xdcr: the same families and values', async () => {
    const b = await compare(bucketStatsCollector, client, clock);
    expect(b.env.ok && b.auto.ok).toBe(true);
    expect(b.auto.note).toMatch(/^statistics: range/);
    // At most 8 range requests for the bucket stats of a single-version cluster, whatever the line (and the bucket
    // list and /pools/default).
    expect(b.auto.requests).toBeLessThanOrEqual(1 + 1 + 8);
    const compared = expectEquivalent(b.env, b.auto, familiesOf(table.kv, false), unserved());
    expect(compared).toContain('couchbase_bucket_curr_items');
    const x = await compare(xdcrCollector, client, clock, { slow_stats_interval: '30s' });
    expect(x.env.ok && x.auto.ok).toBe(true);
    expectEquivalent(x.env, x.auto, familiesOf(table.xdcr, false), unserved());
  }, 180_000);
});

describe('stats_source auto on a simulated 6.x cluster', () => {
  let sim: Simulator;
  let client: CouchbaseClient;
  const clock = { now: T0 };
  beforeAll(async () => {
    sim = createSimulator({ version: '6.6.5', buckets: 3, nodes: 2, replications: 2, statSet: 'full', seed: 7, clock: () => clock.now });
    client = createClient({ cluster: 't', url: await sim.listen(), username: 'Administrator', password: 'password' });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });

  it('reads the envelopes and never asks the range API', async () => {
    const b = await twoPolls(bucketStatsCollector, client, clock, 'auto');
    const x = await twoPolls(xdcrCollector, client, clock, 'auto');
    for (const r of [b.first, b.second, x.first, x.second]) {
      expect(r.ok).toBe(true);
      expect(r.endpoints.has('/pools/default/stats/range')).toBe(false);
      expect(r.note).toMatch(/^statistics: envelope \(auto: cluster compatibility 6\.6 is before 7\.0\)/);
    }
    expect(b.second.families.get('couchbase_bucket_curr_items')?.size).toBe(3);
  });
});
