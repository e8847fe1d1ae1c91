import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');
const read = (rel: string): string => readFileSync(join(SRC, rel), 'utf8');

describe('layers of the sampled-stats code', () => {
  it('couchbase/buckets.ts and couchbase/xdcr.ts take a client, never the collectors\' context', () => {
    for (const f of ['couchbase/buckets.ts', 'couchbase/xdcr.ts']) expect(read(f), f).not.toMatch(/from '\.\.\/collectors\//);
  });

  it('the sample reduction and the per-item helpers exist once', () => {
    for (const f of ['collectors/bucket_stats.ts', 'collectors/xdcr.ts']) {
      const text = read(f);
      expect(text, f).not.toMatch(/function (forgetGone|settleAll|reduceSamples|reduceXdcrSamples|mean|latest)\b/);
    }
    expect(read('couchbase/buckets.ts')).not.toContain('BUCKET_ROUTE =');
  });
});
