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
