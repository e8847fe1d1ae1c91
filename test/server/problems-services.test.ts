/** The landing page's "Needs a look" for the index and eventing state: hand-built samples. */
import { describe, expect, it } from 'vitest';
import { SampleSet, defineFamily } from '../../src/metrics/family.js';
import { findProblems } from '../../src/metrics/problems.js';

const state = defineFamily('t', 'couchbase_index_state', 'gauge', 'h', ['bucket', 'scope', 'collection', 'index', 'replica', 'state']);
const fn = defineFamily('t', 'couchbase_eventing_function_status', 'gauge', 'h', ['function', 'function_bucket', 'function_scope', 'status']);

describe('findProblems for index and eventing state', () => {
  it('lists an index replica in error (critical) and a paused function (warning), nothing for the others', () => {
    const set = new SampleSet();
    const ix = { bucket: 'b', scope: '_default', collection: '_default', replica: '0' };
    set.add(state, { ...ix, index: 'broken', state: 'error' }, 1);
    set.add(state, { ...ix, index: 'broken', state: 'ready' }, 0);
    set.add(state, { ...ix, index: 'fine', state: 'error' }, 0);
    set.add(state, { ...ix, index: 'fine', state: 'ready' }, 1);
    set.add(fn, { function: 'audit_log', function_bucket: '*', function_scope: '*', status: 'paused' }, 1);
    set.add(fn, { function: 'enrich', function_bucket: 'b', function_scope: '_default', status: 'paused' }, 0);
    set.add(fn, { function: 'enrich', function_bucket: 'b', function_scope: '_default', status: 'deployed' }, 1);
    const problems = findProblems([{ base: { couchbase_cluster: 'c1' }, set }], Date.UTC(2026, 0, 1));
    expect(problems.map((p) => [p.severity, p.text, p.alert])).toEqual([
      ['critical', 'index broken (replica 0) on b._default._default is in error', 'CouchbaseIndexError'],
      ['warning', 'eventing function audit_log is paused (its mutations wait)', 'CouchbaseEventingFunctionStopped'],
    ]);
  });

  it('lists a replica building or warming up (info, the early sign of CouchbaseIndexNotReady), not one created on purpose', () => {
    const set = new SampleSet();
    const ix = { bucket: 'b', scope: 's', collection: 'c', replica: '1' };
    set.add(state, { ...ix, index: 'big', state: 'building' }, 1);
    set.add(state, { ...ix, index: 'big', state: 'ready' }, 0);
    set.add(state, { ...ix, index: 'cold', state: 'warmup' }, 1);
    set.add(state, { ...ix, index: 'later', state: 'created' }, 1);
    const problems = findProblems([{ base: { couchbase_cluster: 'c1' }, set }], Date.UTC(2026, 0, 1));
    expect(problems.map((p) => [p.severity, p.text, p.alert])).toEqual([
      ['info', 'index big (replica 1) on b.s.c is building', 'CouchbaseIndexNotReady'],
      ['info', 'index cold (replica 1) on b.s.c is warmup, not ready', 'CouchbaseIndexNotReady'],
    ]);
  });
});

describe('findProblems for the service statistics and the data service (the alerts\' default thresholds)', () => {
  const g = (name: string, labels: string[]) => defineFamily('t', name, 'gauge', 'h', labels);
  const c = (name: string, labels: string[]) => defineFamily('t', name, 'counter', 'h', labels);
  const at = (set: SampleSet) => findProblems([{ base: { couchbase_cluster: 'c1' }, set }], Date.UTC(2026, 0, 1)).map((p) => [p.severity, p.text, p.alert]);

  it('query: errors over 5% and requests over 5 s over 10% of requests, more than 10 queued; not at or under them', () => {
    const set = new SampleSet();
    const req = g('couchbase_query_requests_per_second', ['node']);
    const err = g('couchbase_query_errors_per_second', ['node']);
    const slow = g('couchbase_query_slow_requests_per_second', ['node', 'over']);
    const queued = g('couchbase_query_queued_requests', ['node']);
    set.add(req, { node: 'q1' }, 200);
    set.add(err, { node: 'q1' }, 12); // 6%
    set.add(slow, { node: 'q1', over: '5' }, 80); // 40%
    set.add(slow, { node: 'q1', over: '1' }, 150); // not the 5 s band
    set.add(queued, { node: 'q1' }, 45);
    set.add(req, { node: 'q2' }, 100);
    set.add(err, { node: 'q2' }, 5); // exactly 5%: not over
    set.add(slow, { node: 'q2', over: '5' }, 10); // exactly 10%
    set.add(queued, { node: 'q2' }, 10);
    set.add(req, { node: 'q3' }, 0);
    set.add(err, { node: 'q3' }, 0); // no request: no share
    expect(at(set)).toEqual([
      ['warning', 'query node q1: 40% of requests take over 5 s', 'CouchbaseQuerySlowRequests'],
      ['warning', 'query node q1: 45 requests queued', 'CouchbaseQueryQueuedRequestsHigh'],
      ['warning', 'query node q1: 6% of requests fail', 'CouchbaseQueryErrorRateHigh'],
    ]);
  });

  it('index, Search and eventing: pending, residency of an index with items, memory, backlog, failures summed per function', () => {
    const set = new SampleSet();
    const ix = ['bucket', 'scope', 'collection', 'index', 'node'];
    const a = { bucket: 'b', scope: 's', collection: 'c', index: 'big', node: 'n1' };
    const empty = { ...a, index: 'empty' };
    set.add(g('couchbase_index_docs_pending', ix), a, 150_000);
    set.add(g('couchbase_index_items', ix), a, 10);
    set.add(g('couchbase_index_items', ix), empty, 0);
    set.add(g('couchbase_index_resident_ratio', ix), a, 0.05);
    set.add(g('couchbase_index_resident_ratio', ix), empty, 0);
    set.add(g('couchbase_index_node_ram_ratio', ['node']), { node: 'n1' }, 0.95);
    set.add(g('couchbase_index_node_ram_ratio', ['node']), { node: 'n2' }, 0.9);
    const fts = g('couchbase_search_index_pending_mutations', ['bucket', 'index', 'node']);
    set.add(fts, { bucket: 'b', index: 'hotels', node: 'n1' }, 600);
    set.add(fts, { bucket: 'b', index: 'hotels', node: 'n2' }, 500); // 1,100 over both nodes
    set.add(fts, { bucket: 'b', index: 'small', node: 'n1' }, 1000);
    set.add(g('couchbase_eventing_dcp_backlog', ['function']), { function: 'f1' }, 5000);
    set.add(c('couchbase_eventing_on_update_failures_total', ['function']), { function: 'f1' }, 2);
    set.add(c('couchbase_eventing_timeouts_total', ['function']), { function: 'f1' }, 1);
    set.add(c('couchbase_eventing_on_update_failures_total', ['function']), { function: 'f2' }, 0);
    expect(at(set)).toEqual([
      ['warning', 'eventing function f1: 3 failures and timeouts since it was deployed', 'CouchbaseEventingFailuresIncreasing'],
      ['warning', 'eventing function f1: 5000 mutations in its backlog', 'CouchbaseEventingBacklogGrowing'],
      ['warning', 'index big on b.s.c (node n1): 150000 mutations pending', 'CouchbaseIndexPendingMutationsHigh'],
      ['warning', 'index big on b.s.c (node n1): 5% resident in memory', 'CouchbaseIndexResidentRatioLow'],
      ['warning', 'index node n1 uses 95% of the Index memory quota', 'CouchbaseIndexMemoryNearQuota'],
      ['warning', 'search index hotels (bucket b): 1100 mutations pending', 'CouchbaseSearchIndexPendingMutationsGrowing'],
    ]);
  });

  it('data service: hard OOM and write failures (critical), temporary OOM, fragmentation of large files, cache misses under load, ejection at low residency', () => {
    const set = new SampleSet();
    const b = (bucket: string) => ({ bucket });
    set.add(c('couchbase_bucket_ep_oom_errors_total', ['bucket']), b('x'), 3);
    set.add(c('couchbase_bucket_ep_oom_errors_total', ['bucket']), b('y'), 0);
    set.add(c('couchbase_bucket_ep_data_write_failed_total', ['bucket']), b('x'), 1);
    set.add(c('couchbase_bucket_ep_item_commit_failed_total', ['bucket']), b('x'), 0);
    set.add(g('couchbase_bucket_ep_tmp_oom_errors_per_second', ['bucket']), b('x'), 2);
    const frag = g('couchbase_bucket_couch_docs_fragmentation_ratio', ['bucket']);
    const disk = g('couchbase_bucket_couch_docs_actual_disk_size_bytes', ['bucket']);
    set.add(frag, b('x'), 0.7);
    set.add(disk, b('x'), 2 * 1024 ** 3);
    set.add(frag, b('y'), 0.9);
    set.add(disk, b('y'), 1024 ** 3); // not larger than 1 GiB
    const miss = g('couchbase_bucket_ep_cache_miss_ratio', ['bucket']);
    const gets = g('couchbase_bucket_cmd_get_per_second', ['bucket']);
    set.add(miss, b('x'), 0.2);
    set.add(gets, b('x'), 60);
    set.add(miss, b('y'), 0.5);
    set.add(gets, b('y'), 50); // not more than 50 gets/s
    const res = g('couchbase_bucket_vb_active_resident_items_ratio', ['bucket']);
    const ej = g('couchbase_bucket_ep_num_value_ejects_per_second', ['bucket']);
    set.add(res, b('x'), 0.2);
    set.add(ej, b('x'), 5);
    set.add(res, b('y'), 0.1);
    set.add(ej, b('y'), 0); // not ejecting
    expect(at(set)).toEqual([
      ['critical', 'bucket x: 1 data write failures since the node started', 'CouchbaseBucketDiskWriteFailures'],
      ['critical', 'bucket x: 3 hard out-of-memory errors since the node started', 'CouchbaseBucketHardOomErrors'],
      ['warning', 'bucket x: 2 temporary out-of-memory errors per second', 'CouchbaseBucketTemporaryOomErrors'],
      ['warning', 'bucket x: 20% of gets miss the cache', 'CouchbaseBucketCacheMissRatioHigh'],
      ['warning', 'bucket x: data files 70% fragmented', 'CouchbaseBucketFragmentationHigh'],
      ['warning', 'bucket x: ejecting values with 20% of active items resident', 'CouchbaseBucketEvictingWithLowResidency'],
    ]);
  });
});
