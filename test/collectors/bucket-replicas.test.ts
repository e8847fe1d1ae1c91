/**
 * Configured versus available replicas per bucket. Expectations read by hand from the captured bucket lists:
 * - appd 4.6.3 (one node, serverList of 1): beer-sample and default have replicaNumber 1 and every one of the
 *   1,024 vBucketMap rows is [0,-1] — no vBucket has its replica;
 * - goxdcr 5.5.1 (three nodes): default, replicaNumber 1, every row has a replica server (e.g. [0,1]);
 * - Membase 1.6 docs example: `default` has a 6-row map of [0,-1]; `test-application` (memcached) has no map;
 * - netdata 6.6.0 captures carry replicaNumber but no vBucketServerMap: nothing available is claimed.
 */
import { describe, expect, it } from 'vitest';
import { mapBuckets } from '../../src/collectors/buckets.js';
import { parseBucketList, replicaCopiesOf } from '../../src/couchbase/buckets.js';
import { SampleSet } from '../../src/metrics/family.js';
import { loadFixture } from '../helpers/collect.js';

function replicas(file: string): Record<string, { configured?: number; available?: number; missing?: number }> {
  const set = new SampleSet();
  mapBuckets(parseBucketList(loadFixture<unknown[]>(`pools-default-buckets/${file}`)).buckets, set);
  const out: Record<string, { configured?: number; available?: number; missing?: number }> = {};
  const put = (name: string, key: 'configured' | 'available' | 'missing'): void => {
    for (const s of set.all(name)) (out[s.labels.bucket as string] ??= {})[key] = s.value;
  };
  put('couchbase_bucket_replicas', 'configured');
  put('couchbase_bucket_replicas_available', 'available');
  put('couchbase_bucket_vbuckets_missing_replicas', 'missing');
  return out;
}

describe('bucket replicas: configured versus available', () => {
  it('one node with a replica configured: none available, all 1,024 vBuckets without one (appd 4.6.3)', () => {
    expect(replicas('appd-4.6.3-2buckets.json')).toEqual({
      'beer-sample': { configured: 1, available: 0, missing: 1024 },
      default: { configured: 1, available: 0, missing: 1024 },
    });
  });

  it('three nodes, one replica: available as configured (goxdcr 5.5.1)', () => {
    expect(replicas('goxdcr-5.5.1-3511-k8s.json')).toEqual({ default: { configured: 1, available: 1, missing: 0 } });
  });

  it('Membase 1.6: the couchbase bucket has no replica placed; the memcached bucket has no map', () => {
    expect(replicas('docs-server-1.6.0.json')).toEqual({
      default: { configured: 1, available: 0, missing: 6 },
      'test-application': { configured: 0 },
    });
  });

  it('no vBucketServerMap in the answer: the configured number only, never a guessed availability', () => {
    const r = replicas('netdata-go.d-6.6.0.json');
    expect(Object.keys(r).length).toBeGreaterThan(0);
    for (const v of Object.values(r)) expect(v).toEqual({ configured: 1 });
  });

  it('counts per row: the fewest copies, rows short of replicaNumber; a malformed map is no map', () => {
    expect(replicaCopiesOf({ vBucketMap: [[0, 1, 2], [1, 2, -1], [2, -1, -1], [0, 2, 1]] }, 2)).toEqual({ min: 0, max: 2, vbuckets: 4, missing: 2 });
    expect(replicaCopiesOf({ vBucketMap: [[0], [1]] }, 0)).toEqual({ min: 0, max: 0, vbuckets: 2, missing: 0 });
    expect(replicaCopiesOf({ vBucketMap: [[0, 1]] }, undefined)).toEqual({ min: 1, max: 1, vbuckets: 1, missing: undefined });
    expect(replicaCopiesOf({ vBucketMap: [] }, 1)).toBeUndefined();
    expect(replicaCopiesOf({ vBucketMap: [[0, 'x']] }, 1)).toBeUndefined();
    expect(replicaCopiesOf({ vBucketMap: [5] }, 1)).toBeUndefined();
    expect(replicaCopiesOf(undefined, 1)).toBeUndefined();
  });
});
