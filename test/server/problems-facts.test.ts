/**
 * "Needs a look" for the facts of issue 24: a remote cluster reference secured none or half, and a bucket with
 * fewer replicas available than configured. Hand-built samples.
 */
import { describe, expect, it } from 'vitest';
import { SampleSet, defineFamily } from '../../src/metrics/family.js';
import { findProblems } from '../../src/metrics/problems.js';

const secure = defineFamily('t', 'couchbase_xdcr_remote_cluster_secure_type', 'gauge', 'h', ['target_cluster_name', 'target_cluster_uuid', 'secure_type']);
const configured = defineFamily('t', 'couchbase_bucket_replicas', 'gauge', 'h', ['bucket'], 'count');
const available = defineFamily('t', 'couchbase_bucket_replicas_available', 'gauge', 'h', ['bucket'], 'count');

describe('findProblems: XDCR security and replicas', () => {
  const set = new SampleSet();
  for (const [name, type] of [['dr-east', 'none'], ['half-dc', 'half'], ['west', 'full']] as const)
    for (const t of ['none', 'half', 'full']) set.add(secure, { target_cluster_name: name, target_cluster_uuid: `u-${name}`, secure_type: t }, t === type ? 1 : 0);
  set.add(configured, { bucket: 'orders' }, 1);
  set.add(available, { bucket: 'orders' }, 0);
  set.add(configured, { bucket: 'travel' }, 2);
  set.add(available, { bucket: 'travel' }, 2);
  set.add(configured, { bucket: 'nomap' }, 1);
  const texts = findProblems([{ base: { couchbase_cluster: 'c1' }, set }], Date.now()).map((p) => `${p.severity} ${p.text}`);

  it('names the references secured none or half, not the full one', () => {
    expect(texts).toContain('info XDCR remote cluster dr-east is secured as none: replicated data crosses the network in clear');
    expect(texts).toContain('info XDCR remote cluster half-dc is secured as half: replicated data crosses the network in clear');
    expect(texts.join('\n')).not.toContain('west');
  });

  it('names the bucket short of replicas; not the one that has them, nor one with no map', () => {
    expect(texts).toContain('warning bucket orders has 0 of its 1 configured replica(s) on every vBucket');
    expect(texts.join('\n')).not.toContain('travel');
    expect(texts.join('\n')).not.toContain('nomap');
  });
});
