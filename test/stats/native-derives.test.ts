/**
 * The derivations the 7.x/8.x tables added (issue 37), on hand-made answers with values computed by hand from
 * ns_server's definitions (never from the table): couch_docs_data_size with the 7.2+ small-file rule, the
 * fragmentations (menelaus_stats Fragmentation: round((Disk − Data) / Disk × 100), the history file taken off the
 * disk from 7.2), ep_dcp_other_* (stat_names_mappings.erl: connection_type not_any of the named types; the `:total`
 * aggregate left out), ep_dcp_views+indexes_* (menelaus_stats ViewsIndexesStats: views + 2i + fts),
 * hibernated_requests (hibernates − unhibernates) and ep_cache_miss_rate by line.
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import { describe, expect, it } from 'vitest';
import { nativeMapFor } from '../../src/stats/native-map.js';
import type { NativeMapRow, ServerLine } from '../../src/stats/native-map.js';
import { groupSeries, kvItemOf, narrowing, parseQueryAnswer } from '../../src/stats/range.js';
import { rowValue } from '../../src/stats/row-values.js';

/** Bucket b: one series per node and label set, a level (two equal points) or a counter (0 then v, 10 s apart). */
const lvl = (node: string, v: number, labels: Record<string, string> = {}) => ({ metric: { nodes: [node], bucket: 'b', ...labels }, values: [[0, String(v)], [10, String(v)]] });
const ctr = (node: string, v: number, labels: Record<string, string> = {}) => ({ metric: { nodes: [node], bucket: 'b', ...labels }, values: [[0, '0'], [10, String(v)]] });
const host = (node: string, v: number) => ({ metric: { nodes: [node] }, values: [[0, String(v)], [10, String(v)]] });
const answer = (metric: string, data: unknown[]) => parseQueryAnswer(metric, { data, errors: [] });

function value(line: ServerLine, legacy: string, answers: ReturnType<typeof answer>[], node?: string): number | undefined {
  const t = nativeMapFor(line);
  const row = t.kvByLegacy.get(legacy) as NativeMapRow;
  expect(row, `${line} ${legacy}`).toBeDefined();
  return rowValue(row, groupSeries(t.kv, answers, kvItemOf, new CounterMemo()), 'b', node);
}

// n1: a small file (1 MB, under 128 KiB × 512 vBuckets = 64 MiB), data 0.4 MB; n2: 100 MB file, 60 MB data, 10 MB history.
const DOCS = [
  answer('kv_ep_db_data_size_bytes', [lvl('n1', 400_000), lvl('n2', 60_000_000)]),
  answer('kv_ep_db_file_size_bytes', [lvl('n1', 1_000_000), lvl('n2', 100_000_000)]),
  answer('kv_ep_vb_total', [lvl('n1', 512), lvl('n2', 512)]),
  answer('kv_ep_db_history_file_size_bytes', [lvl('n1', 0), lvl('n2', 10_000_000)]),
];

describe('couch_docs_data_size and couch_docs_fragmentation', () => {
  it('7.2+: a node whose file is under 128 KiB × its vBuckets reports its file size as data', () => {
    for (const line of ['7.2', '7.6', '7.6.8', '8.0'] as const) {
      // 1,000,000 (n1's file) + 60,000,000 (n2's data).
      expect(value(line, 'couch_docs_data_size', DOCS), line).toBe(61_000_000);
      expect(value(line, 'couch_docs_data_size', DOCS, 'n1'), line).toBe(1_000_000);
      expect(value(line, 'couch_docs_data_size', DOCS, 'n2'), line).toBe(60_000_000);
      // disk = (1,000,000 − 0) + (100,000,000 − 10,000,000) = 91,000,000; round(30,000,000 / 91,000,000 × 100) = 33.
      expect(value(line, 'couch_docs_fragmentation', DOCS), line).toBe(33);
      expect(value(line, 'couch_docs_fragmentation', DOCS, 'n1'), line).toBe(0);
      // round(30,000,000 / 90,000,000 × 100) = 33.
      expect(value(line, 'couch_docs_fragmentation', DOCS, 'n2'), line).toBe(33);
    }
  });
  it('7.0 and 7.1: the data size as served, the whole file as disk', () => {
    for (const line of ['7.0', '7.1'] as const) {
      expect(value(line, 'couch_docs_data_size', DOCS), line).toBe(60_400_000);
      // round((101,000,000 − 60,400,000) / 101,000,000 × 100) = round(40.198) = 40.
      expect(value(line, 'couch_docs_fragmentation', DOCS), line).toBe(40);
    }
  });
  it('an empty disk is 0 % fragmented; a node without its sizes adds nothing', () => {
    const empty = [answer('kv_ep_db_data_size_bytes', [lvl('n1', 0)]), answer('kv_ep_db_file_size_bytes', [lvl('n1', 0)])];
    expect(value('7.0', 'couch_docs_fragmentation', empty)).toBe(0);
    expect(value('7.0', 'couch_docs_fragmentation', [answer('kv_ep_db_data_size_bytes', [lvl('n1', 5)])])).toBeUndefined();
  });
  it('couch_views_fragmentation over the nodes\' sums (design documents summed)', () => {
    const views = [
      answer('couch_views_data_size', [lvl('n1', 20, { signature: 's1' }), lvl('n1', 10, { signature: 's2' }), lvl('n2', 10, { signature: 's1' })]),
      answer('couch_views_disk_size', [lvl('n1', 60, { signature: 's1' }), lvl('n1', 40, { signature: 's2' }), lvl('n2', 50, { signature: 's1' })]),
    ];
    // round((150 − 40) / 150 × 100) = round(73.33) = 73.
    expect(value('8.0', 'couch_views_fragmentation', views)).toBe(73);
    expect(value('8.0', 'couch_views_data_size', views)).toBe(40);
  });
});

describe('DCP groups', () => {
  const conns = [
    answer('kv_dcp_connection_count', [
      lvl('n1', 3, { connection_type: 'replication' }),
      lvl('n1', 4, { connection_type: 'secidx' }),
      lvl('n1', 1, { connection_type: 'fts' }),
      lvl('n1', 2, { connection_type: 'mapreduce_view' }),
      lvl('n1', 2, { connection_type: 'console' }),
      lvl('n2', 1, { connection_type: 'tooling' }),
      lvl('n1', 13, { connection_type: ':total' }),
    ]),
  ];
  it('ep_dcp_other_count: the connections of no named type, the :total aggregate left out', () => {
    expect(value('7.6', 'ep_dcp_other_count', conns)).toBe(3);
    expect(value('7.6', 'ep_dcp_other_count', conns, 'n2')).toBe(1);
  });
  it('ep_dcp_views+indexes_count: views + 2i + fts', () => {
    expect(value('7.6', 'ep_dcp_views+indexes_count', conns)).toBe(7);
  });
  it('the kv_dcp_* queries are not narrowed to the named types (the other connections must be in the answer)', () => {
    for (const line of ['7.0', '8.0'] as const) expect(narrowing(nativeMapFor(line).kv).get('kv_dcp_connection_count'), line).toBeUndefined();
  });
});

describe('host and cluster-manager stats', () => {
  it('hibernated_requests: hibernates − unhibernates, summed over the nodes', () => {
    const a = [answer('cm_request_hibernates_total', [host('n1', 100), host('n2', 50)]), answer('cm_request_unhibernates_total', [host('n1', 90), host('n2', 45)])];
    expect(value('8.0', 'hibernated_requests', a)).toBe(15);
    expect(value('8.0', 'hibernated_requests', a, 'n1')).toBe(10);
  });
});

describe('ep_cache_miss_rate by line', () => {
  const a = [
    answer('kv_ops', [ctr('n1', 80, { op: 'get', result: 'hit' }), ctr('n1', 20, { op: 'get', result: 'miss' })]),
    answer('kv_ep_bg_fetched', [ctr('n1', 5)]),
    answer('kv_cmd_lookup', [ctr('n1', 50)]),
  ];
  it('7.0–7.6.7: 100 × ep_bg_fetched / cmd_lookup', () => {
    for (const line of ['7.0', '7.1', '7.2', '7.6'] as const) expect(value(line, 'ep_cache_miss_rate', a), line).toBeCloseTo(10, 12);
  });
  it('7.6.8 and 8.0: 100 × get_misses / cmd_get', () => {
    for (const line of ['7.6.8', '8.0'] as const) expect(value(line, 'ep_cache_miss_rate', a), line).toBeCloseTo(20, 12);
  });
});

describe('ep_kv_size by line', () => {
  const a = [answer('kv_memory_used_bytes', [lvl('n1', 700, { for: 'hashtable' }), lvl('n1', 300, { for: 'blobs' })]), answer('kv_ep_key_value_size_bytes', [lvl('n1', 900)])];
  it('7.0–7.2: kv_memory_used_bytes{for="hashtable"}; 7.6+: kv_ep_key_value_size_bytes', () => {
    for (const line of ['7.0', '7.1', '7.2'] as const) expect(value(line, 'ep_kv_size', a), line).toBe(700);
    for (const line of ['7.6', '7.6.8', '8.0'] as const) expect(value(line, 'ep_kv_size', a), line).toBe(900);
  });
});
