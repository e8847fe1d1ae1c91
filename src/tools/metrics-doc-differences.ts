/**
 * docs/metrics.md, "Envelope and range differences": what still differs between `stats_source: envelope` and
 * `range` on the simulator, which follows ns_server's own rules (issue 37). The same list, with the profiles and
 * cases where each difference happens, is test/differential/known-differences.ts: the differential test fails
 * when a difference is not listed there or no longer happens, so both shrink together as the range path is fixed.
 */
export function envelopeRangeDifferences(): string[] {
  return [
    '## Envelope and range differences',
    '',
    'On 7.0 and later the same family can come from the envelopes or from the range API. Couchbase builds its',
    'envelope from the nodes that answer: a bucket\'s stats summed over its live servers, host stats summed over the',
    'active nodes (the max for `cpu_utilization_rate`), ratios computed after the merge. A bucket-wide value read',
    'while a node is down is therefore a **partial sum**, exactly what Couchbase\'s own UI shows at that moment.',
    'Compared on every server line (7.0, 7.2, 7.6.2, 7.6.8, 8.0), healthy and with one node down, failed over or',
    'slow (test/differential/envelope-range.test.ts), every family both sources give has the same label sets and',
    'values (rates within the window difference), a node down included. What remains is families the envelope has',
    'and the range source does not:',
    '',
    '| families | where | why |',
    '|---|---|---|',
    '| TAP, pre-7.0 per-bucket XDCR (`replication_*`), spatial views, `evictions`, `odp_report_failed`, `ep_max_data_size`, `cpu_{idle,local}_seconds`, per-state vBucket stats with no native series | every line | envelope only in the simulator; a real 7.x envelope fills them from no native metric |',
    '| `ep_dcp_*_total_backlog_size` | every line | ns_server asks `kv_dcp_total_backlog_size`, which kv_engine never defines: Couchbase\'s own 7.0+ envelope answers nothing for it |',
    '| `ep_dcp_*_producers`, `vb_*_itm_memory_bytes` | 7.6 and later | their native metrics exist on 7.0–7.2 only (read there by the range source) |',
    '| `couch_views_{data_size,disk_size}_bytes`, `couch_views_fragmentation_ratio`, `couch_views_ops_per_second` | 8.0 | the 8.0 metadata lists `couch_views_actual_disk_size` only |',
    '| `hibernated_*`, `vb_avg_{replica,pending}_queue_age_seconds` | every line | native series the simulator does not model yet (mapped in the range source) |',
    '',
    'XDCR families agree on every line and case, except `docs_rep_queue` (no native series on 8.0, absent from both)',
    'and `meta_latency_wt` (no native series on 7.x, absent from both).',
    '',
    'A DCP connection type has statistics only while the bucket has connections of it: kv_engine builds its per-type',
    'aggregates from the connections it finds (ep_engine.cc, doConnAggStats), so on 7.0 and later a bucket without,',
    'say, eventing functions or analytics links has no `couchbase_bucket_ep_dcp_eventing_*` or `_cbas_*` series at',
    'all, from either source, rather than zeros; `ep_dcp_views+indexes_*` sums the views, index and search types',
    'present. Before 7.0 ns_server\'s own collector reported every type.',
    '',
    'On 7.2 and later `couch_docs_data_size` follows ns_server\'s small-file rule: while a node\'s data file is smaller',
    'than 128 KiB (the compaction setting `min_file_size`, at its default) times the vBuckets the node holds, the file',
    'size is reported as the data size. ns_server counts the node\'s active and replica vBuckets in the bucket\'s map; the',
    'range source reads `kv_ep_vb_total`, which also counts pending vBuckets while a rebalance moves them, and assumes',
    'the default `min_file_size`. The two differ only for a node with a small file during a rebalance or a cluster',
    'with a changed `min_file_size`.',
    '',
  ];
}
