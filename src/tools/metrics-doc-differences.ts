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
    'slow (test/differential/envelope-range.test.ts), these differences remain in this build:',
    '',
    '| families | where | why |',
    '|---|---|---|',
    '| every `couchbase_bucket_*` | a node down | the range source drops a bucket-wide value when any node answers with an error; the envelope sums the nodes that answered |',
    '| `cpu_*_ratio`, `cpu_cores_available`, `mem_*_bytes`, `swap_*_bytes` | every line | the range source takes the mean over the nodes that answer (a failed-over node\'s host included); the envelope sums the active nodes, and takes the max for `cpu_utilization_rate` |',
    '| `ep_cache_miss_ratio` | every line | the range source divides background fetches by gets; the envelope by `cmd_lookup` on 7.0–7.6.7 and `get_misses` by `cmd_get` from 7.6.8 |',
    '| `couch_docs_data_size_bytes` | 7.2 and later | the envelope reports a node\'s file size while its file is under 128 KiB × its vBuckets; the range source reports the data size |',
    '| `ep_kv_size_bytes` | 7.0–7.2 | absent from the range source: those lines name it `kv_memory_used_bytes{for="hashtable"}` |',
    '| sync writes, HLC drift and ahead exceptions, both fragmentations, `couch_total_disk_size`, `couch_views_*`, `vb_avg_{replica,pending,total}_queue_age`, `ep_dcp_other_*`, `ep_dcp_views_indexes_*`, DCP producer counts and backlogs, `hibernated_*`, `rest_requests`, `vb_*_itm_memory` | every line | envelope only: the range source does not map them yet |',
    '| TAP, pre-7.0 per-bucket XDCR (`replication_*`), spatial views, `evictions`, `odp_report_failed`, `ep_max_data_size`, `cpu_{idle,local}_seconds`, per-state vBucket stats with no native series | every line | envelope only in the simulator; a real 7.x envelope has no native source for most of them |',
    '',
    'XDCR families agree on every line and case, except `docs_rep_queue` (no native series on 8.0, absent from both)',
    'and `meta_latency_wt` (no native series on 7.x, absent from both).',
    '',
  ];
}
