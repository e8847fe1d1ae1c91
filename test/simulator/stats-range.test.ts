/**
 * The simulator's 7.0+ statistics: the range API (POST/GET /pools/default/stats/range), each node's native
 * /metrics, /prometheus_sd_config and the version profiles. Oracles: the answer shapes of the documented
 * examples (test/fixtures/couchbase/pools-default-stats-range/), the legacy→native correspondences of
 * ns_server's stat_names_mappings.erl written out by hand below, and the simulator's own legacy envelopes
 * (the same counter through both paths: rate over a window = mean of the envelope's 1-second samples).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { SimOptions, Simulator } from '../../src/simulator/index.js';
import { FIXTURES_DIR, fixture } from '../../src/simulator/fixtures.js';
import { missing } from '../helpers/tools.js';

const auth = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };
/** A whole multiple of 60 s: envelope samples and scrapes line up on it. */
const T0 = 1_700_000_040_000;

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

interface RangeAnswer {
  data: Array<{ metric: Record<string, unknown> & { nodes: string[] }; values: Array<[number, string]> }>;
  errors: Array<{ node: string; error: string }>;
  startTimestamp: number;
  endTimestamp: number;
}

async function start(opts: SimOptions & { at?: number } = {}): Promise<{ base: string; clock: { now: number } }> {
  const clock = { now: opts.at ?? T0 };
  sim = createSimulator({ clock: () => clock.now, ...opts });
  const base = await sim.listen(0);
  return { base, clock };
}

async function post(base: string, body: unknown): Promise<Response> {
  const send = (): Promise<Response> => fetch(`${base}/pools/default/stats/range`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  try {
    return await send();
  } catch (err) {
    // A loaded CI machine has refused a loopback connect to a listening port with EHOSTUNREACH, or reset it: the
    // request is sent again once. What the simulator answers is under test here, not the machine's loopback.
    const code = ((err as Error).cause as { code?: string } | undefined)?.code;
    if (code !== 'EHOSTUNREACH' && code !== 'ECONNRESET') throw err;
    return send();
  }
}

async function range(base: string, queries: unknown[]): Promise<RangeAnswer[]> {
  const r = await post(base, queries);
  expect(r.status).toBe(200);
  return (await r.json()) as RangeAnswer[];
}

const name = (n: string, op = '='): { label: string; value: string; operator: string } => ({ label: 'name', value: n, operator: op });
const label = (l: string, value: string, operator = '='): { label: string; value: string; operator: string } => ({ label: l, value, operator });

/** The single value at time `t` of the only series of an answer. */
function only(a: RangeAnswer, t: number): number {
  expect(a.errors).toEqual([]);
  expect(a.data).toHaveLength(1);
  const v = a.data[0]?.values.find(([ts]) => ts === t);
  expect(v, `no value at ${t}`).toBeDefined();
  return Number(v?.[1]);
}

async function envelope(base: string, path: string): Promise<Record<string, number[]>> {
  const r = await fetch(`${base}${path}`, { headers: auth });
  expect(r.status).toBe(200);
  return ((await r.json()) as { op: { samples: Record<string, number[]> } }).op.samples;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;

describe('range API: answers shaped like the documented ones', () => {
  it('POST answers an array in the order of the queries, each with data, errors, startTimestamp, endTimestamp', async () => {
    const { base } = await start();
    // The documented example's two queries (the first asks a process metric: the index nodes' indexer), and a
    // metric no node has.
    const answers = await range(base, [
      { metric: [name('sysproc_cpu_utilization'), label('proc', 'indexer')], applyFunctions: ['avg'], alignTimestamps: true, step: 15, start: -60 },
      { metric: [name('kv_disk_write_queue'), label('bucket', 'travel-sample')], applyFunctions: ['sum'], step: 60, start: -300 },
      { metric: [name('kv_ep_queue_size'), label('bucket', 'travel-sample')], applyFunctions: ['sum'], step: 60, start: -300 },
      { metric: [name('no_such_metric_anywhere')], applyFunctions: ['avg'], alignTimestamps: true, step: 15, start: -60 },
    ]);
    const doc = fixture<RangeAnswer[]>('pools-default-stats-range/docs-server-7.0plus-multiple-post.json');
    expect(answers).toHaveLength(4);
    for (const a of answers) expect(Object.keys(a).sort()).toEqual(Object.keys(doc[0] as object).sort());
    // cb1 and cb3 run the index service: each one's indexer.
    expect(answers[0]?.data.map((d) => d.metric.nodes)).toEqual([['cb1.cbsim.local:8091'], ['cb3.cbsim.local:8091']]);
    // An unknown metric is no data, not an error (Couchbase: errors only for a node or a refused query).
    expect(answers[3]?.data).toEqual([]);
    expect(answers[3]?.errors).toEqual([]);
    // alignTimestamps: start and end on multiples of the step.
    expect((answers[0]?.startTimestamp ?? 1) % 15).toBe(0);
    const now = T0 / 1000;
    expect(answers[1]?.startTimestamp).toBe(now - 300);
    expect(answers[1]?.endTimestamp).toBe(now);
    // sum drops every label: the metric holds the node only, as in the docs' first example.
    const q = answers[2] as RangeAnswer;
    expect(q.data).toHaveLength(3);
    for (const d of q.data) {
      expect(Object.keys(d.metric)).toEqual(['nodes']);
      expect(d.metric.nodes).toHaveLength(1);
      expect(d.values.map(([t]) => t)).toEqual([now - 300, now - 240, now - 180, now - 120, now - 60, now]);
      for (const [t, v] of d.values) {
        expect(Number.isInteger(t)).toBe(true);
        expect(typeof v).toBe('string');
        expect(Number.isFinite(Number(v))).toBe(true);
      }
    }
    expect(q.data.map((d) => d.metric.nodes[0])).toEqual(['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091', 'cb3.cbsim.local:8091']);
  });

  it('without a function each series keeps its labels and its one node, like the docs\' sys_cpu_sys_rate answer', async () => {
    const { base } = await start();
    const [a] = await range(base, [{ metric: [name('kv_vb_curr_items'), label('bucket', 'beer-sample')], start: -60 }]);
    const doc = fixture<RangeAnswer>('pools-default-stats-range/docs-server-7.0plus-sys_cpu_sys_rate.json');
    // Default step 10 s over the default 60 s: 7 timestamps, as in the docs' answer.
    expect(a?.data[0]?.values).toHaveLength(doc.data[0]?.values.length ?? -1);
    // kv_vb_curr_items has a replica and a pending series on every data node (stats.def.h vb_{state}_curr_items).
    expect(a?.data.map((d) => d.metric)).toEqual(
      ['cb1', 'cb2', 'cb3'].flatMap((n) => [
        { nodes: [`${n}.cbsim.local:8091`], name: 'kv_vb_curr_items', instance: 'kv', bucket: 'beer-sample', state: 'pending' },
        { nodes: [`${n}.cbsim.local:8091`], name: 'kv_vb_curr_items', instance: 'kv', bucket: 'beer-sample', state: 'replica' },
      ]),
    );
  });

  it('nodesAggregation merges the nodes\' series: every node listed, the function named', async () => {
    const { base } = await start();
    const [a, b] = await range(base, [
      { metric: [name('kv_curr_items'), label('bucket', 'travel-sample')], nodesAggregation: 'sum', start: -20 },
      { metric: [name('kv_curr_items'), label('bucket', 'travel-sample')], start: -20 },
    ]);
    expect(a?.data).toHaveLength(1);
    expect(a?.data[0]?.metric).toEqual({
      nodes: ['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091', 'cb3.cbsim.local:8091'],
      aggregationFunction: 'sum',
      name: 'kv_curr_items',
      instance: 'kv',
      bucket: 'travel-sample',
    });
    const t = T0 / 1000;
    const perNode = (b as RangeAnswer).data.map((d) => Number(d.values.find(([ts]) => ts === t)?.[1]));
    expect(perNode).toHaveLength(3);
    expect(only(a as RangeAnswer, t)).toBeCloseTo(perNode[0]! + perNode[1]! + perNode[2]!, 6);
  });

  it('GET /pools/default/stats/range/<metric>/<function>?labels answers one object; an unknown function is 404', async () => {
    const { base } = await start();
    const r = await fetch(`${base}/pools/default/stats/range/kv_ops/irate?bucket=travel-sample&op=get&result=hit&start=-180&step=60`, { headers: auth });
    expect(r.status).toBe(200);
    const a = (await r.json()) as RangeAnswer;
    const doc = fixture<RangeAnswer>('pools-default-stats-range/docs-server-7.0plus-n1ql_requests-irate.json');
    expect(Object.keys(a).sort()).toEqual(Object.keys(doc).sort());
    expect(a.startTimestamp).toBe(T0 / 1000 - 180);
    expect(a.data).toHaveLength(3);
    expect(a.data[0]?.metric).toEqual({ nodes: ['cb1.cbsim.local:8091'], name: 'kv_ops', instance: 'kv', bucket: 'travel-sample', op: 'get', result: 'hit' });
    expect(a.data[0]?.values.map(([t]) => t)).toEqual([0, 60, 120, 180].map((d) => T0 / 1000 - 180 + d));
    // Label values are anchored regexes, as ns_server sends them: `travel` alone matches no bucket.
    const none = (await (await fetch(`${base}/pools/default/stats/range/kv_ops?bucket=travel`, { headers: auth })).json()) as RangeAnswer;
    expect(none.data).toEqual([]);
    expect((await fetch(`${base}/pools/default/stats/range/kv_ops/nosuchfn`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${base}/pools/default/stats/range/`, { headers: auth })).status).toBe(404);
  });

  it('a malformed request is a 400 naming the field; a query Prometheus refuses is an error of that query only', async () => {
    const { base } = await start();
    for (const [body, field] of [
      [{ metric: [name('kv_ops')] }, '_'],
      [[{ applyFunctions: ['rate'] }], 'metric'],
      [[{ metric: [] }], 'metric'],
      [[{ metric: [name('kv_ops')], applyFunctions: ['ratee'] }], 'applyFunctions'],
      [[{ metric: [name('kv_ops')], step: '10x' }], 'step'],
      [[{ metric: [name('kv_ops')], start: -10, end: -20 }], 'end'],
      [[{ metric: [name('kv_ops')], nodes: ['nowhere:8091'] }], 'nodes'],
      [[{ metric: [name('kv_ops')], nodesAggregation: 'median' }], 'nodesAggregation'],
      [[{ metric: [name('kv_ops')], colour: 'red' }], 'colour'],
    ] as const) {
      const r = await post(base, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(((await r.json()) as { errors: Record<string, string> }).errors)).toEqual([field]);
    }
    const [bad, good, misplaced] = await range(base, [
      { metric: [name('kv_ops'), label('bucket', '(', '=~')] },
      { metric: [name('kv_curr_items'), label('bucket', 'travel-sample')], nodesAggregation: 'sum' },
      { metric: [name('kv_ops')], applyFunctions: ['sum', 'rate'] },
    ]);
    expect(bad?.data).toEqual([]);
    expect(bad?.errors.map((e) => e.node)).toEqual(['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091', 'cb3.cbsim.local:8091']);
    expect(bad?.errors[0]?.error).toMatch(/parse error/);
    expect(misplaced?.errors).toHaveLength(3);
    expect(good?.errors).toEqual([]);
    expect(good?.data).toHaveLength(1);
  });

  it('takes the body as curl -d sends it (form content type), as the docs\' example does', async () => {
    const { base } = await start();
    const r = await fetch(`${base}/pools/default/stats/range`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify([{ metric: [name('kv_curr_items'), label('bucket', 'travel-sample')], applyFunctions: ['sum'], step: 60, start: -300 }]),
    });
    expect(r.status).toBe(200);
    const [a] = (await r.json()) as RangeAnswer[];
    expect(a?.data).toHaveLength(3);
    const bad = await fetch(`${base}/pools/default/stats/range`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'metric=kv_ops' });
    expect(bad.status).toBe(400);
  });

  it('a node that is down answers in errors; the others still answer', async () => {
    const { base } = await start({ knobs: { unhealthyNodes: 1 } });
    const [a] = await range(base, [{ metric: [name('kv_curr_items'), label('bucket', 'travel-sample')] }]);
    expect(a?.errors).toEqual([{ node: 'cb2.cbsim.local:8091', error: 'Node is not available' }]);
    expect(a?.data.map((d) => d.metric.nodes[0])).toEqual(['cb1.cbsim.local:8091', 'cb3.cbsim.local:8091']);
  });
});

describe('one model: the same counter through the envelope and through the range API', () => {
  // The legacy names' native queries, written by hand from ns_server's stat_names_mappings.erl
  // (pre_70_stat_to_prom_query) and kv_stats_mappings.
  it('bucket rates: rate over 60 s = the mean of the envelope\'s last 60 one-second samples', async () => {
    const { base } = await start({ scenario: 'demo' });
    const t = T0 / 1000;
    const samples = await envelope(base, '/pools/default/buckets/travel-sample/stats');
    expect(samples.timestamp?.at(-1)).toBe(T0);
    expect(samples.timestamp).toHaveLength(60);
    const rateSum = (metric: unknown[]): unknown => ({ metric, applyFunctions: ['rate', 'sum'], nodesAggregation: 'sum', timeWindow: '1m', start: t, end: t });
    const b = label('bucket', 'travel-sample');
    const [lookup, sets, gets, misses, bg, created, bytesRead] = await range(base, [
      rateSum([name('kv_cmd_lookup'), b]),
      rateSum([name('kv_ops'), b, label('op', ['set', 'incr', 'decr', 'delete', 'del_meta', 'get_meta', 'set_meta', 'set_ret_meta', 'del_ret_meta'] as unknown as string, 'any')]),
      rateSum([name('kv_ops'), b, label('op', 'get')]),
      rateSum([name('kv_ops'), b, label('result', 'miss')]),
      rateSum([name('kv_ep_bg_fetched'), b]),
      rateSum([name('kv_vb_ops_create'), b]),
      rateSum([name('kv_read_bytes'), b]),
    ]);
    // ops = rate(kv_cmd_lookup) + rate(kv_ops{op in set, incr, …}) (the `kv_old_ops` query).
    expect(only(lookup as RangeAnswer, t) + only(sets as RangeAnswer, t)).toBeCloseTo(mean(samples.ops ?? []), 2);
    expect(only(gets as RangeAnswer, t)).toBeCloseTo(mean(samples.cmd_get ?? []), 2);
    // misses = rate(kv_ops{result="miss"}) over every op.
    expect(only(misses as RangeAnswer, t)).toBeCloseTo(mean(samples.misses ?? []), 2);
    expect(only(misses as RangeAnswer, t)).toBeCloseTo(mean(samples.get_misses ?? []), 2);
    expect(only(bg as RangeAnswer, t)).toBeCloseTo(mean(samples.ep_bg_fetched ?? []), 2);
    expect(only(created as RangeAnswer, t)).toBeCloseTo(mean(samples.ep_ops_create ?? []), 2);
    expect(only(bytesRead as RangeAnswer, t)).toBeCloseTo(mean(samples.bytes_read ?? []), 0);
    // The demo's travel-sample misses 4% of gets: a rate that is not zero is being compared.
    expect(only(misses as RangeAnswer, t)).toBeGreaterThan(1);
  });

  it('bucket gauges: the newest envelope sample = the native value at that second, in the native unit', async () => {
    const { base } = await start({ scenario: 'demo' });
    const t = T0 / 1000;
    const s = await envelope(base, '/pools/default/buckets/beer-sample/stats');
    const last = (k: string): number => s[k]?.at(-1) as number;
    const at = (metric: unknown[], agg = 'sum'): unknown => ({ metric: [...metric, label('bucket', 'beer-sample')], nodesAggregation: agg, applyFunctions: ['sum'], start: t, end: t });
    const [items, mem, queue, flusher, age, resident, data, disk] = await range(base, [
      at([name('kv_curr_items')]),
      at([name('kv_mem_used_bytes')]),
      at([name('kv_ep_queue_size')]),
      at([name('kv_ep_flusher_todo')]),
      at([name('kv_vb_queue_age_seconds')]),
      { metric: [name('kv_vb_perc_mem_resident_ratio'), label('state', 'active'), label('bucket', 'beer-sample')], nodesAggregation: 'avg', start: t, end: t },
      at([name('kv_ep_db_data_size_bytes')]),
      at([name('kv_ep_db_file_size_bytes')]),
    ]);
    expect(only(items as RangeAnswer, t)).toBeCloseTo(last('curr_items'), 6);
    expect(only(mem as RangeAnswer, t)).toBeCloseTo(last('mem_used'), 0);
    // disk_write_queue = kv_ep_queue_size + kv_ep_flusher_todo; the demo grows beer-sample's queue.
    expect(only(queue as RangeAnswer, t) + only(flusher as RangeAnswer, t)).toBeCloseTo(last('disk_write_queue'), 6);
    expect(last('disk_write_queue')).toBeGreaterThan(0);
    // vb_total_queue_age (ms) = sum(kv_vb_queue_age_seconds) × 1000.
    expect(only(age as RangeAnswer, t) * 1000).toBeCloseTo(last('vb_total_queue_age'), 6);
    // vb_active_resident_items_ratio (%) = kv_vb_perc_mem_resident_ratio × 100.
    expect(only(resident as RangeAnswer, t) * 100).toBeCloseTo(last('vb_active_resident_items_ratio'), 6);
    // 7.2+ (this is 7.6.5): each node's file is under 128 KiB × its vBuckets, so ns_server reports the file size as
    // couch_docs_data_size (the min-file-size rule); the node's native kv_ep_db_data_size_bytes stays the data size.
    expect(only(disk as RangeAnswer, t)).toBeCloseTo(last('couch_docs_disk_size'), 0);
    expect(last('couch_docs_data_size')).toBeCloseTo(last('couch_docs_disk_size'), 0);
    expect(only(data as RangeAnswer, t)).toBeLessThan(last('couch_docs_data_size'));
  });

  it('histograms, node-level and host stats: the averages, connections and sys_* gauges of the envelope', async () => {
    const { base } = await start({ scenario: 'demo' });
    const t = T0 / 1000;
    const s = await envelope(base, '/pools/default/buckets/travel-sample/stats');
    const other = await envelope(base, '/pools/default/buckets/beer-sample/stats');
    const b = label('bucket', 'travel-sample');
    const inc = (metric: unknown[]): unknown => ({ metric, applyFunctions: ['increase', 'sum'], nodesAggregation: 'sum', timeWindow: '1m', start: t, end: t });
    const [bgSum, bgCount, updSum, updCount, comSum, comCount, conns, cpu] = await range(base, [
      inc([name('kv_bg_wait_seconds_sum'), b]),
      inc([name('kv_bg_wait_seconds_count'), b]),
      inc([name('kv_disk_seconds_sum'), b, label('op', 'update')]),
      inc([name('kv_disk_seconds_count'), b, label('op', 'update')]),
      inc([name('kv_disk_seconds_sum'), b, label('op', 'commit')]),
      inc([name('kv_disk_seconds_count'), b, label('op', 'commit')]),
      { metric: [name('kv_curr_connections')], nodesAggregation: 'sum', start: t, end: t },
      { metric: [name('sys_cpu_utilization_rate')], start: t, end: t },
    ]);
    // avg_bg_wait_time (µs) = rate(kv_bg_wait_seconds_sum) / rate(kv_bg_wait_seconds_count) × 1e6; the demo's
    // travel-sample misses 4% of its gets, so the count is not zero.
    expect(only(bgCount as RangeAnswer, t)).toBeCloseTo(60 * mean(s.bg_wait_count ?? []), 1);
    expect(only(bgCount as RangeAnswer, t)).toBeGreaterThan(60);
    expect((only(bgSum as RangeAnswer, t) / only(bgCount as RangeAnswer, t)) * 1e6).toBeCloseTo(s.avg_bg_wait_time?.at(-1) as number, 3);
    expect((only(updSum as RangeAnswer, t) / only(updCount as RangeAnswer, t)) * 1e6).toBeCloseTo(s.avg_disk_update_time?.at(-1) as number, 3);
    // avg_disk_commit_time is in seconds.
    expect(only(comSum as RangeAnswer, t) / only(comCount as RangeAnswer, t)).toBeCloseTo(s.avg_disk_commit_time?.at(-1) as number, 6);
    // kv_curr_connections is per node for every bucket: the nodes' sum is every bucket's curr_connections.
    expect(only(conns as RangeAnswer, t)).toBeCloseTo(s.curr_connections?.at(-1) as number, 6);
    expect(other.curr_connections?.at(-1)).toBe(s.curr_connections?.at(-1));
    // A host stat: each node reports its own machine's (the demo's failed-over third node too: it still runs);
    // every bucket's envelope shows the same value: the max over the active nodes for cpu_utilization_rate
    // (menelaus_stats get_aggregate_method), not the failed-over node's.
    expect(cpu?.data).toHaveLength(3);
    expect(cpu?.data[0]?.metric).toEqual({ nodes: ['cb1.cbsim.local:8091'], name: 'sys_cpu_utilization_rate', instance: 'ns_server', category: 'system' });
    const perNode = (cpu?.data ?? []).map((d) => Number(d.values[0]?.[1]));
    expect(new Set(perNode).size).toBe(3);
    expect(s.cpu_utilization_rate?.at(-1)).toBeCloseTo(Math.max(perNode[0]!, perNode[1]!), 3);
    expect(other.cpu_utilization_rate?.at(-1)).toBe(s.cpu_utilization_rate?.at(-1));
  });

  it('per node: the node\'s envelope and the node\'s native series agree', async () => {
    const { base } = await start();
    const t = T0 / 1000;
    const node = 'cb2.cbsim.local:8091';
    const s = await envelope(base, `/pools/default/buckets/travel-sample/nodes/${encodeURIComponent(node)}/stats`);
    const [gets, items] = await range(base, [
      { metric: [name('kv_ops'), label('bucket', 'travel-sample'), label('op', 'get')], applyFunctions: ['rate', 'sum'], nodes: [node], start: t, end: t },
      { metric: [name('kv_curr_items'), label('bucket', 'travel-sample')], nodes: [node], start: t, end: t },
    ]);
    expect(gets?.data[0]?.metric.nodes).toEqual([node]);
    expect(only(gets as RangeAnswer, t)).toBeCloseTo(mean(s.cmd_get ?? []), 2);
    expect(only(items as RangeAnswer, t)).toBeCloseTo(s.curr_items?.at(-1) as number, 2);
  });

  it('a rate knob (bucketStatValues) reaches both paths', async () => {
    // 7 ops per second, by hand: over any window the native counter grows by 7 per second.
    const { base } = await start({ knobs: { bucketStatValues: { cmd_set: () => 7 } } });
    const t = T0 / 1000;
    const [inc] = await range(base, [{ metric: [name('kv_ops'), label('op', 'set'), label('bucket', 'beer-sample|travel-sample', '=~')], applyFunctions: ['increase', 'sum'], nodesAggregation: 'sum', timeWindow: '2m', start: t, end: t }]);
    // Two buckets × 7/s × 120 s.
    expect(only(inc as RangeAnswer, t)).toBeCloseTo(2 * 7 * 120, 6);
  });

  it('counters stay exact hours later, for recent windows and for old ones', async () => {
    // 7 sets per second in every bucket, by hand; a varying rate (get hits) checked against a sum worked out here.
    const { base, clock } = await start({ knobs: { bucketStatValues: { cmd_set: () => 7, get_hits: (t: number) => (t / 1000) % 10 } } });
    clock.now = T0 + 5 * 3_600_000;
    const now = T0 / 1000 + 5 * 3600;
    const inc = (n: string, op: string, at: number, w: string): unknown => ({
      metric: [name(n), label('op', op), label('result', op === 'get' ? 'hit' : ''), label('bucket', 'travel-sample')],
      applyFunctions: ['increase', 'sum'],
      nodesAggregation: 'sum',
      timeWindow: w,
      start: at,
      end: at,
    });
    const old = T0 / 1000 + 1800;
    const [recent, early, gets] = await range(base, [inc('kv_ops', 'set', now, '2m'), inc('kv_ops', 'set', old, '10m'), inc('kv_ops', 'get', old + 35, '1m')]);
    expect(only(recent as RangeAnswer, now)).toBeCloseTo(7 * 120, 6);
    expect(only(early as RangeAnswer, old)).toBeCloseTo(7 * 600, 6);
    // The window [old-25, old+35] holds the scrapes old-20 … old+30: the counter gained (s mod 10) for every
    // second s in (old-20, old+30]; Prometheus extrapolates 5 s at each end (within 1.1 scrape intervals): × 60/50.
    let sum = 0;
    for (let s = old - 20 + 1; s <= old + 30; s++) sum += s % 10;
    const scrapes = 50;
    expect(only(gets as RangeAnswer, old + 35)).toBeCloseTo((sum * 60) / scrapes, 6);
  });

  it('XDCR: each node\'s per-stat envelope = that node\'s native goxdcr series (latencies ms → s)', async () => {
    const { base, clock } = await start({ scenario: 'demo' });
    // Four minutes after start: the replications have been writing for the whole window, and the demo's flapping
    // node (unhealthy 20-140 s, warming up until 170 s) has been back for more than that window.
    clock.now = T0 + 240_000;
    const t = T0 / 1000 + 240;
    const tasks = (await (await fetch(`${base}/pools/default/tasks`, { headers: auth })).json()) as Array<{ type: string; id: string; source: string }>;
    const rep = tasks.find((x) => x.type === 'xdcr') as { id: string; source: string };
    const [uuid, , target] = rep.id.split('/') as [string, string, string];
    const stat = async (n: string): Promise<Record<string, number[]>> => {
      const ep = encodeURIComponent(`replications/${rep.id}/${n}`);
      const r = await fetch(`${base}/pools/default/buckets/${encodeURIComponent(rep.source)}/stats/${ep}`, { headers: auth });
      return ((await r.json()) as { nodeStats: Record<string, number[]> }).nodeStats;
    };
    const labels = [label('sourceBucketName', rep.source), label('targetClusterUUID', uuid), label('targetBucketName', target), label('pipelineType', 'Main')];
    const [left, written, latency] = await range(base, [
      { metric: [name('xdcr_changes_left_total'), ...labels], start: t, end: t },
      { metric: [name('xdcr_docs_written_total'), ...labels], start: t, end: t },
      { metric: [name('xdcr_wtavg_docs_latency_seconds'), ...labels], start: t, end: t },
    ]);
    for (const [answer, legacy, scale] of [
      [left, await stat('changes_left'), 1],
      [written, await stat('docs_written'), 1],
      [latency, await stat('wtavg_docs_latency'), 1000],
    ] as const) {
      // The demo's third node was failed over: it serves no replication data, and the envelope gathers none from it.
      expect(answer?.data).toHaveLength(2);
      expect(Object.keys(legacy)).toHaveLength(2);
      for (const d of answer?.data ?? []) {
        const node = d.metric.nodes[0] as string;
        expect(Number(d.values[0]?.[1]) * scale).toBeCloseTo(legacy[node]?.at(-1) as number, 6);
      }
    }
    // XDCR rates: the mean of a node's 60 one-second samples = rate(counter[1m]) on that node.
    const [written1m, bytes1m] = await range(base, [
      { metric: [name('xdcr_docs_written_total'), ...labels], applyFunctions: ['rate'], start: t, end: t },
      { metric: [name('xdcr_data_replicated_bytes'), ...labels], applyFunctions: ['rate'], start: t, end: t },
    ]);
    for (const [answer, legacy] of [
      [written1m, await stat('rate_replicated')],
      [bytes1m, await stat('bandwidth_usage')],
    ] as const) {
      // The demo's third node was failed over: it serves no replication data, and the envelope gathers none from it.
      expect(answer?.data).toHaveLength(2);
      expect(Object.keys(legacy)).toHaveLength(2);
      for (const d of answer?.data ?? []) {
        const samples = legacy[d.metric.nodes[0] as string] ?? [];
        expect(samples).toHaveLength(60);
        expect(Number(d.values[0]?.[1])).toBeCloseTo(mean(samples), 6);
        expect(mean(samples)).toBeGreaterThan(1);
      }
    }
    // The demo's first replication is growing: a non-trivial backlog is compared.
    expect(Object.values(await stat('changes_left')).map((v) => v.at(-1) as number).reduce((a, v) => a + v, 0)).toBeGreaterThan(1000);
  });
});

describe('version profiles', () => {
  it('a 6.x cluster reports 6.6.5 everywhere and answers the 7.0+ routes 404, as a 6.x cluster manager does', async () => {
    const { base } = await start({ version: '6.6.5' });
    const pools = (await (await fetch(`${base}/pools`, { headers: auth })).json()) as { implementationVersion: string };
    expect(pools.implementationVersion).toBe('6.6.5-10080-enterprise');
    const pd = (await (await fetch(`${base}/pools/default`, { headers: auth })).json()) as { clusterCompatibility: number; nodes: Array<{ version: string; clusterCompatibility: number }> };
    // 6 * 65536 + 6, the encoding of the captured payloads (458752 = 7.0, 524288 = 8.0).
    expect(pd.clusterCompatibility).toBe(393222);
    expect(pd.nodes.map((n) => n.version)).toEqual(['6.6.5-10080-enterprise', '6.6.5-10080-enterprise', '6.6.5-10080-enterprise']);
    expect(pd.nodes.map((n) => n.clusterCompatibility)).toEqual([393222, 393222, 393222]);
    // The bucket list's node entries say the same.
    const buckets = (await (await fetch(`${base}/pools/default/buckets`, { headers: auth })).json()) as Array<{ nodes: Array<{ version: string; clusterCompatibility: number }> }>;
    expect(buckets[0]?.nodes.map((n) => [n.version, n.clusterCompatibility])).toEqual([
      ['6.6.5-10080-enterprise', 393222],
      ['6.6.5-10080-enterprise', 393222],
      ['6.6.5-10080-enterprise', 393222],
    ]);
    expect((await post(base, [{ metric: [name('kv_ops')] }])).status).toBe(404);
    for (const path of ['/pools/default/stats/range/kv_ops', '/metrics', '/_node/cb1.cbsim.local%3A8091/metrics', '/prometheus_sd_config']) {
      expect((await fetch(`${base}${path}`, { headers: auth })).status, path).toBe(404);
    }
    // The envelope is served as before.
    expect((await envelope(base, '/pools/default/buckets/travel-sample/stats')).ops).toHaveLength(60);
  });

  it.each([
    ['7.2.4', '7.2.4-7070-enterprise', 458754, true],
    ['8.0.0', '8.0.0-21113-enterprise', 524288, true],
    ['7.1.6', '7.1.6-3955-enterprise', 458753, false],
  ] as const)('%s reports %s, compatibility %i; range API yes; prometheus_sd_config: %s', async (version, full, compat, sd) => {
    const { base } = await start({ version });
    expect(((await (await fetch(`${base}/pools`, { headers: auth })).json()) as { implementationVersion: string }).implementationVersion).toBe(full);
    const pd = (await (await fetch(`${base}/pools/default`, { headers: auth })).json()) as { clusterCompatibility: number; nodes: Array<{ version: string; clusterCompatibility: number }> };
    expect(pd.clusterCompatibility).toBe(compat);
    expect(pd.nodes[0]?.version).toBe(full);
    expect(pd.nodes[0]?.clusterCompatibility).toBe(compat);
    expect((await post(base, [{ metric: [name('kv_ops')] }])).status).toBe(200);
    expect((await fetch(`${base}/prometheus_sd_config`, { headers: auth })).status).toBe(sd ? 200 : 404);
  });

  it('8.0 no longer serves xdcr_docs_rep_queue_total (absent from its metadata); 7.x does', async () => {
    for (const [version, count] of [['7.2.4', 3], ['8.0.0', 0]] as const) {
      const { base } = await start({ version });
      const [a] = await range(base, [{ metric: [name('xdcr_docs_rep_queue_total'), label('sourceBucketName', 'travel-sample')], nodesAggregation: 'sum', applyFunctions: ['sum'] }]);
      expect(a?.data.length ? 3 : 0, version).toBe(count);
      await sim?.close();
      sim = undefined;
    }
  });

  it('a version that is not X.Y.Z is refused', () => {
    expect(() => createSimulator({ version: '7.2' })).toThrow(/X\.Y\.Z/);
  });
});

describe('faults on the 7.0+ routes', () => {
  const fault = async (base: string, rule: Record<string, unknown>): Promise<void> => {
    const r = await fetch(`${base}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rule) });
    expect(r.status).toBe(200);
  };
  const queries = [
    { metric: [name('kv_curr_items'), label('bucket', 'travel-sample')] },
    { metric: [name('kv_mem_used_bytes'), label('bucket', 'travel-sample')] },
    { metric: [name('kv_ep_max_size'), label('bucket', 'travel-sample')] },
  ];

  it('partial_errors: one query of the batch loses one node\'s series and says so; the other queries are whole', async () => {
    const { base } = await start();
    await fault(base, { match: '/pools/default/stats/range', kind: 'partial_errors', query: 1, node: 'cb3.cbsim.local:8091', times: 1 });
    const [a, b, c] = await range(base, queries);
    expect(a?.data).toHaveLength(3);
    expect(c?.data).toHaveLength(3);
    expect(a?.errors).toEqual([]);
    expect(b?.data.map((d) => d.metric.nodes[0])).toEqual(['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091']);
    expect(b?.errors).toEqual([{ node: 'cb3.cbsim.local:8091', error: 'Request timed out' }]);
    // times: 1: the next answer is whole again.
    const again = await range(base, queries);
    expect(again.map((x) => x.errors)).toEqual([[], [], []]);
  });

  it('partial_errors without a node: every node of that query fails, no data; on GET it is query 0', async () => {
    const { base } = await start();
    await fault(base, { match: '/pools/default/stats/range', kind: 'partial_errors', error: 'Unexpected server error', times: 1 });
    const [a, b] = await range(base, queries);
    expect(a?.data).toEqual([]);
    expect(a?.errors.map((e) => e.error)).toEqual(['Unexpected server error', 'Unexpected server error', 'Unexpected server error']);
    expect(b?.errors).toEqual([]);
    await fault(base, { match: '/pools/default/stats/range/*', kind: 'partial_errors', node: 'cb1.cbsim.local:8091', times: 1 });
    const g = (await (await fetch(`${base}/pools/default/stats/range/kv_curr_items?bucket=travel-sample`, { headers: auth })).json()) as RangeAnswer;
    expect(g.errors).toEqual([{ node: 'cb1.cbsim.local:8091', error: 'Request timed out' }]);
    expect(g.data).toHaveLength(2);
  });

  it('status, bad body and hang apply to the range API and to a node\'s /metrics', async () => {
    const { base } = await start();
    await fault(base, { match: '/pools/default/stats/range', kind: 'status', status: 500, times: 1 });
    expect((await post(base, queries)).status).toBe(500);
    await fault(base, { match: '/pools/default/stats/range', kind: 'invalid_json', times: 1 });
    const bad = await post(base, queries);
    expect(bad.status).toBe(200);
    await expect(bad.json()).rejects.toThrow();
    await fault(base, { match: '/_node/:node/metrics', kind: 'status', status: 503, times: 1 });
    expect((await fetch(`${base}/_node/cb2.cbsim.local%3A8091/metrics`, { headers: auth })).status).toBe(503);
    await fault(base, { match: '/pools/default/stats/range', kind: 'hang', times: 1 });
    // A hung answer never comes: the client's own deadline ends the request.
    const hung = fetch(`${base}/pools/default/stats/range`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(queries), signal: AbortSignal.timeout(300) });
    await expect(hung).rejects.toThrow(/abort|timeout/i);
    const f = (await (await fetch(`${base}/_sim/faults`)).json()) as { rules: unknown[] };
    expect(f.rules).toEqual([]);
  });
});

/** Parse a Prometheus text exposition by hand: families (TYPE, HELP) and samples. */
function parseExposition(text: string): { types: Map<string, string>; samples: Array<{ name: string; labels: Record<string, string>; value: number }> } {
  const types = new Map<string, string>();
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ')) continue;
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) {
      types.set(t[1] as string, t[2] as string);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(m, line).not.toBeNull();
    const labels: Record<string, string> = {};
    for (const l of (m?.[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    samples.push({ name: m?.[1] as string, labels, value: Number(m?.[3]) });
  }
  return { types, samples };
}

describe('native /metrics per node', () => {
  it('each data node exposes its own share; the shares add up to the bucket\'s envelope', async () => {
    const { base } = await start({ scenario: 'demo' });
    const nodes = ['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091', 'cb3.cbsim.local:8091'];
    const expos = await Promise.all(nodes.map(async (n) => {
      const r = await fetch(`${base}/_node/${encodeURIComponent(n)}/metrics`, { headers: auth });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return parseExposition(await r.text());
    }));
    const value = (i: number, name: string, labels: Record<string, string>): number => {
      const s = expos[i]?.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
      expect(s, `${name} ${JSON.stringify(labels)} on node ${i}`).toHaveLength(1);
      return s?.[0]?.value as number;
    };
    const env = await envelope(base, '/pools/default/buckets/travel-sample/stats');
    // The demo's third node was failed over: it is no longer one of the bucket's servers and serves no bucket
    // data, only its host's stats; the two others hold the whole bucket.
    const items = [0, 1].map((i) => value(i, 'kv_curr_items', { bucket: 'travel-sample' }));
    expect(items[0]! + items[1]!).toBeCloseTo(env.curr_items?.at(-1) as number, 6);
    expect(expos[2]?.samples.filter((x) => x.name === 'kv_curr_items')).toEqual([]);
    expect(expos[2]?.samples.filter((x) => x.name === 'sys_cpu_utilization_rate')).toHaveLength(1);
    // Uneven shares, as a real vBucket map: the nodes do not hold the same amount.
    expect(new Set(items.map((v) => Math.round(v))).size).toBe(2);
    // A ratio is each node's own, not split.
    for (const i of [0, 1]) expect(value(i, 'kv_vb_perc_mem_resident_ratio', { bucket: 'travel-sample', state: 'active' }) * 100).toBeCloseTo(env.vb_active_resident_items_ratio?.at(-1) as number, 2);
    // Types as the 8.0 metadata gives them, XDCR labels as goxdcr's.
    expect(expos[0]?.types.get('kv_cmd_lookup')).toBe('counter');
    expect(expos[0]?.types.get('kv_curr_items')).toBe('gauge');
    expect(expos[0]?.types.get('xdcr_docs_written_total')).toBe('counter');
    const x = expos[0]?.samples.find((s) => s.name === 'xdcr_changes_left_total');
    expect(Object.keys(x?.labels ?? {}).sort()).toEqual(['pipelineType', 'sourceBucketName', 'targetBucketName', 'targetClusterUUID']);
    // /metrics is the node the simulator answers as (the first); basic auth is required, as on 8091.
    expect(await (await fetch(`${base}/metrics`, { headers: auth })).text()).toBe(await (await fetch(`${base}/_node/${encodeURIComponent(nodes[0] as string)}/metrics`, { headers: auth })).text());
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/_node/nowhere%3A8091/metrics`, { headers: auth })).status).toBe(404);
  });

  it('a node that is down does not answer its scrape; the others do', async () => {
    const { base } = await start({ knobs: { unhealthyNodes: 1 } });
    await expect(fetch(`${base}/_node/cb2.cbsim.local%3A8091/metrics`, { headers: auth })).rejects.toThrow();
    expect((await fetch(`${base}/_node/cb3.cbsim.local%3A8091/metrics`, { headers: auth })).status).toBe(200);
  });

  it('every native name served is in Couchbase\'s metadata with that type (one 7.x XDCR name excepted)', async () => {
    const { base } = await start({ version: '8.0.0' });
    const meta: Record<string, { type: string }> = {};
    // The services' files too: the query, index, Search and eventing series (the default cluster runs no analytics).
    for (const f of ['kv', 'goxdcr', 'cm', 'n1ql', 'index', 'fts', 'eventing']) Object.assign(meta, JSON.parse(readFileSync(join(FIXTURES_DIR, 'native', `8.0-${f}_metrics_metadata.json`), 'utf8')));
    const { types } = parseExposition(await (await fetch(`${base}/metrics`, { headers: auth })).text());
    expect(types.size).toBeGreaterThan(50);
    for (const [n, t] of types) expect(meta[n]?.type, n).toBe(t);
    // The XDCR names are those of the cross reference (pre-7.0 name → 7.0+ name).
    const xref = new Map(readFileSync(join(FIXTURES_DIR, 'native', 'xdcr_cross_reference.csv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split(',') as [string, string]));
    for (const [legacy, native] of [['changes_left', 'xdcr_changes_left_total'], ['docs_written', 'xdcr_docs_written_total'], ['wtavg_docs_latency', 'xdcr_wtavg_docs_latency_seconds'], ['data_replicated', 'xdcr_data_replicated_bytes']]) {
      expect(xref.get(legacy as string)).toBe(native);
      expect(types.has(native as string), native).toBe(true);
    }
  });

  it.skipIf(missing('promtool'))('parses with promtool (its only complaints are lint about Couchbase\'s own names)', async () => {
    const { base } = await start();
    const text = await (await fetch(`${base}/_node/cb2.cbsim.local%3A8091/metrics`, { headers: auth })).text();
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // Exit 1 is a parse error; 3 is lint only (counters without _total, camelCase XDCR labels: Couchbase's).
    expect(r.stderr + r.stdout).not.toMatch(/error while linting/);
    expect([0, 3]).toContain(r.status);
  });
});

describe('GET /prometheus_sd_config (7.2.1+)', () => {
  it('lists every active node on the secure port by default, as JSON; yaml and cluster labels on request', async () => {
    const { base } = await start({ version: '7.2.4' });
    const json = (await (await fetch(`${base}/prometheus_sd_config`, { headers: auth })).json()) as unknown;
    expect(json).toEqual([{ targets: ['cb1.cbsim.local:18091', 'cb2.cbsim.local:18091', 'cb3.cbsim.local:18091'] }]);
    const yaml = await (await fetch(`${base}/prometheus_sd_config?type=yaml&port=insecure&clusterLabels=uuidAndName`, { headers: auth })).text();
    expect(yaml).toBe(
      "- targets:\n  - 'cb1.cbsim.local:8091'\n  - 'cb2.cbsim.local:8091'\n  - 'cb3.cbsim.local:8091'\n  labels:\n    cluster_uuid: '8ebd144e243c942109c19842bdec9cdd'\n    cluster_name: 'cbsim'\n",
    );
    expect((await fetch(`${base}/prometheus_sd_config?type=xml`, { headers: auth })).status).toBe(400);
  });

  it('knob prometheusSdLocal: one target group per node, each scraping that node\'s exposition on the simulator', async () => {
    const { base } = await start({ knobs: { prometheusSdLocal: true } });
    const groups = (await (await fetch(`${base}/prometheus_sd_config`, { headers: auth })).json()) as Array<{ targets: string[]; labels: Record<string, string> }>;
    expect(groups).toHaveLength(3);
    for (const g of groups) {
      expect(g.targets).toEqual([base.replace('http://', '')]);
      const r = await fetch(`${base}${g.labels.__metrics_path__}`, { headers: auth });
      expect(r.status).toBe(200);
      expect(g.labels.__metrics_path__).toBe(`/_node/${g.labels.instance}/metrics`);
    }
  });
});
