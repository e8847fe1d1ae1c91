/**
 * docs/metrics.md, "Envelope and range differences": what still differs between `stats_source: envelope` and
 * `range` on the simulator, which follows ns_server's own rules. The same list, with the profiles and
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
    'values (rates within the window difference), a node down included. The per-bucket `replication_changes_left`',
    'and `replication_docs_rep_queue` are, as ns_server answers them, the sums of `xdcr_changes_left_total` and',
    '`xdcr_docs_rep_queue_total` over the bucket\'s outgoing replications (absent for a bucket with none, and',
    '`replication_docs_rep_queue` absent on 8.0, whose XDCR no longer exports the series). Host stats under buckets',
    '(`cpu_*_rate`, `cpu_cores_available`, `mem_*`, `swap_*`, `allocstall`, `rest_requests`, `hibernated_*`) are,',
    'as ns_server merges them, summed over every active node of any service (the max for `cpu_utilization_rate`),',
    'a node that runs no data service included; the range source reads that node list from `/pools/default`. In a',
    'cluster mid-upgrade the range source still reads host stats from the data nodes only.',
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
