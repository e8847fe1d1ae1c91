/**
 * How each XDCR remote cluster reference is secured (`couchbase_xdcr_remote_cluster_secure_type`). Expected
 * values are read by hand from the payloads: docs-server's 7.1+ example has `"secureType": "none"` on both
 * references; the 4.1-7.0 example has neither secureType nor demandEncryption. The older fields
 * (`demandEncryption`, `encryptionType`) are those of docs-server's rest-xdcr-create-ref / data-encrypt pages.
 */
import { describe, expect, it } from 'vitest';
import { mapRemoteClusters } from '../../src/collectors/xdcr.js';
import { SampleSet } from '../../src/metrics/family.js';
import { loadFixture } from '../helpers/collect.js';

const FAMILY = 'couchbase_xdcr_remote_cluster_secure_type';

function secureTypes(refs: unknown[]): Record<string, Record<string, number>> {
  const set = new SampleSet();
  mapRemoteClusters(refs, set, () => undefined);
  const out: Record<string, Record<string, number>> = {};
  for (const s of set.all(FAMILY)) (out[s.labels.target_cluster_name as string] ??= {})[s.labels.secure_type as string] = s.value;
  return out;
}

describe('remote cluster secure type', () => {
  it('7.1+ docs example: both references are secureType none', () => {
    expect(secureTypes(loadFixture<unknown[]>('pools-default-remoteClusters/docs-server-7.1plus-2refs.json'))).toEqual({
      SecondTarget: { none: 1, half: 0, full: 0 },
      FirstTarget: { none: 1, half: 0, full: 0 },
    });
  });

  it('an answer without secureType or demandEncryption (4.1-7.0 docs example) exports nothing, not a guess', () => {
    expect(secureTypes(loadFixture<unknown[]>('pools-default-remoteClusters/docs-server-4.1-7.0.json'))).toEqual({});
  });

  it('half and full; the older demandEncryption/encryptionType; an unknown value under its own name', () => {
    const base = { uuid: '9eee38236f3bf28406920213d93981a3', hostname: '10.4.2.6:8091', deleted: false };
    expect(
      secureTypes([
        { ...base, name: 'a', secureType: 'half' },
        { ...base, name: 'b', uuid: 'b1', secureType: 'full' },
        { ...base, name: 'c', uuid: 'c1', demandEncryption: false },
        { ...base, name: 'd', uuid: 'd1', demandEncryption: true, encryptionType: 'half' },
        { ...base, name: 'e', uuid: 'e1', demandEncryption: 1 },
        { ...base, name: 'f', uuid: 'f1', secureType: 'quantum' },
      ]),
    ).toEqual({
      a: { none: 0, half: 1, full: 0 },
      b: { none: 0, half: 0, full: 1 },
      c: { none: 1, half: 0, full: 0 },
      d: { none: 0, half: 1, full: 0 },
      e: { none: 0, half: 0, full: 1 },
      f: { none: 0, half: 0, full: 0, quantum: 1 },
    });
  });
});
