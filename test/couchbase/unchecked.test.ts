import { describe, expect, it } from 'vitest';
import { statsEnvelopeSchema } from '../../src/couchbase/buckets.js';
import { xdcrStatEnvelopeSchema } from '../../src/couchbase/xdcr.js';
import { uncheckedArray, uncheckedRecord } from '../../src/couchbase/unchecked.js';

describe('unchecked containers', () => {
  it('pass the very array and object through, entries untouched', () => {
    const arr = [1, null, 'x', { a: 1 }];
    const obj = { a: [1, 2], b: null };
    expect(uncheckedArray().parse(arr)).toBe(arr);
    expect(uncheckedRecord().parse(obj)).toBe(obj);
  });

  it('refuse what is not an array or a JSON object', () => {
    for (const v of [{}, 'a', 1, null, undefined]) expect(uncheckedArray().safeParse(v).success).toBe(false);
    for (const v of [[], 'a', 1, null, undefined]) expect(uncheckedRecord().safeParse(v).success).toBe(false);
  });

  it('leave the sample arrays of a stats envelope as parsed (no copy)', () => {
    const samples = { timestamp: [1000, 2000], ops: [1, 2] };
    const env = statsEnvelopeSchema.parse({ op: { samples, lastTStamp: 2000 } });
    expect(env.op.samples).toBe(samples);
    const nodeStats = { 'n1:8091': [3, 4] };
    const ts = [1000, 2000];
    const x = xdcrStatEnvelopeSchema.parse({ timestamp: ts, nodeStats });
    expect(x.timestamp).toBe(ts);
    expect(x.nodeStats).toBe(nodeStats);
    expect(statsEnvelopeSchema.safeParse({ op: { samples: [] } }).success).toBe(false);
    expect(xdcrStatEnvelopeSchema.safeParse({ timestamp: {} }).success).toBe(false);
  });
});
