/**
 * Each node asked by its own version (issue 37 §3): nodes grouped by server line, one range fetch per line with
 * `nodes` = that line's nodes mid-upgrade (one fetch, no `nodes`, for a single-version cluster), and the lines'
 * values merged as ns_server merges nodes (summed; max for cpu_utilization_rate; ratios from the summed sides).
 * Expected values are computed by hand from the per-line formulas (ns_server's), not from the tables.
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import { describe, expect, it } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { xdcrCollector } from '../../src/collectors/xdcr.js';
import { linesBucketValues } from '../../src/stats/range-source.js';
import { nativeMapFor } from '../../src/stats/native-map.js';
import type { ServerLine } from '../../src/stats/native-map.js';
import { groupByLine, mergedValue, servingLineOf, withRatioParts } from '../../src/stats/node-lines.js';
import type { LineGroups } from '../../src/stats/node-lines.js';
import { groupSeries, kvItemOf, parseQueryAnswer } from '../../src/stats/range.js';
import type { QueryResult } from '../../src/stats/range.js';
import { collect, fakeClient } from '../helpers/collect.js';

describe('groupByLine', () => {
  it('groups the bucket list\'s nodes by the line of their version, oldest line first', () => {
    const nodes = [
      { hostname: 'a:8091', version: '7.2.4-7000-enterprise', clusterMembership: 'active' },
      { hostname: 'b:8091', version: '7.6.8-6615-enterprise', clusterMembership: 'active' },
      { hostname: 'c:8091', version: '7.6.8-6615-enterprise', clusterMembership: 'active' },
      { hostname: 'a:8091', version: '7.2.4-7000-enterprise', clusterMembership: 'active' },
    ];
    expect(groupByLine(nodes)).toEqual([
      { line: '7.2', nodes: ['a:8091'] },
      { line: '7.6.8', nodes: ['b:8091', 'c:8091'] },
    ]);
  });
  it('one line for a single-version cluster; a node of unknown version goes with the oldest line; inactive nodes are left out', () => {
    expect(groupByLine([{ hostname: 'a', version: '8.0.0' }, { hostname: 'b', version: '8.0.1' }])).toEqual([{ line: '8.0', nodes: ['a', 'b'] }]);
    expect(groupByLine([{ hostname: 'a', version: '7.1.4' }, { hostname: 'b' }, { hostname: 'c', version: '7.6.2' }])).toEqual([
      { line: '7.1', nodes: ['a', 'b'] },
      { line: '7.6', nodes: ['c'] },
    ]);
    expect(groupByLine([{ hostname: 'a', version: '7.6.2', clusterMembership: 'active' }, { hostname: 'b', version: '7.2.0', clusterMembership: 'inactiveFailed' }])).toEqual([{ line: '7.6', nodes: ['a'] }]);
  });
  it('no version anywhere: the default line (7.6)', () => {
    expect(groupByLine([{ hostname: 'a' }])).toEqual([{ line: '7.6', nodes: ['a'] }]);
    expect(groupByLine([])).toEqual([{ line: '7.6', nodes: [] }]);
  });
});

const lvl = (node: string, v: number, labels: Record<string, string> = {}) => ({ metric: { nodes: [node], bucket: 'b', ...labels }, values: [[0, String(v)], [10, String(v)]] });
const ctr = (node: string, v: number, labels: Record<string, string> = {}) => ({ metric: { nodes: [node], bucket: 'b', ...labels }, values: [[0, '0'], [10, String(v)]] });
const host = (node: string, a: number, b: number) => ({ metric: { nodes: [node] }, values: [[0, String(a)], [10, String(b)]] });
const q = (metric: string, data: unknown[]): QueryResult => parseQueryAnswer(metric, { data, errors: [] });

function line(l: ServerLine, nodes: string[], answers: QueryResult[]): LineGroups {
  const table = nativeMapFor(l);
  return { table, nodes, groups: groupSeries(withRatioParts(table.kv), answers, kvItemOf, new CounterMemo()) };
}

describe('mergedValue: a cluster mid-upgrade (n1 on 7.2, n2 on 7.6.8)', () => {
  // Each line's answer holds only its own node (the query's `nodes`); n2 also serves the old hashtable series, which
  // its table does not read.
  const l72 = line('7.2', ['n1'], [
    q('kv_memory_used_bytes', [lvl('n1', 700, { for: 'hashtable' })]),
    q('kv_ep_bg_fetched', [ctr('n1', 5)]),
    q('kv_cmd_lookup', [ctr('n1', 50)]),
    q('kv_ops', [ctr('n1', 40, { op: 'get', result: 'hit' }), ctr('n1', 10, { op: 'get', result: 'miss' })]),
    q('sys_cpu_utilization_rate', [host('n1', 30, 30)]),
    q('kv_curr_items', [lvl('n1', 1000)]),
  ]);
  const l768 = line('7.6.8', ['n2'], [
    q('kv_memory_used_bytes', [lvl('n2', 999, { for: 'hashtable' })]),
    q('kv_ep_key_value_size_bytes', [lvl('n2', 900)]),
    q('kv_ep_bg_fetched', [ctr('n2', 7)]),
    q('kv_cmd_lookup', [ctr('n2', 70)]),
    q('kv_ops', [ctr('n2', 80, { op: 'get', result: 'hit' }), ctr('n2', 20, { op: 'get', result: 'miss' })]),
    q('sys_cpu_utilization_rate', [host('n2', 70, 70)]),
    q('kv_curr_items', [lvl('n2', 500)]),
  ]);
  const lines = [l72, l768];
  it('a level: each node by its own line\'s name, summed (700 + 900)', () => {
    expect(mergedValue('kv', 'ep_kv_size', lines, 'b', undefined)).toBe(1600);
    expect(mergedValue('kv', 'curr_items', lines, 'b', undefined)).toBe(1500);
  });
  it('a per-node value is that node\'s line\'s', () => {
    expect(mergedValue('kv', 'ep_kv_size', lines, 'b', 'n1')).toBe(700);
    expect(mergedValue('kv', 'ep_kv_size', lines, 'b', 'n2')).toBe(900);
    // n1 (7.2): 100 × 5 / 50; n2 (7.6.8): 100 × 20 / 100.
    expect(mergedValue('kv', 'ep_cache_miss_rate', lines, 'b', 'n1')).toBeCloseTo(10, 9);
    expect(mergedValue('kv', 'ep_cache_miss_rate', lines, 'b', 'n2')).toBeCloseTo(20, 9);
  });
  it('a ratio after the merge, each line\'s sides by its own formula: 100 × (0.5 + 2) / (5 + 10) per second', () => {
    expect(mergedValue('kv', 'ep_cache_miss_rate', lines, 'b', undefined)).toBeCloseTo((100 * 2.5) / 15, 9);
    // hit_ratio: 100 × (4 + 8) / (5 + 10).
    expect(mergedValue('kv', 'hit_ratio', lines, 'b', undefined)).toBeCloseTo(80, 9);
  });
  it('cpu_utilization_rate: the max over the nodes (get_aggregate_method)', () => {
    expect(mergedValue('kv', 'cpu_utilization_rate', lines, 'b', undefined)).toBe(70);
  });
  it('the values over both lines have both lines\' stats', () => {
    const values = linesBucketValues(lines, 'b', undefined)?.values;
    expect(values?.get('ep_kv_size')).toEqual(1600);
    // 7.2-only: vb_active_itm_memory is a stat of the merged values (no n1 series here: no value).
    expect(values?.has('vb_active_itm_memory')).toBe(true);
  });
});

describe('mergedValue mid-upgrade across 7.6.8: a computed ratio once, with the serving node\'s formula', () => {
  // ns_server menelaus_stats computed_stats_lazy_proplist: the node that serves the request computes
  // ep_cache_miss_rate from the stats merged over the nodes, with its own version's formula (EPCacheMissRatio:
  // ep_bg_fetched / cmd_lookup to 7.6.7; get_misses / cmd_get from 7.6.8). Per second over the 10 s window:
  // n1 (7.2) bg_fetched 0.5, cmd_lookup 5, get misses 1, gets 5; n2 (7.6.8) bg_fetched 0.7, cmd_lookup 7, misses 2, gets 10.
  const answers = (node: string, bg: number, lookup: number, hit: number, miss: number): QueryResult[] => [
    q('kv_ep_bg_fetched', [ctr(node, bg)]),
    q('kv_cmd_lookup', [ctr(node, lookup)]),
    q('kv_ops', [ctr(node, hit, { op: 'get', result: 'hit' }), ctr(node, miss, { op: 'get', result: 'miss' })]),
  ];
  const linesServedBy = (serving: ServerLine): { lines: LineGroups[]; table: ReturnType<typeof nativeMapFor> } => {
    const table = nativeMapFor(serving);
    const of = (l: ServerLine, node: string, a: QueryResult[]): LineGroups => ({ table: nativeMapFor(l), nodes: [node], groups: groupSeries(withRatioParts(nativeMapFor(l).kv, table.kv), a, kvItemOf, new CounterMemo()) });
    return { table, lines: [of('7.2', 'n1', answers('n1', 5, 50, 40, 10)), of('7.6.8', 'n2', answers('n2', 7, 70, 80, 20))] };
  };
  it('a 7.6.8 node serving: 100 × (1 + 2) / (5 + 10) = 20 %, from get_misses / cmd_get of both nodes', () => {
    const { lines, table } = linesServedBy('7.6.8');
    expect(mergedValue('kv', 'ep_cache_miss_rate', lines, 'b', undefined, table)).toBeCloseTo(20, 9);
  });
  it('a 7.2 node serving: 100 × (0.5 + 0.7) / (5 + 7) = 10 %, from ep_bg_fetched / cmd_lookup of both nodes', () => {
    const { lines, table } = linesServedBy('7.2');
    expect(mergedValue('kv', 'ep_cache_miss_rate', lines, 'b', undefined, table)).toBeCloseTo(10, 9);
  });
  it('a ratio with one formula on every line is the same whichever node serves: hit_ratio 100 × (4 + 8) / (5 + 10) = 80 %', () => {
    for (const serving of ['7.2', '7.6.8'] as const) {
      const { lines, table } = linesServedBy(serving);
      expect(mergedValue('kv', 'hit_ratio', lines, 'b', undefined, table)).toBeCloseTo(80, 9);
    }
  });
  it('the serving node is the bucket list\'s thisNode, by its version\'s line', () => {
    expect(servingLineOf([{ hostname: 'a', version: '7.2.4' }, { hostname: 'b', version: '7.6.8-6615-enterprise', thisNode: true }])).toBe('7.6.8');
    expect(servingLineOf([{ hostname: 'a', version: '7.2.4', thisNode: true }, { hostname: 'b', version: '7.6.8' }])).toBe('7.2');
    expect(servingLineOf([{ hostname: 'a', version: '7.2.4' }])).toBeUndefined();
  });
});

describe('mergedValue: couch_docs_fragmentation across 7.1 and 7.2', () => {
  // n1 (7.1): data 60, file 100 → no rule; n2 (7.2): file 1,000 under 128 KiB × 512 → data = file; history 0.
  const lines = [
    line('7.1', ['n1'], [q('kv_ep_db_data_size_bytes', [lvl('n1', 60)]), q('kv_ep_db_file_size_bytes', [lvl('n1', 100)])]),
    line('7.2', ['n2'], [
      q('kv_ep_db_data_size_bytes', [lvl('n2', 300)]),
      q('kv_ep_db_file_size_bytes', [lvl('n2', 1000)]),
      q('kv_ep_vb_total', [lvl('n2', 512)]),
      q('kv_ep_db_history_file_size_bytes', [lvl('n2', 0)]),
    ]),
  ];
  it('data = 60 + 1,000, disk = 100 + (1,000 − 0): round(100 × (1,100 − 1,060) / 1,100) = round(3.64) = 4', () => {
    expect(mergedValue('kv', 'couch_docs_data_size', lines, 'b', undefined)).toBe(1060);
    expect(mergedValue('kv', 'couch_docs_fragmentation', lines, 'b', undefined)).toBe(4);
  });
});

describe('bucket_stats on a cluster mid-upgrade: one batch for every line, each line\'s rows reading its own nodes', () => {
  const list = [{ name: 'b', bucketType: 'membase', nodes: [
    { hostname: 'n1:8091', clusterCompatibility: 0x70002, version: '7.2.0-5325-enterprise', clusterMembership: 'active' },
    { hostname: 'n2:8091', clusterCompatibility: 0x70002, version: '7.6.8-6615-enterprise', clusterMembership: 'active' },
  ] }];
  it('asks each name once, of both nodes, in as many requests as one line\'s table and one more at most; 7.2\'s names count n1 only, 7.6.8\'s n2 only', async () => {
    const asked: Array<{ name: string; nodes: unknown }> = [];
    let requests = 0;
    const client = fakeClient({
      '/pools/default/buckets': list,
      '/pools/default/stats/range': (_p: unknown, o: { json?: unknown }) => {
        requests++;
        const qs = o.json as Array<{ metric: Array<{ value: string }>; nodes?: string[] }>;
        return qs.map((x) => {
          const name = x.metric[0]?.value as string;
          asked.push({ name, nodes: x.nodes });
          const nodes = x.nodes ?? ['n1:8091', 'n2:8091'];
          // n2 (7.6.8) serves the old hashtable series too: the 7.2 row must not count it.
          if (name === 'kv_memory_used_bytes') return { data: nodes.map((node) => ({ metric: { nodes: [node], bucket: 'b', for: 'hashtable' }, values: [[1_700_000_000, node === 'n1:8091' ? '700' : '999']] })), errors: [] };
          if (name === 'kv_ep_key_value_size_bytes') return { data: nodes.filter((n) => n === 'n2:8091').map((node) => ({ metric: { nodes: [node], bucket: 'b' }, values: [[1_700_000_000, '900']] })), errors: [] };
          return { data: [], errors: [] };
        });
      },
    });
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' } });
    expect(r.ok).toBe(true);
    const of = (name: string) => asked.filter((a) => a.name === name).map((a) => a.nodes);
    expect(of('kv_memory_used_bytes')).toEqual([['n1:8091', 'n2:8091']]);
    expect(of('kv_ep_key_value_size_bytes')).toEqual([['n1:8091', 'n2:8091']]);
    expect(of('kv_curr_items')).toEqual([['n1:8091', 'n2:8091']]);
    // One line's table takes 8 requests; both lines' names together one more at most (today's 16 was 8 per line).
    expect(requests).toBeLessThanOrEqual(9);
    // n1's 700 by 7.2's name, n2's 900 by 7.6.8's (n2's hashtable 999 is not 7.6.8's name for it).
    expect(r.set.get('couchbase_bucket_ep_kv_size_bytes', { bucket: 'b' })).toBe(1600);
  });
  it('a two-version cluster polls bucket_stats and xdcr in 10 + 2 statistics requests at most (not 8 + 2 per version)', async () => {
    let requests = 0;
    const client = fakeClient({
      '/pools/default/buckets': list,
      '/pools/default/tasks': [{ type: 'xdcr', id: 'uuid1/b/dst', source: 'b', target: '/remoteClusters/uuid1/buckets/dst', status: 'running', errors: [] }],
      '/pools/default/remoteClusters': [{ name: 'remote', uuid: 'uuid1', hostname: 'r:8091', deleted: false }],
      '/pools/default/stats/range': (_p: unknown, o: { json?: unknown }) => {
        requests++;
        return (o.json as unknown[]).map(() => ({ data: [], errors: [] }));
      },
    });
    expect((await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' } })).ok).toBe(true);
    expect((await collect(xdcrCollector, client, { cluster: { statsSource: 'range' } })).ok).toBe(true);
    expect(requests).toBeLessThanOrEqual(12);
  });
  it('7.6.2 and 7.6.8 with the 7.6.8 node serving: ep_cache_miss_rate is get_misses / cmd_get of both nodes, 100 × (1 + 3) / (5 + 10) = 26.7 %', async () => {
    const mixed = [{ name: 'b', bucketType: 'membase', nodes: [
      { hostname: 'n1:8091', clusterCompatibility: 0x70006, version: '7.6.2-3721-enterprise', clusterMembership: 'active' },
      { hostname: 'n2:8091', clusterCompatibility: 0x70006, version: '7.6.8-6615-enterprise', clusterMembership: 'active', thisNode: true },
    ] }];
    // Per node over 10 s: n1 bg_fetched 5, cmd_lookup 50, gets 50 (10 misses); n2 bg_fetched 7, cmd_lookup 70, gets 100 (30 misses).
    const counts: Record<string, Record<string, number>> = {
      'n1:8091': { kv_ep_bg_fetched: 5, kv_cmd_lookup: 50, hit: 40, miss: 10 },
      'n2:8091': { kv_ep_bg_fetched: 7, kv_cmd_lookup: 70, hit: 70, miss: 30 },
    };
    const series = (node: string, v: number, labels: Record<string, string> = {}) => ({ metric: { nodes: [node], bucket: 'b', ...labels }, values: [[1_700_000_000, '0'], [1_700_000_010, String(v)]] });
    const client = fakeClient({
      '/pools/default/buckets': mixed,
      '/pools/default/stats/range': (_p: unknown, o: { json?: unknown }) =>
        (o.json as Array<{ metric: Array<{ value: string }>; nodes?: string[] }>).map((x) => {
          const name = x.metric[0]?.value as string;
          const data = (x.nodes ?? Object.keys(counts)).flatMap((node) => {
            const c = counts[node] as Record<string, number>;
            if (name === 'kv_ops') return [series(node, c.hit as number, { op: 'get', result: 'hit' }), series(node, c.miss as number, { op: 'get', result: 'miss' })];
            return name in c ? [series(node, c[name] as number)] : [];
          });
          return { data, errors: [] };
        }),
    });
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' } });
    expect(r.ok).toBe(true);
    expect(r.set.get('couchbase_bucket_ep_cache_miss_ratio', { bucket: 'b' })).toBeCloseTo(4 / 15, 9);
  });
  it('a single-version cluster: one fetch, every query asking the active members (its one node), 8 requests', async () => {
    const one = [{ name: 'b', bucketType: 'membase', nodes: [{ hostname: 'n1:8091', clusterCompatibility: 0x70006, version: '7.6.2-3721-enterprise' }] }];
    let requests = 0;
    const withNodes: unknown[] = [];
    const client = fakeClient({
      '/pools/default/buckets': one,
      '/pools/default/stats/range': (_p: unknown, o: { json?: unknown }) => {
        requests++;
        const qs = o.json as Array<{ nodes?: unknown }>;
        for (const x of qs) if (x.nodes !== undefined) withNodes.push(x.nodes);
        return qs.map(() => ({ data: [], errors: [] }));
      },
    });
    await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' } });
    expect(requests).toBe(8);
    // Every query names the bucket's one active node (the range API then asks no other: menelaus_web_stats `nodes`).
    expect(withNodes.length).toBeGreaterThan(0);
    expect(new Set(withNodes.map((x) => JSON.stringify(x)))).toEqual(new Set(['["n1:8091"]']));
  });
});
