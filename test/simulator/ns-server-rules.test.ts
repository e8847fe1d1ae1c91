/**
 * The simulator follows ns_server's own rules, so that a test against it can disagree with cbwatch's mapping
 * (issue 37, §6). Every expected value below is worked out by hand from ns_server's definitions, with the model's
 * inputs pinned by the `bucketStatValues` knob or read from each node's own answer:
 * - menelaus_stats.erl get_aggregate_method/1: nodes are summed, cpu_utilization_rate is their max;
 * - menelaus_stats.erl: a bucket's envelope sums its live servers (ns_bucket:live_bucket_nodes), host stats the
 *   active nodes that answer; computed_stats_lazy_proplist/1 divides after the merge;
 * - ep_cache_miss_rate by server line: ep_bg_fetched / cmd_get before 7.0, ep_bg_fetched / cmd_lookup on
 *   7.0-7.6.7, get_misses / cmd_get from 7.6.8 (and 8.0);
 * - couch_docs_data_size from 7.2: a node whose file is under 128 KiB × its vBuckets reports its file size;
 * - menelaus_web_stats.erl: `nodes` limits the nodes asked, `timeout` bounds the wait (a node past it answers
 *   `Request timed out`), a node that is down answers `Node is not available`, `metric` must be a list of JSON
 *   objects (validate_metric_json/2);
 * - names by server line (kv_engine stats.def.h): ep_kv_size is kv_memory_used_bytes{for="hashtable"} on
 *   7.0-7.2, kv_dcp_producer_count and kv_vb_itm_memory_bytes exist on 7.0-7.2 only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { SimOptions, Simulator } from '../../src/simulator/index.js';

const AUTH = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };
/** A whole multiple of 60 s: envelope samples and scrapes line up on it. */
const T0 = 1_700_000_040_000;
const N1 = 'cb1.cbsim.local:8091';
const N2 = 'cb2.cbsim.local:8091';
const N3 = 'cb3.cbsim.local:8091';

interface Samples {
  [stat: string]: number[];
}
interface RangeAnswer {
  data: Array<{ metric: Record<string, unknown> & { nodes: string[] }; values: Array<[number, string]> }>;
  errors: Array<{ node: string; error: string }>;
}

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function start(opts: SimOptions = {}): Simulator {
  sim = createSimulator({ clock: () => T0, ...opts });
  return sim;
}

async function getJson<T>(s: Simulator, url: string): Promise<{ status: number; body: T }> {
  const r = await s.app.inject({ method: 'GET', url, headers: AUTH });
  return { status: r.statusCode, body: JSON.parse(r.body) as T };
}

async function envelope(s: Simulator, bucket = 'travel-sample'): Promise<Samples> {
  return (await getJson<{ op: { samples: Samples } }>(s, `/pools/default/buckets/${bucket}/stats`)).body.op.samples;
}

async function nodeEnvelope(s: Simulator, node: string, bucket = 'travel-sample'): Promise<Samples> {
  return (await getJson<{ op: { samples: Samples } }>(s, `/pools/default/buckets/${bucket}/nodes/${encodeURIComponent(node)}/stats`)).body.op.samples;
}

async function range(s: Simulator, queries: unknown[]): Promise<{ status: number; body: unknown }> {
  const r = await s.app.inject({ method: 'POST', url: '/pools/default/stats/range', headers: { ...AUTH, 'content-type': 'application/json' }, payload: JSON.stringify(queries) });
  return { status: r.statusCode, body: JSON.parse(r.body) as unknown };
}

const last = (a: number[] | undefined): number => a?.at(-1) as number;
const t = T0 / 1000;
const q = (name: string, extra: Record<string, unknown> = {}): unknown => ({ metric: [{ label: 'name', value: name }, { label: 'bucket', value: 'travel-sample' }], start: t, end: t, ...extra });
const nodesOf = (a: RangeAnswer): string[] => a.data.map((d) => d.metric.nodes[0] as string).sort();

describe('the envelope merges nodes as menelaus_stats does', () => {
  it('host stats: summed over the active nodes, cpu_utilization_rate their max; bucket stats summed over the servers', async () => {
    const s = start();
    const env = await envelope(s);
    const own = await Promise.all([N1, N2, N3].map((n) => nodeEnvelope(s, n)));
    // Each node its own machine: three different readings.
    expect(new Set(own.map((o) => last(o.mem_total))).size).toBe(3);
    expect(last(env.mem_total)).toBe(last(own[0]!.mem_total) + last(own[1]!.mem_total) + last(own[2]!.mem_total));
    expect(last(env.cpu_cores_available)).toBe(last(own[0]!.cpu_cores_available) + last(own[1]!.cpu_cores_available) + last(own[2]!.cpu_cores_available));
    expect(last(env.cpu_utilization_rate)).toBeCloseTo(Math.max(...own.map((o) => last(o.cpu_utilization_rate))), 3);
    expect(last(env.curr_items)).toBeCloseTo(own.reduce((a, o) => a + last(o.curr_items), 0), 2);
  });

  it('one node down: its share leaves every sum (a partial sum, as Couchbase shows it); ratios come from the merged parts', async () => {
    const s = start({ knobs: { bucketStatValues: { cmd_get: () => 600, get_hits: () => 540 } } });
    const healthy = await envelope(s);
    const own = await Promise.all([N1, N2, N3].map((n) => nodeEnvelope(s, n)));
    s.ctx.options.knobs.nodeFaults = { [N2]: { down: true } };
    const env = await envelope(s);
    expect(last(env.curr_items)).toBeCloseTo(last(own[0]!.curr_items) + last(own[2]!.curr_items), 2);
    expect(last(env.curr_items)).toBeLessThan(last(healthy.curr_items));
    expect(last(env.mem_total)).toBe(last(own[0]!.mem_total) + last(own[2]!.mem_total));
    // cmd_get 600/s split over the nodes; the down node's share is missing from both parts of hit_ratio alike:
    // 540 × k / (600 × k) × 100 = 90 whatever k.
    expect(last(env.hit_ratio)).toBeCloseTo(90, 3);
    expect(last(env.cmd_get)).toBeLessThan(600);
  });

  it('one node failed over: it leaves the bucket (its vBuckets promoted elsewhere: totals whole) and the active nodes', async () => {
    const s = start({ knobs: { bucketStatValues: { cmd_get: () => 600 } } });
    const healthy = await envelope(s);
    s.ctx.options.knobs.nodeFaults = { [N3]: { failedOver: true } };
    const env = await envelope(s);
    expect(last(env.cmd_get)).toBeCloseTo(600, 3);
    expect(last(env.curr_items)).toBeCloseTo(last(healthy.curr_items), 2);
    const own = await Promise.all([N1, N2].map((n) => nodeEnvelope(s, n)));
    expect(last(env.mem_total)).toBe(last(own[0]!.mem_total) + last(own[1]!.mem_total));
    expect((await s.app.inject({ method: 'GET', url: `/pools/default/buckets/travel-sample/nodes/${encodeURIComponent(N3)}/stats`, headers: AUTH })).statusCode).toBe(404);
  });
});

describe('ep_cache_miss_rate and couch_docs_data_size by server line', () => {
  // Pinned parts: 5 background fetches, 200 lookups, 250 gets of which 10 missed, per second (whole bucket).
  const parts = { ep_bg_fetched: () => 5, cmd_lookup: () => 200, cmd_get: () => 250, get_misses: () => 10 };
  for (const [version, expected] of [
    ['6.6.5', (5 * 100) / 250],
    ['7.0.5', (5 * 100) / 200],
    ['7.2.4', (5 * 100) / 200],
    ['7.6.2', (5 * 100) / 200],
    ['7.6.8', (10 * 100) / 250],
    ['8.0.0', (10 * 100) / 250],
  ] as const) {
    it(`${version}: ep_cache_miss_rate = ${expected}`, async () => {
      const env = await envelope(start({ version, knobs: { bucketStatValues: parts } }));
      expect(last(env.ep_cache_miss_rate)).toBeCloseTo(expected, 6);
    });
  }

  // 2048 vBuckets (1024 active + 1024 replica) over the nodes: each node's threshold is 128 KiB × its own
  // vBuckets, the same proportion of the node's file, so the bucket's files cross it at 131072 × 2048 = 268,435,456 bytes.
  const sizes = (file: number): Record<string, () => number> => ({ couch_docs_disk_size: () => file, couch_docs_data_size: () => 60_000_000, ep_vb_total: () => 2048 });
  it('7.2+: nodes whose files are small report their file size; large ones their data size', async () => {
    expect(last((await envelope(start({ version: '7.2.4', knobs: { bucketStatValues: sizes(100_000_000) } }))).couch_docs_data_size)).toBeCloseTo(100_000_000, 0);
    await sim?.close();
    expect(last((await envelope(start({ version: '7.2.4', knobs: { bucketStatValues: sizes(300_000_000) } }))).couch_docs_data_size)).toBeCloseTo(60_000_000, 0);
    await sim?.close();
    // Fragmentation is computed from the reported data size: round((100e6 − 100e6) / 100e6 × 100) = 0.
    expect(last((await envelope(start({ version: '8.0.0', knobs: { bucketStatValues: sizes(100_000_000) } }))).couch_docs_fragmentation)).toBe(0);
  });
  it('before 7.2 the data size is reported whatever the file size', async () => {
    const env = await envelope(start({ version: '7.0.5', knobs: { bucketStatValues: sizes(100_000_000) } }));
    expect(last(env.couch_docs_data_size)).toBeCloseTo(60_000_000, 0);
    // round((100e6 − 60e6) / 100e6 × 100) = 40.
    expect(last(env.couch_docs_fragmentation)).toBe(40);
  });
});

describe('the range API as menelaus_web_stats answers it', () => {
  it('a node that is down answers "Node is not available"; the others answer', async () => {
    const s = start({ knobs: { nodeFaults: { [N2]: { down: true } } } });
    const [a] = (await range(s, [q('kv_curr_items')])).body as RangeAnswer[];
    expect(a?.errors).toEqual([{ node: N2, error: 'Node is not available' }]);
    expect(nodesOf(a!)).toEqual([N1, N3]);
  });

  it('node faults are settable over HTTP too (POST /_sim/knobs), for runs out of process', async () => {
    const s = start();
    const r = await s.app.inject({ method: 'POST', url: '/_sim/knobs', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ nodeFaults: { [N3]: { down: true } } }) });
    expect(r.statusCode).toBe(200);
    const [a] = (await range(s, [q('kv_curr_items')])).body as RangeAnswer[];
    expect(a?.errors).toEqual([{ node: N3, error: 'Node is not available' }]);
  });

  it('`nodes` asks only those nodes', async () => {
    const s = start({ knobs: { nodeFaults: { [N2]: { down: true } } } });
    const [a] = (await range(s, [q('kv_curr_items', { nodes: [N1, N3] })])).body as RangeAnswer[];
    expect(a?.errors).toEqual([]);
    expect(nodesOf(a!)).toEqual([N1, N3]);
  });

  it('a failed-over node serves no bucket data, only its host\'s', async () => {
    const s = start({ knobs: { nodeFaults: { [N3]: { failedOver: true } } } });
    const [items, cpu] = (await range(s, [q('kv_curr_items'), { metric: [{ label: 'name', value: 'sys_cpu_utilization_rate' }], start: t, end: t }])).body as RangeAnswer[];
    expect(items?.errors).toEqual([]);
    expect(nodesOf(items!)).toEqual([N1, N2]);
    expect(nodesOf(cpu!)).toEqual([N1, N2, N3]);
  });

  it('a slow node past the query\'s timeout answers "Request timed out"; within it, it answers', async () => {
    const s = start({ knobs: { nodeFaults: { [N2]: { slowMs: 400 } } } });
    const [late, patient] = (await range(s, [q('kv_curr_items', { timeout: 50 }), q('kv_curr_items', { timeout: 5000 })])).body as RangeAnswer[];
    expect(late?.errors).toEqual([{ node: N2, error: 'Request timed out' }]);
    expect(nodesOf(late!)).toEqual([N1, N3]);
    expect(patient?.errors).toEqual([]);
    expect(nodesOf(patient!)).toEqual([N1, N2, N3]);
  });

  it('`metric` given as an object is refused with 400, as validate_metric_json does', async () => {
    const s = start();
    expect(await range(s, [{ metric: { name: 'kv_curr_items' }, start: t, end: t }])).toEqual({ status: 400, body: { errors: { metric: 'must be a list of JSON objects' } } });
    expect(await range(s, [{ metric: [], start: t, end: t }])).toEqual({ status: 400, body: { errors: { metric: 'must not be empty' } } });
    expect((await range(s, [{ metric: [{ label: 'name', value: 'x', extra: 1 }] }])).status).toBe(400);
  });

  it('a node whose clock is ahead stamps each value that many seconds later', async () => {
    const s = start();
    const [before] = (await range(s, [q('kv_curr_items', { start: t - 60, end: t - 60, nodes: [N2] })])).body as RangeAnswer[];
    s.ctx.options.knobs.nodeFaults = { [N2]: { clockAheadMs: 60_000 } };
    const [ahead] = (await range(s, [q('kv_curr_items', { nodes: [N2] })])).body as RangeAnswer[];
    expect(ahead?.data[0]?.values[0]?.[1]).toBe(before?.data[0]?.values[0]?.[1]);
  });
});

describe('native names by server line', () => {
  const names = async (version: string): Promise<Set<string>> => {
    const s = start({ version });
    const r = await s.app.inject({ method: 'GET', url: '/metrics', headers: AUTH });
    const out = new Set(r.body.split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.replace(/ [^ ]+$/, '').replace(/bucket="[^"]*",?/, '').replace('{}', '')));
    await s.close();
    sim = undefined;
    return out;
  };
  it('ep_kv_size: kv_memory_used_bytes{for="hashtable"} on 7.0-7.2, kv_ep_key_value_size_bytes from 7.6', async () => {
    for (const v of ['7.0.5', '7.2.4']) {
      const n = await names(v);
      expect(n.has('kv_memory_used_bytes{for="hashtable"}'), v).toBe(true);
      expect([...n].some((x) => x.startsWith('kv_ep_key_value_size_bytes')), v).toBe(false);
      expect(n.has('kv_dcp_producer_count{connection_type="replication"}'), v).toBe(true);
      expect(n.has('kv_vb_itm_memory_bytes{state="active"}'), v).toBe(true);
    }
    for (const v of ['7.6.8', '8.0.0']) {
      const n = await names(v);
      expect(n.has('kv_memory_used_bytes{for="hashtable"}'), v).toBe(false);
      expect([...n].some((x) => x.startsWith('kv_ep_key_value_size_bytes')), v).toBe(true);
      expect([...n].some((x) => x.startsWith('kv_dcp_producer_count') || x.startsWith('kv_vb_itm_memory_bytes')), v).toBe(false);
      expect(n.has('kv_dcp_items_sent{connection_type="replication"}'), v).toBe(true);
    }
  });

  it('view ops: every node counts every view query (max across nodes); rest requests and HLC drift as counters', async () => {
    // Pinned: 9 view queries a second on the bucket, 4 REST requests a second on the base host, 2 drift
    // measurements a second totalling 5 s (5,000,000 µs) on the active vBuckets.
    const s = start({ version: '7.6.2', statSet: 'full', knobs: { bucketStatValues: { couch_views_ops: () => 9, rest_requests: () => 4, ep_active_hlc_drift: () => 5_000_000, ep_active_hlc_drift_count: () => 2 } } });
    const rate = (name: string, extra: unknown[] = []): unknown => ({ metric: [{ label: 'name', value: name }, ...extra], applyFunctions: ['rate'], timeWindow: '1m', start: t, end: t });
    const b = { label: 'bucket', value: 'travel-sample' };
    const [views, rest, drift, count] = (await range(s, [rate('couch_views_ops', [b]), rate('cm_rest_request_leaves_total'), rate('kv_ep_hlc_drift_seconds', [b, { label: 'state', value: 'active' }]), rate('kv_ep_hlc_drift_count', [b, { label: 'state', value: 'active' }])])).body as RangeAnswer[];
    const values = (a: RangeAnswer | undefined): number[] => (a?.data ?? []).map((d) => Number(d.values[0]?.[1]));
    // Each of the three nodes: 9/s (not a third of it), so the envelope's max is 9.
    expect(values(views).map((v) => Math.round(v * 1e6) / 1e6)).toEqual([9, 9, 9]);
    const env = await envelope(s);
    expect(last(env.couch_views_ops)).toBe(9);
    // Each node's own host: the nodes' rates add up to the envelope's sum over the active nodes.
    expect(values(rest).reduce((a, v) => a + v, 0)).toBeCloseTo(last(env.rest_requests), 6);
    // 5,000,000 µs/s over 2 measurements/s: avg_active_timestamp_drift = 5e6 / 1e6 / 2 = 2.5 s, from the merged parts.
    expect(values(drift).reduce((a, v) => a + v, 0)).toBeCloseTo(5, 6);
    expect(values(count).reduce((a, v) => a + v, 0)).toBeCloseTo(2, 6);
    expect(last(env.avg_active_timestamp_drift)).toBe(2.5);
  });

  it('kv_dcp_*: one series per connection type; a counter\'s rate is the envelope\'s ep_dcp_<type>_* (map_dcpagg_stat)', async () => {
    const s = start({ version: '7.2.4', knobs: { bucketStatValues: { ep_dcp_replica_items_sent: () => 30, ep_dcp_2i_count: () => 6 } } });
    const [sent, count] = (await range(s, [
      { ...(q('kv_dcp_items_sent') as object), metric: [{ label: 'name', value: 'kv_dcp_items_sent' }, { label: 'bucket', value: 'travel-sample' }, { label: 'connection_type', value: 'replication' }], applyFunctions: ['rate', 'sum'], nodesAggregation: 'sum', timeWindow: '1m' },
      { ...(q('kv_dcp_connection_count') as object), metric: [{ label: 'name', value: 'kv_dcp_connection_count' }, { label: 'bucket', value: 'travel-sample' }, { label: 'connection_type', value: 'secidx' }], applyFunctions: ['sum'], nodesAggregation: 'sum' },
    ])).body as RangeAnswer[];
    expect(Number(sent?.data[0]?.values[0]?.[1])).toBeCloseTo(30, 6);
    expect(Number(count?.data[0]?.values[0]?.[1])).toBeCloseTo(6, 6);
    const env = await envelope(s);
    expect(last(env.ep_dcp_replica_items_sent)).toBe(30);
  });
});
